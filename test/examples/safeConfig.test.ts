import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ExampleFixture, exampleFixture } from "./harness";

const TRANSPILE_ONLY = { PULUMI_NODEJS_TRANSPILE_ONLY: "true" };

/** A documented config command, run with the user's own CLI in the example folder. */
async function pulumiConfig(fixture: ExampleFixture, ...args: string[]): Promise<void> {
  await promisify(execFile)(
    path.join(inject("pulumiBinDir"), "pulumi"),
    ["config", ...args, "--stack", fixture.stackName],
    {
      cwd: fixture.dir,
      env: { ...process.env, ...fixture.envVars },
    },
  );
}

type Addresses = Record<string, { ip: string; lastReplacedIp?: string }>;

let fixture: ExampleFixture | undefined;
afterEach(async () => {
  // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
  await fixture?.cleanup();
  fixture = undefined;
});

describe("example config edits are safe by construction", () => {
  it("gitops: a --path edit of one user on the default team changes that user alone", async () => {
    fixture = await exampleFixture("gitops", {}, TRANSPILE_ONLY);
    await fixture.stack.up();
    await pulumiConfig(fixture, "set", "--path", "users.monitor.reenable", "2025-07-01");
    const preview = await fixture.stack.preview({ diff: true });
    expect(preview.changeSummary).toEqual({ same: 3, update: 1 });
    expect(preview.stdout).toContain("reenableTrigger");
    await fixture.stack.up();

    await pulumiConfig(fixture, "set", "--path", "users.crawler.remove", "true");
    expect((await fixture.stack.preview()).changeSummary).toEqual({ same: 3, delete: 1 });
  });

  it("ip-hygiene: --path edits of one allocation keep the others; a wrong or removed retire replaces nothing", async () => {
    fixture = await exampleFixture("ip-hygiene", {}, TRANSPILE_ONLY);
    const { stack } = fixture;
    const addresses = (await stack.up()).outputs.addresses?.value as Addresses;
    const usIp = addresses["us-new-york"]?.ip as string;
    const deIp = addresses["de-frankfurt"]?.ip as string;

    // Names an address allocation [1] never held: nothing happens, and the preview says why.
    await pulumiConfig(fixture, "set", "--path", "allocations[1].retire", usIp);
    const wrong = await stack.preview();
    expect(wrong.changeSummary).toEqual({ same: 3 });
    expect(wrong.stdout).toContain(
      `replaceTrigger names ${usIp}, which this allocation does not hold (it holds ${deIp})`,
    );
    await pulumiConfig(fixture, "rm", "--path", "allocations");

    // The README's command on a stack without the list: allocation [0] is retired, [1] stays.
    await pulumiConfig(fixture, "set", "--path", "allocations[0].retire", usIp);
    const retired = await stack.up();
    expect(retired.summary.resourceChanges).toEqual({ same: 2, update: 1 });
    const after = retired.outputs.addresses?.value as Addresses;
    expect(after["us-new-york"]).toMatchObject({ lastReplacedIp: usIp });
    expect(after["de-frankfurt"]?.ip).toBe(deIp);

    // Removing the trigger afterwards asks for nothing: no second swap spends a free replacement.
    await pulumiConfig(fixture, "rm", "--path", "allocations[0].retire");
    expect((await stack.preview()).changeSummary).toEqual({ same: 3 });

    // An entry beyond the defaults without a name is refused at preview, naming what is missing.
    await pulumiConfig(fixture, "set", "--path", "allocations[1].city", "frankfurt");
    await pulumiConfig(fixture, "set", "--path", "allocations[2].retire", "192.0.2.1");
    await expect(stack.preview()).rejects.toThrow(/ip-hygiene:allocations\[2\] has no name and no country/);
  });
});
