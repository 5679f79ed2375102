import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CostItem, PlanJson } from "../../cli/plan/model";
import type { BillingCharge } from "../../sdk";
import { type ExampleFixture, exampleFixture } from "../examples/harness";
import { runCli } from "../support/cli";

const DAY_MS = 24 * 60 * 60 * 1000;
const json = (value: unknown) => ({ value: JSON.stringify(value) });
/** Four plans and three ups: more than the suite's 300 s on a loaded 2-core machine. */
const MANY_ENGINE_RUNS = { timeout: 600_000 };
type Charge = { amount_cents: number; ref: string | null | undefined };
const byAmountThenRef = (a: Charge, b: Charge) =>
  a.amount_cents - b.amount_cents || `${a.ref}`.localeCompare(`${b.ref}`);

/**
 * The server's clock follows real time at an offset: the addresses are allocated 11.5 days in the
 * past, then the clock returns to now, so a charged replacement is prorated over 19 days (18.5
 * rounded up) and the plan, which prices at its own time, sees the same day as the server.
 */
let offsetMs = -11.5 * DAY_MS;
const clock = { now: () => Date.now() + offsetMs };

const ADDRESSES = {
  edge: { product: "dedicated", country: "us", city: "new york", replace: "r0", maxChargeCents: 400 },
  backup: { product: "isp", country: "de", replace: "r0" },
  spare: { product: "isp", country: "gb", replace: "r0" },
};

describe("pulumi-proxy plan: the cost is exact, to the cent, against what the API then charges", () => {
  let fixture: ExampleFixture;
  let env: Record<string, string>;
  const plan = async (): Promise<{ code: number | null; plan: PlanJson }> => {
    const result = await runCli(["plan", "--stack", fixture.stackName, "--cwd", fixture.dir, "--json"], env);
    expect(result.stderr).toBe("");
    return { code: result.code, plan: JSON.parse(result.stdout) as PlanJson };
  };
  const charges = async (): Promise<BillingCharge[]> => {
    const all: BillingCharge[] = [];
    for await (const charge of fixture.api.billing.charges()) all.push(charge);
    return all;
  };
  /** What the plan says will be charged, in the API's words: kind and amount, with the allocation for a replacement. */
  const expected = (items: CostItem[], ids: Record<string, string>) =>
    items
      .filter((item) => item.amountCents > 0 && !item.willBeRefused)
      .map((item) => ({
        kind: item.kind === "allocation" ? "ip_allocation" : "ip_replacement",
        amount_cents: item.amountCents,
        ref: item.allocationId ?? ids[item.name],
      }))
      .sort(byAmountThenRef);
  const recorded = (list: BillingCharge[]) =>
    list.map(({ kind, amount_cents, ref }) => ({ kind, amount_cents, ref })).sort(byAmountThenRef);
  const allocationIds = async () =>
    Object.fromEntries(
      (await fixture.stack.exportStack()).deployment.resources
        .filter((resource: { type: string }) => resource.type.endsWith("proxy:IpAllocation"))
        .map((resource: { urn: string; id: string }) => [resource.urn.split("::").pop(), resource.id]),
    ) as Record<string, string>;

  beforeAll(async () => {
    fixture = await exampleFixture(
      "gitops",
      { "gitops:prefix": "cost" },
      { PULUMI_NODEJS_TRANSPILE_ONLY: "true" },
      { clock, balanceCents: 100_000 },
    );
    env = { ...(process.env as Record<string, string>), ...fixture.envVars };
  });
  afterAll(async () => {
    // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
    await fixture?.cleanup();
  });

  it(
    "prices allocations, free and charged replacements and a refused one, and up charges exactly that",
    MANY_ENGINE_RUNS,
    async () => {
      // 1. Three new allocations: one term each, isp 300 and dedicated 500 cents.
      await fixture.stack.setConfig("gitops:addresses", json(ADDRESSES));
      const first = await plan();
      expect(first.code).toBe(2);
      expect(first.plan.cost.totalCents).toBe(1100);
      expect(first.plan.cost.total).toBe("$11.00");
      await fixture.stack.up();
      let ids = await allocationIds();
      expect(recorded(await charges())).toEqual(expected(first.plan.cost.items, ids));

      // 2. Back to the present; edge and spare use their two free replacements outside Pulumi.
      offsetMs = 0;
      for (const name of ["edge", "spare"]) {
        for (const round of [1, 2]) {
          await fixture.api.ips.replace(ids[name] as string, { reason: `out of band ${round}` });
        }
      }
      const before = (await charges()).length;

      // 3. edge's third replacement this month is charged and fits its ceiling; backup's first is
      //    free; a new allocation pays a term; a key gains billing:write.
      await fixture.stack.setConfig(
        "gitops:addresses",
        json({
          ...ADDRESSES,
          edge: { ...ADDRESSES.edge, replace: "r1" },
          backup: { ...ADDRESSES.backup, replace: "r1" },
          extra: { product: "isp", country: "us" },
        }),
      );
      await fixture.stack.setConfig(
        "gitops:keys",
        json({ "usage-reports": { scopes: ["usage:read", "billing:write"] } }),
      );
      const second = await plan();
      expect(second.code).toBe(2);
      const byName = Object.fromEntries(second.plan.cost.items.map((item) => [item.name, item]));
      expect(byName.edge).toMatchObject({
        kind: "replacement",
        amountCents: Math.ceil((500 * 19) / 30),
        free: false,
        freeReplacementsRemaining: 0,
        remainingTermDays: 19,
        maxChargeCents: 400,
        willBeRefused: false,
      });
      expect(byName.backup).toMatchObject({ kind: "replacement", amountCents: 0, free: true, willBeRefused: false });
      expect(byName.extra).toMatchObject({ kind: "allocation", amountCents: 300 });
      expect(second.plan.cost.totalCents).toBe(317 + 300);

      const markdown = await runCli(["plan", "--stack", fixture.stackName, "--cwd", fixture.dir, "--markdown"], env);
      expect(markdown.stdout).toContain("Cost **$6.17**");
      expect(markdown.stdout).toContain("`edge` replacement: $3.17 — charged, fits max 400 cents");
      expect(markdown.stdout).toContain("gains **`billing:write`**");

      await fixture.stack.up();
      ids = await allocationIds();
      expect(recorded((await charges()).slice(0, -before))).toEqual(expected(second.plan.cost.items, ids));

      // 4. spare's third replacement costs 190 cents with no ceiling set: refused, and nothing is charged.
      await fixture.stack.setConfig(
        "gitops:addresses",
        json({
          ...ADDRESSES,
          edge: { ...ADDRESSES.edge, replace: "r1" },
          backup: { ...ADDRESSES.backup, replace: "r1" },
          extra: { product: "isp", country: "us" },
          spare: { ...ADDRESSES.spare, replace: "r1" },
        }),
      );
      const third = await plan();
      expect(third.code).toBe(2);
      expect(third.plan.cost.items).toEqual([
        expect.objectContaining({ name: "spare", amountCents: 190, maxChargeCents: 0, willBeRefused: true }),
      ]);
      expect(third.plan.cost.totalCents).toBe(0);
      const chargedSoFar = (await charges()).length;
      await expect(fixture.stack.up()).rejects.toThrow(/replacing it would cost 190 cents/);
      expect((await charges()).length).toBe(chargedSoFar);
    },
  );
});
