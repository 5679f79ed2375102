/**
 * `npm run demo`: the repository's stack (Pulumi.yaml → examples/quickstart) end to end, on a fresh
 * clone, against an embedded reference server on loopback (or a real API with --api-url).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { detectDrift } from "../cli/drift/detect";
import { formatDriftTable } from "../cli/drift/table";
import { reportOf } from "../cli/report/command";
import { renderHtml } from "../cli/report/html";
import { type LocalStack, type LocalStackOptions, loadRepositoryTools, openLocalStack } from "../harness/localStack";
import { ProxyClient } from "../sdk";
import { type ReferenceServer, startReferenceServer } from "../server";
import { gatewayStory } from "./gateway";
import {
  type DemoArgs,
  DemoError,
  findRepoRoot,
  indent,
  parseDemoArgs,
  type QuickstartOutputs,
  ResourceTally,
  say,
  seconds,
  setTotalSteps,
  step,
  summaryLines,
  USAGE,
} from "./support";

const STACK = "demo";
const PROJECT = "pulumi-proxy-demo";

interface Target {
  url: string;
  key: string;
  server?: ReferenceServer;
}

async function startTarget(args: DemoArgs): Promise<Target> {
  if (args.api) {
    say(`API: ${args.api.url} (given with --api-url; the demo touches only the objects it creates)`);
    return { url: args.api.url, key: args.api.key };
  }
  const server = await startReferenceServer({ host: "127.0.0.1", port: 0 });
  say(`API: embedded reference server on ${server.url} (in memory, stops with the demo)`);
  return { url: server.url, key: server.rootKey, server };
}

/**
 * A stack left by an earlier run (--keep, or an interrupted run) is destroyed when it points at this
 * same API. One that pointed at an embedded server is forgotten: its objects ended with that server.
 */
async function clearEarlierRun(stack: Stack, target: Target): Promise<void> {
  const recordedUrl = (await stack.getAllConfig())["proxy:apiUrl"]?.value;
  if (recordedUrl === undefined) return;
  const loopback = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(recordedUrl);
  if (recordedUrl === target.url && !target.server) {
    say(`a stack from an earlier run exists: destroying its objects on ${recordedUrl} first`);
    await stack.destroy({ refresh: true });
  } else if (loopback) {
    say(
      "a stack from an earlier run against an embedded server exists: forgetting it (that server and its objects are gone)",
    );
  } else {
    throw new DemoError(
      `the kept demo stack manages objects on ${recordedUrl}. Run the demo with --api-url ${recordedUrl} to destroy them first.`,
    );
  }
  await stack.workspace.removeStack(STACK, { force: true });
}

/** The demo's stack keeps its state in .pulumi-proxy/demo, so --keep can leave it for inspection. */
async function openStack(repoRoot: string, binDir: string, target: Target, args: DemoArgs): Promise<LocalStack> {
  const options: LocalStackOptions = {
    binDir,
    label: "demo",
    stateDir: path.join(repoRoot, ".pulumi-proxy", "demo"),
    stackName: STACK,
    selectExisting: true,
    workDir: repoRoot,
    // The stack is local and short-lived; set your own passphrase when it holds a real API key.
    passphrase: process.env.PULUMI_CONFIG_PASSPHRASE ?? "pulumi-proxy-demo",
  };
  let local = await openLocalStack(options);
  if (Object.keys(await local.stack.getAllConfig()).length > 0) {
    await clearEarlierRun(local.stack, target);
    local = await openLocalStack(options);
  }
  // On a real account, a random suffix keeps the demo's names clear of existing objects.
  const prefix = target.server ? "demo" : `demo-${randomBytes(2).toString("hex")}`;
  await local.stack.setAllConfig({
    "proxy:apiUrl": { value: target.url },
    "proxy:apiKey": { value: target.key, secret: true },
    [`${PROJECT}:prefix`]: { value: prefix },
    // Allocating an address is charged; on a real API only when asked for.
    [`${PROJECT}:allocateIp`]: { value: String(Boolean(target.server) || args.withIp) },
  });
  say(
    `stack: ${STACK} of ${PROJECT} (Pulumi.yaml → examples/quickstart), state in ${path.relative(repoRoot, local.stateDir)}/backend/`,
  );
  return local;
}

function outputsOf(outputs: Record<string, { value: unknown }>): QuickstartOutputs {
  return Object.fromEntries(Object.entries(outputs).map(([key, output]) => [key, output.value])) as QuickstartOutputs;
}

async function story(stack: Stack, target: Target, args: DemoArgs): Promise<void> {
  // Either the engine's own output (every engine run, with --verbose) or one line per resource, not both.
  const verbose = args.verbose ? { onOutput: (out: string) => process.stdout.write(indent(out)) } : {};
  const engine = (tally: ResourceTally) => ({ color: "never" as const, onEvent: tally.onEvent, ...verbose });
  const client = new ProxyClient({ baseUrl: target.url, apiKey: target.key, userAgent: "pulumi-proxy-demo" });

  let started = step("pulumi up: create the stack's objects");
  const creating = new ResourceTally(args.verbose);
  const created = await stack.up(engine(creating));
  say(`      ${creating.count("create")} created in ${seconds(started)}`);
  const user = outputsOf(created.outputs).proxyUser;
  if (!user) throw new DemoError("the stack has no proxyUser output");

  started = step("pulumi preview: nothing to do right after up");
  const preview = await stack.preview({ color: "never", ...verbose });
  const changes = Object.entries(preview.changeSummary).filter(([op]) => op !== "same");
  if (changes.length > 0)
    throw new DemoError(`expected no changes, the preview plans ${JSON.stringify(preview.changeSummary)}`);
  say(`      no changes: ${preview.changeSummary.same ?? 0} resources unchanged (${seconds(started)})`);

  step("out-of-band change through the SDK (what a dashboard or a script would do)");
  const recordedMonthly = user.limits.monthlyGb;
  const changedMonthly = (recordedMonthly ?? 100) * 2 + 50;
  await client.proxyUsers.update(user.id, { limits: { monthly_gb: changedMonthly } });
  say(
    `      ${user.username}: monthly limit ${recordedMonthly} GB → ${changedMonthly} GB (PATCH /v1/proxy-users/${user.id})`,
  );

  started = step("pulumi preview --refresh: the drift, property by property");
  const report = await detectDrift(stack, verbose);
  say(indent(formatDriftTable(report)));
  const seen = report.drifted.some((drift) =>
    drift.properties.some((property) => property.path === "limits.monthlyGb"),
  );
  if (!seen) throw new DemoError("expected the drift to name limits.monthlyGb");
  say(`      (${seconds(started)})`);

  started = step("pulumi up --refresh: converge back to the program");
  const converging = new ResourceTally(args.verbose);
  const converged = await stack.up({ ...engine(converging), refresh: true });
  const restored = (await client.proxyUsers.get(user.id)).limits.monthly_gb;
  if (restored !== recordedMonthly)
    throw new DemoError(`expected the monthly limit back at ${recordedMonthly} GB, the API holds ${restored}`);
  say(`      ${converging.count("update")} updated; the API holds ${restored} GB/month again (${seconds(started)})`);

  step("summary of the objects (secrets masked)");
  const final = outputsOf(converged.outputs);
  for (const line of summaryLines(final)) say(`      ${line}`);

  // The gateway is the reference server's; a real API's gateways are not the demo's to test.
  if (target.server && final.proxyUserPassword)
    await gatewayStory(target.server, client, user, final.proxyUserPassword);
}

/**
 * The stack's report, as `pulumi-proxy report --stack` writes it, with the drift the story already
 * checked and converged left out (one engine run less). Returns the file's path.
 */
async function writeReport(stack: Stack, target: Target, repoRoot: string): Promise<string> {
  const started = step("pulumi-proxy report: usage against ceilings, spend, keys and coverage, as one HTML page");
  const client = new ProxyClient({ baseUrl: target.url, apiKey: target.key, userAgent: "pulumi-proxy-demo" });
  const deployment = await stack.exportStack();
  const today = new Date().toISOString().slice(0, 10);
  const report = await reportOf(client, today, {
    stack: { name: STACK, stack, deployment, credentialHint: target.key.slice(-4), checkDrift: false },
  });
  const file = path.join(repoRoot, ".pulumi-proxy", "demo", "report.html");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, renderHtml(report));
  say(`      ${report.requests.total} requests (${seconds(started)}); open it in a browser:`);
  say(`      ${file}`);
  return file;
}

async function finish(local: LocalStack | undefined, target: Target, args: DemoArgs, binDir: string): Promise<void> {
  if (!local) return;
  const { stack, envVars } = local;
  if (args.keep) {
    say(
      `\nkept stack ${STACK}: its state is in .pulumi-proxy/demo/backend${target.server ? " (the embedded server stops now, so the next run forgets it)" : ""}`,
    );
    const passphrase = process.env.PULUMI_CONFIG_PASSPHRASE
      ? ""
      : `PULUMI_CONFIG_PASSPHRASE=${envVars.PULUMI_CONFIG_PASSPHRASE} `;
    say(
      `  inspect: cd ${stack.workspace.workDir} && PULUMI_HOME=${envVars.PULUMI_HOME} PULUMI_BACKEND_URL=${envVars.PULUMI_BACKEND_URL} ${passphrase}${binDir}/pulumi stack output --stack ${STACK}`,
    );
    return;
  }
  const started = Date.now();
  say("\ncleaning up: pulumi destroy");
  const verbose = args.verbose ? { onOutput: (out: string) => process.stdout.write(indent(out)) } : {};
  await stack.destroy({ color: "never", onEvent: new ResourceTally(args.verbose).onEvent, ...verbose });
  await stack.workspace.removeStack(STACK);
  const left = target.server?.control.snapshot();
  const leftover = left ? left.proxyUsers.length + left.ips.length + left.keys.length - 1 : 0;
  say(`      stack removed${left ? `; the server holds ${leftover} demo objects` : ""} (${seconds(started)})`);
}

async function main(): Promise<number> {
  let args: DemoArgs | "help";
  try {
    args = parseDemoArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 1;
  }
  if (args === "help") {
    say(USAGE);
    return 0;
  }
  const began = Date.now();
  const repoRoot = findRepoRoot();
  say("pulumi-proxy demo");
  const { provisionPulumi, ensureSelfLink } = await loadRepositoryTools(repoRoot);
  ensureSelfLink();
  const cli = await provisionPulumi();
  say(`Pulumi CLI: v${cli.version} (${cli.source}) in ${cli.binDir}`);
  const target = await startTarget(args);
  setTotalSteps(target.server ? 9 : 7);
  let local: LocalStack | undefined;
  try {
    local = await openStack(repoRoot, cli.binDir, target, args);
    await story(local.stack, target, args);
    const report = await writeReport(local.stack, target, repoRoot);
    await finish(local, target, args, cli.binDir);
    say(`\ndone in ${seconds(began)}; the report: ${report}`);
    return 0;
  } catch (error) {
    process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    // Leave nothing behind on a real API; an embedded server takes its objects with it.
    if (local && !args.keep && !target.server) await finish(local, target, args, cli.binDir).catch(() => undefined);
    return 1;
  } finally {
    await target.server?.close();
  }
}

void main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
