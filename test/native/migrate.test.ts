import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportFile } from "../../cli/coverage/importFile";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { ProxyClient } from "../../sdk";
import { type ProviderFixture, providerFixture } from "../support/fixture";
import { stackCommands } from "./commands";
import { runGenerated } from "./generated";

/** The program: the dynamic resources until the move, then the code `pulumi import` generated. */
let nativeProgram = "";

const isWrite = (route: string) => /^(POST|PATCH|PUT|DELETE) /.test(route);

/** Each proxy resource of the state: its type, its name and its id. */
async function proxyResources(fixture: ProviderFixture) {
  const deployment = await fixture.stack.exportStack();
  return (deployment.deployment.resources as { type: string; urn: string; id?: string; outputs?: object }[])
    .filter((resource) => /proxy:/.test(resource.type) && !resource.type.startsWith("pulumi:providers:"))
    .map((resource) => ({ ...resource, name: resource.urn.split("::").pop() ?? "" }));
}

describe("moving a stack from the dynamic resources to the native ones, as the README says", () => {
  let fixture: ProviderFixture;
  let commands: ReturnType<typeof stackCommands>;
  const before = new Map<string, string>();
  let saved: Record<string, string> = {};
  let balance = 0;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      if (nativeProgram) {
        runGenerated(nativeProgram);
        return {};
      }
      const user = new ProxyUser("scraper", { name: "scraper", limits: { dailyGb: 5 } });
      const key = new ApiKey("ci", { name: "ci", scopes: ["proxy-users:read"] });
      new IpAllocation("edge", { product: "isp", country: "us" });
      return { password: user.password, keySecret: key.secret };
    });
    commands = stackCommands(fixture);
    await fixture.stack.up();
    for (const resource of await proxyResources(fixture)) before.set(resource.name, resource.id ?? "");
    balance = (await fixture.api.billing.balance()).balance_cents;
  });
  afterAll(() => fixture?.cleanup());

  it("moves without a write at the API: same ids, no charge, and the saved secrets still work", async () => {
    fixture.server.resetStats();
    // 1. Save the secrets that only the dynamic state holds.
    const outputs = await commands.pulumi(["stack", "output", "--show-secrets", "--json"]);
    saved = JSON.parse(outputs.stdout);
    expect(saved.keySecret).toMatch(/^live_/);
    expect(saved.password).toEqual(expect.any(String));

    // 2. The plugin, and the import file of the dynamic resources as native ones.
    await commands.installPlugin();
    const file = path.join(fixture.tempDir, "native.json");
    await commands.coverage(["--import-file", file, "--moving"]);
    expect((JSON.parse(fs.readFileSync(file, "utf8")) as ImportFile).resources).toEqual(
      expect.arrayContaining([{ type: "proxy:index:ProxyUser", name: "scraper", id: before.get("scraper") }]),
    );

    // 3. Import them, with code generation; 4. drop the dynamic ones from the state (no call to the API).
    const code = path.join(fixture.tempDir, "index.ts");
    await commands.pulumi(["import", "--file", file, "--yes", "--protect=false", "--out", code]);
    for (const resource of await proxyResources(fixture)) {
      if (resource.type.startsWith("pulumi-nodejs:dynamic/")) {
        await commands.pulumi(["state", "delete", resource.urn, "--yes"]);
      }
    }

    // 5. The generated code is the program: nothing to do.
    nativeProgram = fs.readFileSync(code, "utf8");
    await fixture.stack.preview({ expectNoChanges: true });
    await fixture.stack.up();

    const after = await proxyResources(fixture);
    expect(after.map((resource) => [resource.type, resource.name, resource.id]).sort()).toEqual(
      [
        ["proxy:index:ApiKey", "ci", before.get("ci")],
        ["proxy:index:IpAllocation", "edge", before.get("edge")],
        ["proxy:index:ProxyUser", "scraper", before.get("scraper")],
      ].sort(),
    );
    expect(Object.keys(fixture.server.stats().byRoute).filter(isWrite)).toEqual([]);
    expect((await fixture.api.billing.balance()).balance_cents).toBe(balance);
    const savedKey = new ProxyClient({ baseUrl: fixture.server.url, apiKey: saved.keySecret ?? "" });
    expect((await savedKey.proxyUsers.get(before.get("scraper") ?? "")).name).toBe("scraper");
  });

  it("6. a rotation gives the native stack a secret of its own; the saved one keeps working for the grace period", async () => {
    nativeProgram = nativeProgram.replace(/(new proxy\.ApiKey\("ci", \{)/, '$1 rotationTrigger: "moved",');
    const result = await fixture.stack.up();
    expect(result.summary.resourceChanges).toMatchObject({ update: 1 });
    const key = (await proxyResources(fixture)).find((resource) => resource.name === "ci");
    const secret = (key?.outputs as { secret?: unknown })?.secret;
    const fresh = typeof secret === "object" ? (secret as { plaintext?: string }).plaintext : secret;
    expect(JSON.parse(String(fresh))).toMatch(/^live_/);
    for (const apiKey of [JSON.parse(String(fresh)) as string, saved.keySecret ?? ""]) {
      const client = new ProxyClient({ baseUrl: fixture.server.url, apiKey });
      expect((await client.proxyUsers.get(before.get("scraper") ?? "")).id).toBe(before.get("scraper"));
    }
  });
});
