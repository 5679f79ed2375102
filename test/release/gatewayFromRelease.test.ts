import { type ChildProcess, execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BYTES_PER_GB } from "../../contract/proxyUsers";
import { ProxyClient } from "../../sdk";
import {
  absoluteRequest,
  basic,
  hasCompleteAnswer,
  type Origin,
  pipelined,
  rawSession,
  startOrigin,
} from "../gateway/harness";
import { outsideFolder } from "../support/outside";
import { sharedRelease } from "./releaseFolder";

const exec = promisify(execFile);

/**
 * `pulumi-proxy server` as a user without Node.js runs it: the release's executable (Bun's runtime).
 * Its gateway must bill every byte it carried, as the Node build does (test/gateway/ checks that
 * build in depth). It billed 0 bytes for every exchange once: Bun's HTTP server serves a connection
 * it accepts itself natively, away from the socket the meter reads.
 */
const outside = outsideFolder();
let server: ChildProcess | undefined;
let origin: Origin;
let api: ProxyClient;
let gatewayUrl: string;
let auth: string;
let userId: string;

beforeAll(async () => {
  const release = await sharedRelease();
  await exec("tar", ["-xzf", release.file("-linux-amd64.tar.gz"), "-C", outside.dir]);
  const executable = path.join(outside.dir, "pulumi-resource-proxy");
  server = spawn(executable, ["server", "--port", "0", "--propagation-delay-ms", "0", "--no-console"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const started = await new Promise<RegExpExecArray>((resolve, reject) => {
    server?.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening on (http:\S+)\nroot key: (\S+)\ngateway listening on (http:\S+)\n/.exec(output);
      if (match) resolve(match);
    });
    server?.once("exit", (code) => reject(new Error(`the release's server exited (${code}): ${output}`)));
  });
  const [, apiUrl = "", rootKey = "", gateway = ""] = started;
  gatewayUrl = gateway;
  api = new ProxyClient({ baseUrl: apiUrl, apiKey: rootKey });
  const user = await api.proxyUsers.create({ name: "metered" });
  userId = user.id;
  auth = basic(user.username, user.password as string);
  origin = await startOrigin();
}, 300_000);

afterAll(async () => {
  server?.kill();
  await origin?.close();
  outside.cleanup();
});

async function usage(): Promise<{ bytes: number; requests: number }> {
  const today = new Date().toISOString().slice(0, 10);
  return (await api.usage.get({ from: today, to: today, proxy_user_id: userId })).totals;
}

/** Usage is flushed when an exchange ends and each second: waits until the requests are all in. */
async function usageOnceSettled(requests: number): Promise<{ bytes: number; requests: number }> {
  for (let tries = 0; tries < 50; tries++) {
    const totals = await usage();
    if (totals.requests >= requests) return totals;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return usage();
}

describe("the release's `pulumi-proxy server`: its gateway bills what crossed the wire", () => {
  it("plain requests, pipelined on one connection, and a tunnel: every byte written and read", async () => {
    const plain = await rawSession(
      gatewayUrl,
      [
        Buffer.from(absoluteRequest("GET", `${origin.url}/bytes/5000`, auth)),
        Buffer.from(absoluteRequest("GET", `${origin.url}/hello`, auth)),
      ],
      hasCompleteAnswer,
    );
    const target = new URL(origin.url).host;
    const tunnel = await rawSession(
      gatewayUrl,
      [
        Buffer.from(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: ${auth}\r\n\r\n`),
        Buffer.from(`GET /bytes/3000 HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
      ],
      hasCompleteAnswer,
    );
    expect(plain.answers.map((answer) => answer.subarray(0, 12).toString("latin1"))).toEqual([
      "HTTP/1.1 200",
      "HTTP/1.1 200",
    ]);
    expect(tunnel.answers[0]?.subarray(0, 12).toString("latin1")).toBe("HTTP/1.1 200");

    const carried = plain.written + plain.read + tunnel.written + tunnel.read;
    expect(carried).toBeGreaterThan(8000);
    expect(await usageOnceSettled(3)).toEqual({ bytes: carried, requests: 3 });
  });

  it("cuts a download within 64 KB past a daily ceiling, and refuses the next request", async () => {
    const capped = await api.proxyUsers.create({ name: "capped", limits: { daily_gb: 0.001 } });
    const cappedAuth = basic(capped.username, capped.password as string);
    const download = await rawSession(
      gatewayUrl,
      [Buffer.from(absoluteRequest("GET", `${origin.url}/bytes/20000000`, cappedAuth))],
      (received) => received.length > 20_000_000,
    ).catch((error: unknown) => error);
    expect(String(download)).toContain("connection ended before answer 0");
    const today = new Date().toISOString().slice(0, 10);
    const billed = (await api.usage.get({ from: today, to: today, proxy_user_id: capped.id })).totals.bytes;
    const ceiling = 0.001 * BYTES_PER_GB;
    expect(billed).toBeGreaterThan(ceiling);
    expect(billed - ceiling).toBeLessThanOrEqual(64 * 1024);
    const [refused] = await pipelined(gatewayUrl, [
      Buffer.from(absoluteRequest("GET", `${origin.url}/hello`, cappedAuth, "Connection: close\r\n")),
    ]);
    expect(refused?.subarray(0, 12).toString("latin1")).toBe("HTTP/1.1 407");
  });
});
