import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { configure, handlers } from "../../provider/runtime";
import { ManualClock, startReferenceServer } from "../../server";

/** What the engine hands `configure` in the provider process: the stack's config by full key. */
function configureWith(config: Record<string, string>): void {
  configure({ config: { get: (key: string) => config[key] } } as unknown as pulumi.dynamic.ConfigureRequest);
}

describe("proxy:rateLimitReserve", () => {
  it("leaves that many requests of every window to other users of the key", async () => {
    // Frozen 50 s before the window ends: whatever the provider holds back stays held.
    const clock = new ManualClock(Date.parse("2030-01-01T00:00:10Z"));
    const server = await startReferenceServer({ rateLimitPerMinute: 40, clock });
    try {
      configureWith({ "proxy:apiUrl": server.url, "proxy:apiKey": server.rootKey, "proxy:rateLimitReserve": "30" });
      // Deleting what is already gone is one request each, and done.
      const gone = (i: number) => handlers.proxyUser.delete(`pu_gone${i}`, {});
      await Promise.all(Array.from({ length: 10 }, (_, i) => gone(i)));
      expect(server.stats()).toMatchObject({ requests: 10, rateLimited: 0 });
      // The 11th would eat into the reserve: the server does not see it while the window lasts.
      gone(10).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.stats().requests).toBe(10);
    } finally {
      await server.close();
    }
  });

  it("names the setting and the fix when it is not a whole number", async () => {
    configureWith({ "proxy:apiUrl": "http://127.0.0.1:1", "proxy:apiKey": "live_x", "proxy:rateLimitReserve": "ten" });
    await expect(handlers.proxyUser.delete("pu_any", {})).rejects.toThrow(
      /proxy:rateLimitReserve must be a whole number.*pulumi config set proxy:rateLimitReserve/,
    );
  });
});
