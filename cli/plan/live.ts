import type { Stack } from "@pulumi/pulumi/automation";
import type { LiveAccount } from "../../provider/core/review";
import { clientFor } from "../../provider/core/settings";
import { isNotFound, type ProxyClient } from "../../sdk";
import { stackSettings } from "../stack";

/**
 * The account as it is now, for what a plan cannot know from the state: the allocations a swap is
 * priced by, and a proxy user's traffic against a tightened ceiling. The API is the one the stack's
 * provider talks to, with every setting the provider honours (its config first, the environment as
 * the fallback), and it is contacted only when a step needs it.
 */
export function liveAccount(stack: Stack, nowMs: number): LiveAccount {
  let client: Promise<ProxyClient> | undefined;
  const api = () => {
    client ??= stack.getAllConfig().then((config) => clientFor(stackSettings(config), "pulumi-proxy-plan"));
    return client;
  };
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return {
    nowMs,
    async allocation(id) {
      try {
        return await (await api()).ips.get(id);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw new Error(`cannot read allocation ${id} to price its replacement: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },
    async traffic(proxyUserId) {
      const today = day(nowMs);
      const query = {
        from: `${today.slice(0, 8)}01`,
        to: today,
        proxy_user_id: proxyUserId,
        granularity: "day" as const,
      };
      const { usage, totals } = await (await api()).usage.get(query);
      const todayBytes = usage.find((row) => row.period_start === today)?.bytes ?? 0;
      return { todayBytes, monthBytes: totals.bytes };
    },
  };
}
