import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanJson } from "../../cli/plan/model";
import { type PlannedStep, stepCollector } from "../../cli/plan/steps";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";
import { observe, type Spec, specRounds } from "./planRounds";

/**
 * `pulumi-proxy plan` is the provider's own prediction: each round changes inputs of every kind (and
 * sometimes the account, out of band), runs the real `plan --json`, then `up`, and holds what the plan
 * said against what the engine did, what the API then holds and what the server charged. The rounds
 * are generated in planRounds.ts from every input of every kind.
 */
describe("pulumi-proxy plan predicts exactly what up does and charges", () => {
  let server: ReferenceServer;
  let api: ProxyClient;
  let harness: TestStack;
  let workDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000, balanceCents: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    workDir = fs.mkdtempSync(path.join(REPO_ROOT, ".pulumi-proxy", "plan-predicts-"));
    fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), "name: plan-predicts\nruntime: nodejs\nmain: index.js\n");
    fs.writeFileSync(
      path.join(workDir, "index.js"),
      [
        'const pulumi = require("@pulumi/pulumi");',
        'const proxy = require("pulumi-proxy");',
        'const spec = new pulumi.Config().requireObject("spec");',
        "for (const [name, args] of Object.entries(spec.users)) new proxy.ProxyUser(name, args);",
        "for (const [name, args] of Object.entries(spec.keys)) new proxy.ApiKey(name, args);",
        "for (const [name, args] of Object.entries(spec.ips)) new proxy.IpAllocation(name, args);",
        "",
      ].join("\n"),
    );
    harness = await createTestStack({
      workDir,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
    });
    env = { ...(process.env as Record<string, string>), ...harness.envVars };
  });
  afterAll(async () => {
    // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
    await harness?.cleanup();
    await server?.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  const plan = async (refresh: boolean): Promise<PlanJson> => {
    const args = ["plan", "--stack", harness.stackName, "--cwd", workDir, "--json", ...(refresh ? ["--refresh"] : [])];
    const result = await runCli(args, env);
    expect(result.stderr).toBe("");
    return JSON.parse(result.stdout) as PlanJson;
  };

  const up = async (refresh: boolean): Promise<{ steps: PlannedStep[]; failed: boolean }> => {
    const collector = stepCollector();
    const failed = await harness.stack.up({ refresh, onEvent: collector.onEvent }).then(
      () => false,
      () => true,
    );
    return { steps: collector.steps(), failed };
  };

  it("for every input of every kind, with and without out-of-band changes", { timeout: 900_000 }, async () => {
    let spec: Spec | undefined;
    // Nothing happens between one round's up and the next round's start, so its observation carries over.
    let live = await observe(api, harness.stack);
    for (const round of specRounds()) {
      await round.outOfBand?.(api, live, server);
      spec = round.spec(live);
      await harness.stack.setConfig("plan-predicts:spec", { value: JSON.stringify(spec) });
      const predicted = await plan(round.refresh);
      const before = round.outOfBand ? await observe(api, harness.stack) : live;
      const done = await up(round.refresh);
      const after = await observe(api, harness.stack);
      const context = `round "${round.title}"`;

      // The operations, and the inputs each changes.
      expect(done.failed, context).toBe(round.upFails ?? false);
      expect(
        predicted.changes.map((c) => `${c.name}:${c.op}`),
        context,
      ).toEqual(done.steps.map((s) => `${s.name}:${s.op}`));
      for (const change of predicted.changes.filter((c) => c.op === "update" || c.op === "replace")) {
        if (done.failed) break;
        const changedInputs = after.inputDiff(before, change.name);
        const named = [...new Set(change.properties.map((p) => p.path.split(".")[0]))].sort();
        expect(named, `${context}: inputs of ${change.name}`).toEqual(changedInputs);
      }

      // The charges, to the cent and by allocation.
      const charged = after.chargesSince(before);
      expect(predicted.cost.totalCents, context).toBe(charged.reduce((sum, c) => sum + c.amount_cents, 0));
      const priced = predicted.cost.items.filter((item) => item.amountCents > 0 && !item.willBeRefused);
      expect(priced.map((item) => item.amountCents).sort(), context).toEqual(charged.map((c) => c.amount_cents).sort());

      // The swaps, free ones included: the plan lists a replacement exactly where up swaps an address.
      if (!done.failed) {
        const swaps = predicted.cost.items.filter((item) => item.kind === "replacement").map((item) => item.name);
        expect(swaps.sort(), context).toEqual(after.addressesSwappedSince(before));
      }

      // Access: rotations, keys made and revoked, logins enabled or disabled, ceilings.
      const rotated = predicted.access.keys.filter((k) => k.change === "rotated").map((k) => k.name);
      expect(rotated.sort(), context).toEqual(after.keysRotatedSince(before));
      for (const user of predicted.access.users) {
        const enabled = after.userEnabled(user.name);
        if (user.change === "disabled" || user.change === "held") expect(enabled, context).toBe(false);
        if (user.change === "enabled" || user.change === "released") expect(enabled, context).toBe(true);
      }
      for (const ceiling of predicted.access.ceilings) {
        expect(after.userLimit(ceiling.name, ceiling.limit), context).toBe(ceiling.after);
      }
      const blocked = predicted.access.ceilings.filter((c) => c.blocksNow).map((c) => `${c.name}:${c.limit}`);
      expect(blocked, context).toEqual(round.expectBlocked ?? []);
      for (const note of round.expectNotes ?? []) {
        expect(predicted.changes.flatMap((c) => c.notes).join("\n"), context).toMatch(note);
      }
      expect(JSON.stringify(predicted), context).not.toMatch(/__identity|live_|"secret":\s*"[^[]/);
      live = after;
    }
    expect(spec).toBeDefined();
  });
});
