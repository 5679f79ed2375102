import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConnectionError, ProxyClient } from "../../sdk";
import { REPO_ROOT } from "../support/pulumi";

/**
 * Issue #32, item 3: a refused connection before the API has ever answered is a wrong URL far more
 * often than a restart, so it gets a short window; once the API has answered, a restart is waited for
 * through the whole retry window. Both with the reference server as its own process, killed for real.
 */
const ROOT_KEY = `live_${"F".repeat(40)}`;
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "first-contact-"));
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** `pulumi-proxy server` as its own process, keeping its account in a state file across restarts. */
async function startServer(port: number): Promise<{ url: string; child: ChildProcess }> {
  const cli = path.join(REPO_ROOT, "dist", "server", "cli.js");
  const args = ["--port", String(port), "--gateway-port", "0", "--root-key", ROOT_KEY];
  const child = spawn(process.execPath, [cli, ...args, "--state-file", path.join(stateDir, "state.json")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = /reference server listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(output)?.[1];
      if (found) resolve(found);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening: ${output}`)));
  });
  return { url, child };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("a refused connection, with the API in its own process", () => {
  it("fails fast before the first answer, naming the URL, and is waited for after it, through a restart", async () => {
    const first = await startServer(0);
    const port = Number(new URL(first.url).port);
    const options = { baseUrl: first.url, apiKey: ROOT_KEY, firstContactWindowMs: 1_000 };
    const answered = new ProxyClient(options);
    await answered.proxyUsers.list({ limit: 1 });
    await kill(first.child);

    // Sent while nothing listens: the client that has had an answer keeps trying.
    const created = answered.proxyUsers.create({ name: "after-restart" });

    const started = Date.now();
    const neverAnswered = await new ProxyClient(options).proxyUsers.list({ limit: 1 }).catch((error: unknown) => error);
    expect(neverAnswered).toBeInstanceOf(ConnectionError);
    expect(String((neverAnswered as Error).message)).toContain(`nothing has answered at ${first.url}`);
    expect(String((neverAnswered as Error).message)).toContain("ECONNREFUSED");
    expect(Date.now() - started).toBeLessThan(5_000);

    // Down for longer than the first-contact window, then back on the same port with the same account.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await startServer(port);
    expect((await created).name).toBe("after-restart");
    const names = [];
    for await (const user of answered.proxyUsers.list({ limit: 10 })) names.push(user.name);
    expect(names).toEqual(["after-restart"]);
  }, 30_000);
});
