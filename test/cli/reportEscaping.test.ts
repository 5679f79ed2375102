import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";

/** Key names are free text: whoever can mint a key chooses what the report prints. */
const HOSTILE = {
  image: "<img src=x onerror=alert(1)>",
  script: "<script>alert(1)</script>",
  link: "[click](https://evil.example)",
  bareLink: "see www.evil.example now",
  carriageReturn: "ci\rdeploy",
  lookAlike: "ro\u200Bot",
  reversed: "admin\u202Egnp.exe",
};

describe("pulumi-proxy report with hostile key names", () => {
  let server: ReferenceServer;
  let env: Record<string, string>;
  let dir: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startReferenceServer({ console: false });
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    for (const [label, name] of Object.entries(HOSTILE))
      ids[label] = (await api.keys.create({ name, scopes: ["usage:read"] })).id;
    env = { ...process.env, PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey } as Record<string, string>;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "proxy-report-escaping-"));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("Markdown: no tag, link or image acts, a carriage return keeps its row, hidden characters show", async () => {
    const { code, stdout, stderr } = await runCli(["report", "--markdown"], env);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    // Every character Markdown acts on comes escaped, so none of these begins a tag, link or image.
    expect(stdout).not.toMatch(/(?<!\\)<(img|script)/i);
    expect(stdout).not.toMatch(/(?<!\\)\]\(/);
    expect(stdout).not.toMatch(/(?<!\\)(https:\/\/|www\.)evil/);
    expect(stdout).toContain("\\<img src=x onerror=alert\\(1\\)\\>");
    expect(stdout).toContain("\\[click\\]\\(https\\://evil.example\\)");
    // Each key is one table row, with its id and scopes after its name.
    const rows = stdout.split("\n").filter((line) => line.startsWith("| ") && line.includes("(key_"));
    expect(rows).toHaveLength(Object.keys(HOSTILE).length + 1);
    expect(stdout).not.toMatch(/\r/);
    expect(rows.find((row) => row.includes(ids.carriageReturn ?? "?"))).toMatch(
      /^\| ci\\\\u000Ddeploy \(key_\w+\) \| usage:read \|/,
    );
    // Written out, as `\u200B` (the backslash itself escaped for Markdown), never hidden.
    expect(stdout).not.toMatch(/[\u200B\u202E]/);
    expect(rows.find((row) => row.includes(ids.lookAlike ?? "?"))).toContain("| ro\\\\u200Bot (key_");
    expect(rows.find((row) => row.includes(ids.reversed ?? "?"))).toContain("| admin\\\\u202Egnp.exe (key_");
  });

  it("HTML: names are text, and hidden characters show", async () => {
    const file = path.join(dir, "report.html");
    const { code } = await runCli(["report", "--out", file], env);
    expect(code).toBe(0);
    const page = fs.readFileSync(file, "utf8");
    expect(page).not.toMatch(/<(img|script|a)[\s>]/i);
    expect(page).toContain("&#60;img src=x onerror=alert(1)&#62;");
    expect(page).not.toMatch(/[\r\u200B\u202E]/);
    expect(page).toContain("ro\\u200Bot");
    expect(page).toContain("admin\\u202Egnp.exe");
    expect(page).toContain("ci\\u000Ddeploy");
  });
});
