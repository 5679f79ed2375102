import net from "node:net";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { configure, handlers } from "../../provider/runtime";

/** What the engine hands `configure` in the provider process: the stack's config by full key. */
function configureWith(config: Record<string, string>): void {
  configure({ config: { get: (key: string) => config[key] } } as unknown as pulumi.dynamic.ConfigureRequest);
}

// Port 1 on loopback refuses every connection: an API that is down.
const DOWN = { "proxy:apiUrl": "http://127.0.0.1:1", "proxy:apiKey": "live_x" };

describe("proxy:retryWindowSeconds", () => {
  it("bounds how long a request the API does not answer is tried again", async () => {
    // An API that takes each connection and drops it without a word, counting them.
    let connections = 0;
    const silent = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      configureWith({ ...DOWN, "proxy:apiUrl": `http://127.0.0.1:${port}`, "proxy:retryWindowSeconds": "2" });
      const started = Date.now();
      await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(/did not answer/);
      // It tried again (the first backoff is at most half a second), and gave up within its two
      // seconds plus an attempt, long before the default two minutes.
      expect(connections).toBeGreaterThan(1);
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      silent.close();
    }
  });

  it("names the setting and the fix when it is not a whole number", async () => {
    configureWith({ ...DOWN, "proxy:retryWindowSeconds": "2m" });
    await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(
      /proxy:retryWindowSeconds must be a whole number of seconds.*pulumi config set proxy:retryWindowSeconds 30/,
    );
  });
});

describe("proxy:requestTimeoutSeconds", () => {
  it("bounds how long one request waits for an answer, then tries it again", async () => {
    // An API that takes each connection and never answers, counting them.
    const held: net.Socket[] = [];
    const mute = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = mute.address() as net.AddressInfo;
      configureWith({
        ...DOWN,
        "proxy:apiUrl": `http://127.0.0.1:${port}`,
        "proxy:requestTimeoutSeconds": "1",
        "proxy:retryWindowSeconds": "2",
      });
      const started = Date.now();
      await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(/no answer within 1000 ms/);
      // Each attempt waited one second, not the default thirty, and the timeout was tried again.
      expect(held.length).toBeGreaterThan(1);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const socket of held) socket.destroy();
      mute.close();
    }
  });

  it("refuses 0, naming the least it takes", async () => {
    configureWith({ ...DOWN, "proxy:requestTimeoutSeconds": "0" });
    await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(
      /proxy:requestTimeoutSeconds must be a whole number of seconds \(1 or more\), got "0".*pulumi config set proxy:requestTimeoutSeconds 60/,
    );
  });
});
