import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../cli/report/model";
import { LIST_LIMIT_MAX } from "../../contract/common";
import { ProxyClient } from "../../sdk";
import { ManualClock, type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";
import { seedReportAccount } from "./reportSeed";

const AS_OF = "2030-03-20";

describe("pulumi-proxy report against the reference server", () => {
  let server: ReferenceServer;
  let dir: string;
  let env: Record<string, string>;
  let secrets: string[];
  /** The first test's `--json` output, checked for secrets by the second. */
  let jsonOutput = "";

  beforeAll(async () => {
    const clock = new ManualClock(Date.parse("2030-02-15T09:00:00Z"));
    server = await startReferenceServer({ clock, rateLimitPerMinute: 100_000, balanceCents: 50_000 });
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    secrets = await seedReportAccount(server, api, clock, { fillers: 240 });
    clock.set(Date.parse(`${AS_OF}T12:00:00Z`));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "proxy-report-"));
    env = { ...process.env, PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey } as Record<string, string>;
  });
  afterAll(async () => {
    await server?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("lists the users that reach a ceiling first, with the date, in a bounded number of requests", async () => {
    server.resetStats();
    const { code, stdout, stderr } = await runCli(["report", "--json", "--as-of", AS_OF], env);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    jsonOutput = stdout;
    const report = JSON.parse(stdout) as Report;
    expect(
      report.atRisk.map(({ name, crossing }) => [name, crossing.ceiling, crossing.date, crossing.reached]),
    ).toEqual([
      ["capped", "monthly", "2030-03-10", true],
      ["burst", "daily", "2030-03-20", false],
      ["steady", "monthly", "2030-03-25", false],
    ]);
    if (!Array.isArray(report.users)) throw new Error(report.users.unreadable);
    expect(report.users.slice(0, 3).map((user) => user.name)).toEqual(["capped", "burst", "steady"]);
    const steady = report.users.find((user) => user.name === "steady");
    expect(steady).toMatchObject({ monthBytes: 7.7e9, paceBytesPerDay: 0.4e9, projectedMonthBytes: 12.4e9 });
    expect(steady?.days).toHaveLength(20);
    // A disabled user is refused by the gateway: no pace, no projected crossing.
    expect(report.users.find((user) => user.name === "off")).toMatchObject({ paceBytesPerDay: 0, crossings: [] });

    expect(report.spend).toMatchObject({ byKind: [{ kind: "ip_allocation", count: 2 }] });
    if (!Array.isArray(report.keys)) throw new Error(report.keys.unreadable);
    expect(report.keys.find((key) => key.name === "billing-bot")).toMatchObject({ powerful: true });
    expect(report.keys.find((key) => key.name === "reader")).toMatchObject({ powerful: false, status: "due-soon" });

    // ⌈N/200⌉ + 1 list requests per collection at most, one usage read, one balance read, nothing else.
    const stats = server.stats();
    expect(stats.requests).toBe(report.requests.total);
    expect(stats.byRoute["GET /v1/proxy-users"]).toBeLessThanOrEqual(Math.ceil(245 / LIST_LIMIT_MAX) + 1);
    expect(stats.byRoute["GET /v1/usage"]).toBe(1);
    expect(stats.byRoute["GET /v1/billing/balance"]).toBe(1);
    expect(stats.requests).toBeLessThanOrEqual(7);
  });

  it("writes one self-contained HTML file and prints its path; Markdown has tables and no script; no secret anywhere", async () => {
    const html = await runCli(["report", "--as-of", AS_OF, "--out", path.join(dir, "r.html")], env);
    expect(html.code).toBe(0);
    const file = html.stdout.trim();
    expect(file).toBe(path.join(dir, "r.html"));
    const page = fs.readFileSync(file, "utf8");
    expect(page).not.toMatch(/<script|<link|src=|https?:\/\/(?!127\.0\.0\.1)/);
    expect(page.match(/data-series="daily"/g)).toHaveLength(245);
    expect(page).toContain('id="at-risk"');

    const markdown = await runCli(["report", "--markdown", "--as-of", AS_OF], env);
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toContain("| capped | monthly | 2030-03-10 | **reached** |");
    expect(markdown.stdout).not.toMatch(/<script|<svg/);

    for (const text of [page, markdown.stdout, jsonOutput, html.stderr])
      for (const secret of [server.rootKey, ...secrets]) expect(text).not.toContain(secret);
  });

  it("says what a narrow key cannot read instead of failing", async () => {
    const narrow = server.control.createKey({ name: "narrow", scopes: ["usage:read", "proxy-users:read"] });
    const { code, stdout } = await runCli(["report", "--json", "--as-of", AS_OF], {
      ...env,
      PROXY_API_KEY: narrow.secret,
    });
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Report;
    expect(report.keys).toEqual({ unreadable: "the key cannot read API keys (needs keys:write)" });
    expect(report.spend).toMatchObject({ unreadable: expect.stringContaining("billing:read") });
    expect(report.atRisk).toHaveLength(3);
  });

  it("names a bad flag", async () => {
    const { code, stderr } = await runCli(["report", "--as-of", "2030-13-01"], env);
    expect(code).toBe(1);
    expect(stderr).toContain("--as-of must be a date like 2030-01-31, got 2030-13-01");
  });
});
