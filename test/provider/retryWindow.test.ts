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
    configureWith({ ...DOWN, "proxy:retryWindowSeconds": "2" });
    const started = Date.now();
    await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(/did not answer/);
    const elapsed = Date.now() - started;
    // It kept trying for the window it was given, and gave up long before the default two minutes.
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(30_000);
  });

  it("names the setting and the fix when it is not a whole number", async () => {
    configureWith({ ...DOWN, "proxy:retryWindowSeconds": "2m" });
    await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(
      /proxy:retryWindowSeconds must be a whole number of seconds.*pulumi config set proxy:retryWindowSeconds 30/,
    );
  });
});
