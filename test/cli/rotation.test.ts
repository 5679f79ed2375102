import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DriftJson } from "../../cli/drift/command";
import type { PlanJson } from "../../cli/plan/model";
import { formatPlanText } from "../../cli/plan/render";
import { rotationOf, type State } from "../../provider/kinds/apiKey/schema";
import { type ApiKey, ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Several engine runs on a loaded 2-core machine. */
const ENGINE_RUNS = { timeout: 600_000 };

/**
 * The keys are created 40 days in the past by the server's clock, then the clock returns to now:
 * the provider decides at preview, from the state's dates and its own clock, that `reports`
 * (rotateAfterDays 30) is due, and `fresh` (45) is due in 5 days.
 */
let offsetMs = -40 * DAY_MS;
const clock = { now: () => Date.now() + offsetMs };

const program = (expiresAt: string) => ({
  "Pulumi.yaml": "name: rotating\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
  "package.json": JSON.stringify({ name: "rotating", main: "index.js" }),
  "index.js": `
const { ApiKey } = require("pulumi-proxy");
new ApiKey("reports", { name: "reports", scopes: ["usage:read"], rotateAfterDays: 30, graceHours: 6 });
new ApiKey("fresh", { name: "fresh", scopes: ["usage:read"], rotateAfterDays: 45 });
new ApiKey("expiring", { name: "expiring", scopes: ["usage:read"], expiresAt: "${expiresAt}" });
`,
});

describe("rotateAfterDays: a key past its age rotates once, and plan and drift list the keys due soon", () => {
  let cli: CliWorkspace;
  let server: ReferenceServer;
  let api: ProxyClient;
  let dir: string;
  const run = async (args: string[]) => {
    const result = await pulumi([...args], dir, cli.env);
    expect(result.output).not.toContain(server.rootKey);
    return result;
  };
  const up = async () => {
    const result = await run(["up", "--yes", "--skip-preview"]);
    expect(result.code, result.output).toBe(0);
    return result.output;
  };
  const keyNamed = async (name: string): Promise<ApiKey> => {
    for await (const key of api.keys.list()) if (key.name === name) return key;
    throw new Error(`no key named ${name}`);
  };
  const proxyCli = (args: string[]) =>
    runCli([...args, "--stack", "dev", "--cwd", dir], cli.env as Record<string, string>);

  beforeAll(async () => {
    cli = cliWorkspace();
    server = await startReferenceServer({ rateLimitPerMinute: 100_000, clock });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    dir = cli.project("program", program(new Date(Date.now() + 3.5 * DAY_MS).toISOString()));
    for (const args of [
      ["stack", "init", "dev"],
      ["config", "set", "proxy:apiUrl", server.url],
      ["config", "set", "--secret", "proxy:apiKey", server.rootKey],
    ]) {
      expect((await run(args)).code).toBe(0);
    }
  });
  afterAll(async () => {
    await server?.close();
    cli?.cleanup();
  });

  it(
    "previews the rotation with its reason, rotates with graceHours, and the second up does nothing",
    ENGINE_RUNS,
    async () => {
      await up();
      offsetMs = 0;
      const created = await keyNamed("reports");
      expect(created.last_rotated_at).toBeNull();

      const preview = await run(["preview", "--diff"]);
      expect(preview.code, preview.output).toBe(0);
      expect(preview.output).toContain(
        `ApiKey "reports": up rotates the secret in place, the old one working for 6 h: rotateAfterDays is 30 and the key was created 40 days ago (${created.created_at}).`,
      );
      expect(preview.output).not.toContain('ApiKey "fresh": up rotates');

      const planned = await proxyCli(["plan", "--json"]);
      expect(planned.stderr).toBe("");
      expect(planned.code).toBe(2);
      const plan = JSON.parse(planned.stdout) as PlanJson;
      expect(plan.access.keys).toEqual([
        expect.objectContaining({
          name: "reports",
          change: "rotated",
          graceHours: 6,
          reason: expect.stringMatching(/^rotateAfterDays is 30 and the key was created 40 days ago/),
        }),
      ]);
      expect(plan.keysDueSoon.map(({ name, event, inDays }) => ({ name, event, inDays }))).toEqual([
        { name: "reports", event: "rotation", inDays: -10 },
        { name: "expiring", event: "expiry", inDays: 3 },
        { name: "fresh", event: "rotation", inDays: 4 },
      ]);
      // The same plan as text (what `plan` without a format prints), without another preview.
      const text = formatPlanText(plan);
      expect(text).toContain("== Keys due within 7 days");
      expect(text).toContain('fresh (key "fresh"): rotation (rotateAfterDays) due');

      await up();
      const rotated = await keyNamed("reports");
      expect(rotated.last_rotated_at).not.toBeNull();
      expect(rotated.secret_hint).not.toBe(created.secret_hint);
      const graceMs = Date.parse(rotated.previous_secret_expires_at ?? "") - Date.parse(rotated.last_rotated_at ?? "");
      expect(graceMs).toBe(6 * 60 * 60 * 1000);
      expect((await keyNamed("fresh")).last_rotated_at).toBeNull();

      const again = await up();
      expect(again).toMatch(/4 unchanged/);
      expect(again).not.toMatch(/updated/);
      expect(await keyNamed("reports")).toEqual(rotated);

      const drift = await proxyCli(["drift", "--json"]);
      expect(drift.code, drift.stderr).toBe(0);
      const report = JSON.parse(drift.stdout) as DriftJson;
      expect(report.keysDueSoon.map(({ name, event }) => `${name} ${event}`)).toEqual([
        "expiring expiry",
        "fresh rotation",
      ]);
      expect(drift.stderr).toContain("Keys due within 7 days:");
      expect(drift.stderr).toContain('expiring (key "expiring"): expires');
    },
  );

  it("keys a scheduled rotation by the date it follows, so an up retried later replays the same rotation", async () => {
    const state = { rotateAfterDays: 30, graceHours: 24, createdAt: "2020-01-01T00:00:00.000Z", lastRotatedAt: null };
    const first = rotationOf("key_1", state as unknown as State, state as never);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const retried = rotationOf("key_1", state as unknown as State, state as never);
    expect(first?.generation).toEqual(retried?.generation);
    const after = rotationOf(
      "key_1",
      { ...state, lastRotatedAt: new Date().toISOString() } as unknown as State,
      state as never,
    );
    expect(after).toBeUndefined();
  });
});
