import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { ShardResult } from "../../cli/fleet/run";
import { SHARD_SCOPES } from "../../cli/fleet/spec";
import { startReferenceServer } from "../../server";
import type { NodeFreePythonMachine, Ran } from "./nodeFreePython";

/** Three customers' users, as docs/commands/fleet.md describes the users file. */
const USERS_CSV = `customer,name,dailyGb,monthlyGb,enabled
acme,acme-crawler,20,400,true
acme,acme-backfill,,1000,false
globex,globex-scraper,5,100,true
globex,globex-prices,2,50,true
initech,initech-reports,1,10,true
`;
const CUSTOMERS = { acme: 2, globex: 2, initech: 1 };

/** One customer's stack, written as docs/commands/fleet.md tells a program in another language to read its users. */
const PROGRAM = `import csv

import pulumi
import pulumi_proxy as proxy

fleet = pulumi.Config("fleet")
customer = fleet.get("customer") or pulumi.get_stack()
with open(fleet.get("usersFile") or "users.csv", newline="") as users_file:
    users = [row for row in csv.DictReader(users_file) if row["customer"] == customer]


def gb(cell):
    return float(cell) if cell else None


for user in users:
    proxy.ProxyUser(
        user["name"],
        name=user["name"],
        limits=proxy.ProxyUserLimitsArgs(daily_gb=gb(user["dailyGb"]), monthly_gb=gb(user["monthlyGb"])),
        enabled=user["enabled"] != "false",
    )
pulumi.export("userCount", len(users))
`;

/**
 * `pulumi-proxy fleet up`, then `fleet destroy`, of a Python program, run by the release's executable
 * linked as `pulumi-proxy` on a PATH with no node: each customer's stack holds its users, created with
 * its own key of the three shard scopes; the destroy removes the users, the keys and the stacks.
 */
export async function fleetOfPythonPrograms(machine: NodeFreePythonMachine): Promise<void> {
  const createdBy = new Map<string, number>();
  const server = await startReferenceServer({
    rateLimitPerMinute: 100_000,
    log: (line) => {
      const create = / POST \/v1\/proxy-users 201 \S+ (\S+)$/.exec(line);
      if (create?.[1]) createdBy.set(create[1], (createdBy.get(create[1]) ?? 0) + 1);
    },
  });
  try {
    const fleetJson = JSON.stringify({ program: ".", users: "users.csv", concurrency: 3 });
    const dir = machine.program("customers", {
      "__main__.py": PROGRAM,
      "users.csv": USERS_CSV,
      "fleet.json": fleetJson,
    });
    // The admin key that mints the stacks' keys, in the environment, as the fleet's docs say.
    const env = { PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey };
    const fleet = async (op: string) => {
      const ran: Ran = await machine.run("pulumi-proxy", ["fleet", op, "--fleet", ".", "--json"], dir, env);
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      return (JSON.parse(ran.stdout) as { stacks: ShardResult[] }).stacks;
    };

    const up = await fleet("up");
    expect(up.map(({ stack, users, key, outcome }) => ({ stack, users, key, outcome }))).toEqual(
      Object.entries(CUSTOMERS).map(([stack, users]) => ({ stack, users, key: "minted", outcome: "ok" })),
    );
    const held = server.control.snapshot();
    const users = held.proxyUsers as { name: string; enabled: boolean; limits: { daily_gb: number | null } }[];
    expect(users.map((user) => user.name).sort()).toEqual(
      USERS_CSV.trim()
        .split("\n")
        .slice(1)
        .map((row) => row.split(",")[1])
        .sort(),
    );
    expect(users.find((user) => user.name === "acme-backfill")).toMatchObject({
      enabled: false,
      limits: { daily_gb: null },
    });
    const keys = held.keys as { id: string; name: string; scopes: string[] }[];
    for (const [customer, count] of Object.entries(CUSTOMERS)) {
      const key = keys.find((candidate) => candidate.name === `fleet-${customer}`);
      expect(key?.scopes.sort(), customer).toEqual([...SHARD_SCOPES].sort());
      const settings = fs.readFileSync(path.join(dir, `Pulumi.${customer}.yaml`), "utf8");
      expect(settings).toContain(`fleet:keyId: ${key?.id}`);
      expect(createdBy.get(key?.id ?? ""), `${customer}'s users, created with its own key`).toBe(count);
    }
    expect([...createdBy.keys()]).toHaveLength(Object.keys(CUSTOMERS).length);

    const destroyed = await fleet("destroy");
    expect(destroyed.map(({ stack, key, outcome }) => ({ stack, key, outcome }))).toEqual(
      Object.keys(CUSTOMERS).map((stack) => ({ stack, key: "revoked", outcome: "removed" })),
    );
    const after = server.control.snapshot();
    expect(after.proxyUsers).toEqual([]);
    expect((after.keys as { name: string }[]).filter((key) => key.name.startsWith("fleet-"))).toEqual([]);
    const stacks = await machine.must("pulumi", ["stack", "ls", "--json"], dir, env);
    expect(JSON.parse(stacks.stdout)).toEqual([]);
  } finally {
    await server.close();
  }
}
