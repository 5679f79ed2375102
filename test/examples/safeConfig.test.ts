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
});
