import type { ProxyClient } from "../../sdk";
import type { ManualClock, ReferenceServer } from "../../server";

const GB = 1e9;
const DAY_MS = 86_400_000;

/** Days of March 2030 with `bytes` each, as the gateway would have recorded them. */
function march(server: ReferenceServer, userId: string, bytes: number, days: number[]): void {
  for (const day of days) {
    const at = Date.parse(`2030-03-${String(day).padStart(2, "0")}T10:00:00Z`);
    server.control.recordTraffic(userId, Math.round(bytes), 1, at);
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * An account whose report, as of 2030-03-20, has a known answer: `capped` reached its monthly
 * ceiling on the 10th, `burst` runs above its daily ceiling, `steady` reaches 10 GB on the 25th,
 * `quiet` and the disabled `off` reach nothing. Returns every secret the account handed out.
 */
export async function seedReportAccount(
  server: ReferenceServer,
  api: ProxyClient,
  clock: ManualClock,
  { fillers }: { fillers: number },
): Promise<string[]> {
  const make = (name: string, daily_gb: number | null, monthly_gb: number | null, enabled = true) =>
    api.proxyUsers.create({ name, limits: { daily_gb, monthly_gb }, enabled });
  const [steady, burst, capped, quiet, off] = await Promise.all([
    make("steady", null, 10),
    make("burst", 1, null),
    make("capped", null, 5),
    make("quiet", null, 100),
    make("off", null, 1, false),
  ]);
  if (!steady || !burst || !capped || !quiet || !off) throw new Error("seed users missing");
  const secrets = [steady, burst, capped, quiet, off].map((user) => user.password);
  for (let start = 0; start < fillers; start += 40) {
    const batch = range(start, Math.min(fillers, start + 40) - 1).map((i) =>
      api.proxyUsers.create({ name: `filler-${i}` }),
    );
    for (const user of await Promise.all(batch)) secrets.push(user.password);
  }
  march(server, steady.id, 0.4 * GB, range(1, 19));
  march(server, steady.id, 0.1 * GB, [20]);
  march(server, burst.id, 0.2 * GB, range(1, 12));
  march(server, burst.id, 1.2 * GB, range(13, 19));
  march(server, burst.id, 0.3 * GB, [20]);
  march(server, capped.id, 0.5 * GB, range(1, 10));
  march(server, quiet.id, 0.1 * GB, range(1, 20));
  march(server, off.id, 0.09 * GB, range(1, 10));

  clock.set(Date.parse("2030-03-02T08:00:00Z"));
  for (let i = 0; i < 2; i++) await api.ips.allocate({ product: "isp", country: "us" });
  const billing = await api.keys.create({ name: "billing-bot", scopes: ["billing:write", "billing:read"] });
  const reader = await api.keys.create({
    name: "reader",
    scopes: ["usage:read"],
    expires_at: new Date(Date.parse("2030-03-20T00:00:00Z") + 5 * DAY_MS).toISOString(),
  });
  secrets.push(billing.secret, reader.secret);
  return secrets;
}
