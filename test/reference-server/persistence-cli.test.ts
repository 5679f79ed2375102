import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseCli } from "../../server/cli";
import { type Api, expectError, startApi } from "./harness";

let api: Api | undefined;
let directory: string | undefined;
afterEach(async () => {
  await api?.server.close();
  api = undefined;
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe("state file", () => {
  it("keeps the account across restarts, holding no secret in the file", async () => {
    directory = mkdtempSync(join(tmpdir(), "reference-server-"));
    const stateFile = join(directory, "state.json");
    api = await startApi({ stateFile, balanceCents: 5000 });
    const firstRoot = api.server.rootKey;
    const user = await api.createUser("persisted", { limits: { daily_gb: 1 } });
    const key = await api.post("/v1/keys", { name: "ci", scopes: ["proxy-users:read"] });
    const allocation = await api.post(
      "/v1/ips",
      { product: "isp", country: "us" },
      { headers: { "idempotency-key": "alloc" } },
    );
    api.server.control.recordTraffic(user.id, 1234, 5);
    await api.server.close();

    const onDisk = readFileSync(stateFile, "utf8");
    for (const secret of [firstRoot, key.json.secret, user.password]) expect(onDisk).not.toContain(secret);

    api = await startApi({ stateFile, balanceCents: 1 });
    expect(api.server.rootKey).not.toBe(firstRoot);
    expectError(await api.get("/v1/proxy-users", { key: firstRoot }), 401, "invalid_api_key");
    expect((await api.get(`/v1/proxy-users/${user.id}`)).json).toEqual(
      Object.fromEntries(Object.entries(user).filter(([field]) => field !== "password")),
    );
    expect((await api.get("/v1/proxy-users", { key: key.json.secret })).status).toBe(200);
    expect((await api.get("/v1/billing/balance")).json.balance_cents).toBe(4700);
    const keys = (await api.get("/v1/keys")).json.keys;
    expect(keys.filter((k: { name: string }) => k.name === "root")).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    expect((await api.get(`/v1/usage?from=${today}&to=${today}`)).json.totals).toEqual({ bytes: 1234, requests: 5 });
    expect((await api.createUser("after-restart")).id).not.toBe(user.id);
    const replay = await api.post(
      "/v1/ips",
      { product: "isp", country: "us" },
      { key: firstRoot, headers: { "idempotency-key": "alloc" } },
    );
    expectError(replay, 401, "invalid_api_key");
    expect((await api.get(`/v1/ips/${allocation.json.id}`)).json.ip).toBe(allocation.json.ip);
  });

  it("keeps a given root key stable across restarts", async () => {
    directory = mkdtempSync(join(tmpdir(), "reference-server-"));
    const stateFile = join(directory, "state.json");
    const rootKey = `live_${"R".repeat(40)}`;
    api = await startApi({ stateFile, rootKey });
    const replayable = await api.post("/v1/proxy-users", { name: "x" }, { headers: { "idempotency-key": "x" } });
    await api.server.close();
    api = await startApi({ stateFile, rootKey });
    const replayed = await api.post("/v1/proxy-users", { name: "x" }, { headers: { "idempotency-key": "x" } });
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    expect(replayed.json).toEqual(replayable.json);
  });

  it("refuses a malformed root key", async () => {
    await expect(startApi({ rootKey: "live_tooshort" })).rejects.toThrow(/rootKey/);
  });
});

describe("command line", () => {
  it("maps flags to options", () => {
    const options = parseCli([
      "--port",
      "9000",
      "--host",
      "0.0.0.0",
      "--root-key",
      "live_x",
      "--rate-limit",
      "50",
      "--balance",
      "123",
      "--state-file",
      "s.json",
      "--fault-rate",
      "0.05",
      "--drop-rate",
      "0.01",
      "--after-commit-rate",
      "0.02",
      "--latency-ms",
      "20",
      "--latency-rate",
      "0.5",
      "--fault-seed",
      "7",
    ]);
    expect(options).toEqual({
      host: "0.0.0.0",
      port: 9000,
      rootKey: "live_x",
      rateLimitPerMinute: 50,
      balanceCents: 123,
      stateFile: "s.json",
      faults: { errorRate: 0.05, dropRate: 0.01, afterCommitRate: 0.02, latencyMs: 20, latencyRate: 0.5, seed: 7 },
      gateway: { port: 9001 },
    });
    expect(parseCli([])).toEqual({ host: "127.0.0.1", port: 8787, faults: {}, gateway: { port: 8788 } });
    expect(parseCli(["--port", "0"])).toMatchObject({ gateway: { port: 0 } });
    expect(
      parseCli([
        "--gateway-port",
        "9100",
        "--propagation-delay-ms",
        "0",
        "--gateway-rate-limit",
        "5000",
        "--gateway-allow-host",
        "a.test",
        "--gateway-allow-host",
        "b.test",
      ]),
    ).toMatchObject({
      gateway: { port: 9100, propagationDelayMs: 0, requestsPerSecond: 5000, allowedHosts: ["a.test", "b.test"] },
    });
    expect(
      parseCli([
        "--gateway-failed-logins-per-user",
        "3",
        "--gateway-failed-logins-per-address",
        "30",
        "--gateway-max-open",
        "4",
        "--gateway-tunnel-idle-ms",
        "1500",
        "--gateway-failed-logins-per-pair",
        "2",
        "--gateway-header-timeout-ms",
        "700",
        "--gateway-max-unauthenticated",
        "9",
      ]),
    ).toMatchObject({
      gateway: {
        failedLogins: { perPair: 2, perUsername: 3, perAddress: 30 },
        maxOpenPerUser: 4,
        tunnelIdleTimeoutMs: 1500,
        headerTimeoutMs: 700,
        maxUnauthenticatedPerAddress: 9,
      },
    });
    expect(parseCli(["--failed-auth-per-minute", "7", "--header-timeout-ms", "400"])).toMatchObject({
      failedAuthPerMinute: 7,
      headerTimeoutMs: 400,
    });
    expect(parseCli(["--help"])).toBe("help");
  });

  it("hands the gateway's flags to the gateway it starts: failed logins per username, on raw sockets", async () => {
    const cli = resolve(__dirname, "..", "..", "dist", "server", "cli.js");
    const child = spawn(process.execPath, [cli, "--port", "0", "--gateway-failed-logins-per-user", "2"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      const gateway = await new Promise<URL>((done, fail) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8");
          const found = /gateway listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(output)?.[1];
          if (found) done(new URL(found));
        });
        child.once("exit", (code) => fail(new Error(`exited early with ${String(code)}: ${output}`)));
      });
      // A wrong password for the same username, each on its own connection (a refusal closes it).
      const statusOf = () =>
        new Promise<string>((done, fail) => {
          const socket = net.connect(Number(gateway.port), gateway.hostname, () => {
            const credentials = Buffer.from("ghost:wrong").toString("base64");
            socket.write(
              `GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: Basic ${credentials}\r\n\r\n`,
            );
          });
          let answer = "";
          socket.on("data", (chunk) => {
            answer += chunk.toString("latin1");
            if (answer.includes("\r\n")) {
              done(answer.split("\r\n")[0] ?? "");
              socket.destroy();
            }
          });
          socket.once("error", fail);
        });
      const statuses = [await statusOf(), await statusOf(), await statusOf()];
      // The default is 20 a minute; with the flag the third attempt is already held back.
      expect(statuses.map((line) => line.split(" ")[1])).toEqual(["407", "407", "429"]);
    } finally {
      child.kill("SIGTERM");
    }
  });

  // The global setup compiles the package, so the standalone entry point runs exactly as `npm run server` does.
  it.each(["SIGINT", "SIGTERM"] as const)(
    "prints its URL and root key, serves, and stops cleanly on %s",
    async (signal) => {
      const rootKey = `live_${"C".repeat(36)}`;
      const cli = resolve(__dirname, "..", "..", "dist", "server", "cli.js");
      const child = spawn(process.execPath, [cli, "--port", "0", "--root-key", rootKey, "--rate-limit", "5"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      let output = "";
      const url = await new Promise<string>((done, fail) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8");
          const match = /reference server listening on (http:\/\/127\.0\.0\.1:\d+)\nroot key: (\S+)\n/.exec(output);
          if (match?.[1]) done(match[1]);
        });
        child.once("exit", (code) => fail(new Error(`exited early with ${String(code)}: ${output}`)));
      });
      expect(output).toContain(`root key: ${rootKey}`);
      const gatewayUrl = await new Promise<string>((done) => {
        const find = (): void => {
          const found = /gateway listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(output)?.[1];
          if (found) done(found);
          else child.stdout.once("data", find);
        };
        find();
      });
      const refused = await fetch(gatewayUrl);
      expect(refused.headers.get("x-proxy-error")).toBe("bad_request");
      const answer = await fetch(`${url}/v1/billing/balance`, { headers: { authorization: `Bearer ${rootKey}` } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("x-ratelimit-limit")).toBe("5");
      child.kill(signal);
      expect(await exited).toBe(0);
    },
  );

  it("rejects bad values and unknown flags", () => {
    expect(() => parseCli(["--fault-rate", "2"])).toThrow(/fault-rate/);
    expect(() => parseCli(["--port", "http"])).toThrow(/port/);
    expect(() => parseCli(["--rate-limit", "0"])).toThrow(/rate-limit/);
    expect(() => parseCli(["--gateway-rate-limit", "0"])).toThrow(/gateway-rate-limit/);
    expect(() => parseCli(["--propagation-delay-ms", "-1"])).toThrow(/propagation-delay-ms/);
    expect(() => parseCli(["--gateway-max-open", "0"])).toThrow(
      "--gateway-max-open: invalid value 0; expected a whole number, 1 or more",
    );
    expect(() => parseCli(["--gateway-tunnel-idle-ms", "soon"])).toThrow(/gateway-tunnel-idle-ms/);
    expect(() => parseCli(["--colour"])).toThrow();
  });
});
