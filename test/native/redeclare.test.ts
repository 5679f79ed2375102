import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { REPO_ROOT } from "../support/pulumi";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

/**
 * Issue 44, items 1 and 4, as a YAML user meets them with the plugin `provider install` put in the
 * plugin cache: a stack torn down and brought back the same day with other limits failed its create
 * (409 `idempotency_key_reused`), and a read-only resource (`get:`) warned on every preview that it
 * was "imported without its password".
 */

const NAME = "s5-yaml-crawler";

function crawler(limits: { dailyGb: number; monthlyGb: number }, enabled = true): Record<string, string> {
  const program = [
    "name: redeclare",
    "runtime: yaml",
    "resources:",
    "  crawler:",
    "    type: proxy:index:ProxyUser",
    "    properties:",
    `      name: ${NAME}`,
    "      limits:",
    `        dailyGb: ${limits.dailyGb}`,
    `        monthlyGb: ${limits.monthlyGb}`,
    `      enabled: ${enabled}`,
    "outputs:",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Pulumi YAML's own interpolation
    "  id: ${crawler.proxyUserId}",
    "",
  ];
  return { "Pulumi.yaml": program.join("\n") };
}

function reader(id: string): Record<string, string> {
  const program = [
    "name: reader",
    "runtime: yaml",
    "resources:",
    "  existing:",
    "    type: proxy:index:ProxyUser",
    "    get:",
    `      id: ${id}`,
    "outputs:",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Pulumi YAML's own interpolation
    "  username: ${existing.username}",
    "",
  ];
  return { "Pulumi.yaml": program.join("\n") };
}

const IMPORTED_WITHOUT = /was imported without its password/;

describe("the native provider, a YAML program", () => {
  let cli: CliWorkspace;
  let server: ReferenceServer;
  let api: ProxyClient;
  let env: NodeJS.ProcessEnv;

  const usersNamed = (name: string) =>
    (server.control.snapshot().proxyUsers as { id: string; name: string }[]).filter((user) => user.name === name);

  /** Runs the CLI in `dir` and expects it to succeed; its output. */
  async function succeeds(args: string[], dir: string): Promise<string> {
    const run = await pulumi(args, dir, env, 280_000);
    expect(run.code, run.output).toBe(0);
    return run.output;
  }

  beforeAll(async () => {
    cli = cliWorkspace();
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    env = { ...cli.env, PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey };
    execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], { env });
  });
  afterAll(async () => {
    cli?.cleanup();
    await server?.close();
  });

  it("brings a user back after a destroy, its limits changed in between, then again with others and with the first", async () => {
    const dir = cli.project("redeclare", crawler({ dailyGb: 1, monthlyGb: 10 }), { nodeModules: false });
    const declare = (limits: { dailyGb: number; monthlyGb: number }, enabled = true) =>
      fs.writeFileSync(path.join(dir, "Pulumi.yaml"), crawler(limits, enabled)["Pulumi.yaml"] as string);
    await succeeds(["stack", "init", "dev"], dir);
    await succeeds(["up", "--yes", "--skip-preview"], dir);
    declare({ dailyGb: 2, monthlyGb: 20 });
    await succeeds(["up", "--yes", "--skip-preview"], dir);

    const ids = new Set<string>();
    for (const [limits, enabled] of [
      [{ dailyGb: 2, monthlyGb: 20 }, true],
      [{ dailyGb: 3, monthlyGb: 30 }, false],
      [{ dailyGb: 1, monthlyGb: 10 }, true], // the first create's inputs: its replay names a gone user
    ] as const) {
      await succeeds(["destroy", "--yes", "--skip-preview"], dir);
      expect(usersNamed(NAME)).toEqual([]);
      declare(limits, enabled);
      await succeeds(["up", "--yes", "--skip-preview"], dir);
      const held = usersNamed(NAME);
      expect(held).toHaveLength(1);
      const id = held[0]?.id as string;
      ids.add(id);
      expect(await api.proxyUsers.get(id)).toMatchObject({
        limits: { daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb },
        enabled,
      });
    }
    expect(ids.size).toBe(3);
    await succeeds(["preview", "--expect-no-changes"], dir);
  }, 1_500_000);

  it("reads a user with `get:` on every preview without a word of a password; an import still says it has none", async () => {
    const user = await api.proxyUsers.create({ name: "read-only" });
    const dir = cli.project("reader", reader(user.id), { nodeModules: false });
    await succeeds(["stack", "init", "dev"], dir);
    expect(await succeeds(["preview"], dir)).not.toMatch(IMPORTED_WITHOUT);
    expect(await succeeds(["up", "--yes"], dir)).not.toMatch(IMPORTED_WITHOUT);
    expect((await succeeds(["stack", "output", "username"], dir)).trim()).toBe("read-only");
    expect(await succeeds(["preview"], dir)).not.toMatch(IMPORTED_WITHOUT);

    const legacy = await api.proxyUsers.create({ name: "legacy" });
    const imported = await succeeds(
      ["import", "proxy:index:ProxyUser", "legacy", legacy.id, "--yes", "--generate-code=false", "--protect=false"],
      dir,
    );
    expect(imported).toContain(`ProxyUser ${legacy.id} was imported without its password`);
  }, 900_000);
});
