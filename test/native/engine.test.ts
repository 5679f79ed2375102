import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { EngineEvent } from "@pulumi/pulumi/automation";
// The generated SDK, as a user's program imports it: the package's own export, compiled from native-sdk/.
import * as proxy from "pulumi-proxy/native";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PLAINTEXT_API_KEY_REFUSAL } from "../../provider/core/credentials";
import { type ProviderFixture, providerFixture } from "../support/fixture";
import { exportedStateAsUserSeesIt, REPO_ROOT } from "../support/pulumi";

const exec = promisify(execFile);

/** What the program declares; tests change it between runs. */
const declared = { userName: "scraper", importedUser: undefined as string | undefined, importedKey: false };

type PreEvent = NonNullable<EngineEvent["resourcePreEvent"]>["metadata"];

/** The engine's step for each resource of a preview, by resource name; a replacement's own parts left out. */
function stepsOf(events: EngineEvent[]): Map<string, PreEvent> {
  const steps = new Map<string, PreEvent>();
  for (const event of events) {
    const step = event.resourcePreEvent?.metadata;
    if (!step?.type.startsWith("proxy:index:") || ["create-replacement", "delete-replaced"].includes(step.op)) continue;
    steps.set(step.urn.split("::").pop() ?? "", step);
  }
  return steps;
}

describe("the native proxy provider through the Pulumi CLI", () => {
  let fixture: ProviderFixture;
  let userId = "";

  /** The pinned CLI itself, in the stack's folder, with the stack's isolated home and backend. */
  const pulumiCli = (args: string[]) =>
    exec(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--stack", fixture.stackName, "--non-interactive"], {
      cwd: fixture.stack.workspace.workDir,
      env: { ...process.env, ...fixture.stack.workspace.envVars },
    });

  const preview = async (options: { refresh?: boolean; expectNoChanges?: boolean } = {}) => {
    const events: EngineEvent[] = [];
    const result = await fixture.stack.preview({ diff: true, ...options, onEvent: (event) => events.push(event) });
    return { ...result, steps: stepsOf(events) };
  };

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const user = new proxy.ProxyUser("scraper", { name: declared.userName, limits: { dailyGb: 5 } });
      if (declared.importedUser) new proxy.ProxyUser("legacy", { name: declared.importedUser });
      if (declared.importedKey) new proxy.ApiKey("ci", { name: "ci-usage", scopes: ["usage:read"] });
      return { userId: user.proxyUserId, password: user.password };
    });
    // As a user would: the documented command, into this stack's own Pulumi home. Plugins on PATH are
    // ignored, so the engine can only find it where the command put it.
    const env = { ...process.env, PULUMI_HOME: fixture.envVars.PULUMI_HOME };
    await exec(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], { env });
    fixture.stack.workspace.envVars.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
  });
  afterAll(() => fixture?.cleanup());

  it("creates the user, its password a secret output, and keeps the API key out of the state", async () => {
    const result = await fixture.stack.up();
    userId = String(result.outputs.userId?.value);
    expect(userId).toMatch(/^pu_/);
    expect(result.outputs.password?.secret).toBe(true);
    const user = await fixture.api.proxyUsers.get(userId);
    expect(user).toMatchObject({ name: "scraper", limits: { daily_gb: 5, monthly_gb: null } });
    const state = await exportedStateAsUserSeesIt(fixture);
    expect(state).toContain('"type": "proxy:index:ProxyUser"');
    expect(state).not.toContain(fixture.server.rootKey);
  });

  it("previews the unchanged stack with no changes", async () => {
    const result = await preview({ expectNoChanges: true });
    expect(result.changeSummary).toEqual({ same: 2 });
  });

  it("shows a change made through the API, property by property, as an update, and fails --expect-no-changes", async () => {
    await fixture.api.proxyUsers.update(userId, { limits: { daily_gb: 9, monthly_gb: null } });
    const drift = await preview({ refresh: true });
    expect(drift.steps.get("scraper")).toMatchObject({
      op: "update",
      detailedDiff: { limits: { diffKind: "update" } },
    });
    expect(drift.stdout).toMatch(/~ proxy:index:ProxyUser: \(update\)/);
    expect(drift.stdout).toMatch(/~ dailyGb\s*: 9 => 5/);
    await expect(preview({ refresh: true, expectNoChanges: true })).rejects.toThrow(/no-changes/);

    declared.userName = "scraper-2";
    const renamed = await preview({ refresh: true });
    declared.userName = "scraper";
    expect(renamed.stdout).toMatch(/\+-proxy:index:ProxyUser: \(replace\)/);
    expect(renamed.steps.get("scraper")).toMatchObject({
      op: "replace",
      detailedDiff: { name: { diffKind: "update-replace" }, limits: { diffKind: "update" } },
    });
  });

  it("puts the change back on up --refresh, then previews clean", async () => {
    await fixture.stack.up({ refresh: true });
    expect((await fixture.api.proxyUsers.get(userId)).limits.daily_gb).toBe(5);
    expect((await preview({ refresh: true, expectNoChanges: true })).changeSummary).toEqual({ same: 2 });
  });

  it("imports a user and a key made through the API; the next preview has no changes", async () => {
    const legacy = await fixture.api.proxyUsers.create({ name: "legacy" });
    const key = await fixture.api.keys.create({ name: "ci-usage", scopes: ["usage:read"] });
    const code = path.join(fixture.tempDir, "legacy.ts");
    await pulumiCli([
      "import",
      "proxy:index:ProxyUser",
      "legacy",
      legacy.id,
      "--yes",
      "--out",
      code,
      "--protect=false",
    ]);
    // The code it writes is the program's language, over the SDK this package ships.
    const written = fs.readFileSync(code, "utf8");
    expect(written).toContain('import * as proxy from "pulumi-proxy/native";');
    expect(written).toMatch(/const legacy = new proxy\.ProxyUser\("legacy", \{[\s\S]*\bname: "legacy",\n\}\);/);
    const file = path.join(fixture.tempDir, "import.json");
    fs.writeFileSync(file, JSON.stringify({ resources: [{ type: "proxy:index:ApiKey", name: "ci", id: key.id }] }));
    const imported = await pulumiCli(["import", "--file", file, "--yes", "--generate-code=false", "--protect=false"]);
    expect(`${imported.stdout}${imported.stderr}`).toMatch(/ApiKey key_\w+ was imported without its secret/);

    declared.importedUser = "legacy";
    declared.importedKey = true;
    const result = await preview({ expectNoChanges: true });
    expect(result.changeSummary).toEqual({ same: 4 });
  });

  // Issue #32, items 2 and 6: the plugin took a plaintext key and previewed a refused one clean.
  it("refuses a plaintext proxy:apiKey and a key the API refuses at preview, as the dynamic resources do", async () => {
    const { stack, server } = fixture;
    const failure = () =>
      stack.preview().then(
        () => "the preview passed",
        (error: Error) => error.message,
      );
    await stack.setConfig("proxy:apiKey", { value: server.rootKey });
    const plaintext = await failure();
    expect(plaintext).toContain(PLAINTEXT_API_KEY_REFUSAL);
    expect(plaintext).not.toContain(server.rootKey);

    const refusedKey = `live_${"Q".repeat(40)}`;
    await stack.setConfig("proxy:apiKey", { value: refusedKey, secret: true });
    const refused = await failure();
    expect(refused).toContain("401 invalid_api_key");
    expect(refused).toContain("The key is the stack's proxy:apiKey; set one the API accepts with");
    expect(refused).not.toContain(refusedKey.slice(5, 15));

    await stack.setConfig("proxy:apiKey", { value: server.rootKey, secret: true });
    expect((await preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 4 });
  });

  it("destroys what it manages", async () => {
    await fixture.stack.destroy();
    const left = [];
    for await (const user of fixture.api.proxyUsers.list()) left.push(user.name);
    expect(left).toEqual([]);
  });
});
