import { spawn } from "node:child_process";
import fs from "node:fs";
import { enginePath, type LocatedCli, locatePulumi } from "../pulumiCli";
import { describeFailure, type StackTarget } from "../stack";
import { adoptionPlan } from "./adoption";
import {
  checkpointSidecars,
  decide,
  describeOperation,
  type FileBackendStack,
  fileBackendStack,
  lockHolders,
  type Operation,
  type PendingOperation,
  pendingOperations,
  projectName,
} from "./state";

/**
 * The steps of `pulumi-proxy recover` (usage in command.ts): each is decided from what the backend
 * holds, taken with the user's own CLI, and reported with its reason as it is taken.
 */

export interface RecoverArgs extends StackTarget {
  operation?: Operation;
  json: boolean;
  /** The engine's own output of the up, destroy or refresh recover runs, to stderr (default: shown). */
  quietEngine?: boolean;
}

export interface RecoverStep {
  action: "remove-empty-sidecar" | "read-state" | "unlock" | "adoption" | "up" | "destroy" | "clear-pending" | "none";
  detail: string;
}

/** What `--json` prints. */
export interface RecoverReport {
  stack: string;
  recovered: boolean;
  /** What recover ran to finish the killed run. */
  operation: Operation | "nothing";
  pendingBefore: string[];
  steps: RecoverStep[];
  error?: string;
}

/** Recovery cannot go on; the message names the stack, what is wrong and the fix. */
export class RecoveryError extends Error {}

/** A stack's report before recover has looked at it. */
export function emptyReport(stack: string): RecoverReport {
  return { stack, recovered: false, operation: "nothing", pendingBefore: [], steps: [] };
}

interface PulumiResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One `pulumi` command on the stack, its output echoed to the log as it comes (a CI log shows progress). */
function runPulumi(
  cli: LocatedCli,
  cwd: string,
  args: string[],
  echo: boolean,
  extraEnv: Record<string, string> = {},
): Promise<PulumiResult> {
  const env = { ...process.env, ...extraEnv, PATH: enginePath(cli) };
  return new Promise((resolve, reject) => {
    const child = spawn(cli.command.command, [...args, "--non-interactive"], { cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (echo) process.stderr.write(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (echo) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export async function recoverStack(
  args: RecoverArgs,
  report: RecoverReport,
  log: (line: string) => void,
): Promise<void> {
  const cli = await locatePulumi(args.pulumiRoot);
  const pulumi = (argv: string[], echo = false, env: Record<string, string> = {}) =>
    runPulumi(cli, args.cwd, argv, echo && !args.quietEngine, env);
  const stackArgs = ["--stack", args.stack];
  const step = (action: RecoverStep["action"], detail: string) => {
    report.steps.push({ action, detail });
    log(`- ${detail}`);
  };
  const failed = (what: string, result: PulumiResult) =>
    new RecoveryError(
      `stack ${args.stack}: \`${what}\` exited ${result.code}:\n${describeFailure({ commandResult: result }, args)}\n` +
        `Fix the cause the lines above name, then run \`pulumi-proxy recover --stack ${args.stack}\` again.`,
    );

  const whoami = await pulumi(["whoami", "--json"]);
  if (whoami.code !== 0) throw failed("pulumi whoami", whoami);
  const backendUrl = String((JSON.parse(whoami.stdout) as { url?: string }).url ?? "");
  const files = fileBackendStack(backendUrl, projectName(args.cwd), args.stack);

  // A live run's lock comes first: its CLI may be writing the very files looked at below.
  const holders = files ? lockHolders(files) : [];
  const live = holders.find((holder) => holder.running);
  if (live) {
    throw new RecoveryError(
      `stack ${args.stack} is locked by a pulumi run that is still going (pid ${live.pid} on this machine, since ${live.timestamp}). ` +
        "recover is for a run that was killed. Fix: wait for it to finish, or stop it, then run recover again.",
    );
  }
  if (files) removeEmptySidecars(files, step);

  const exported = await pulumi(["stack", "export", ...stackArgs]);
  if (exported.code !== 0) throw unreadableState(args.stack, files, exported, failed);
  const pending = pendingOperations(exported.stdout);
  report.pendingBefore = pending.map(describeOperation);
  step(
    "read-state",
    pending.length > 0
      ? `the state records ${pending.length} operation(s) the killed run started and never saw finish: ${report.pendingBefore.join(", ")}`
      : "the state records no operation in flight",
  );

  // Other backends say whether an update is still marked running only when cancelled: assume a killed one.
  const decision = decide(pending, args.operation, args.stack, files ? holders.length > 0 : true);
  if ("refuse" in decision) throw new RecoveryError(decision.refuse);

  if (files) {
    if (holders.length > 0) {
      const holder = holders[0];
      const who = holder?.pid
        ? `pid ${holder.pid} on ${holder.hostname}, taken ${holder.timestamp}`
        : "its holder unknown";
      const cancel = await pulumi(["cancel", "--yes", ...stackArgs]);
      if (cancel.code !== 0) throw failed("pulumi cancel", cancel);
      step(
        "unlock",
        `released the lock the killed run left (${who}) with \`pulumi cancel\`; no process holds it any more`,
      );
    } else {
      step("unlock", "the stack was not locked");
    }
  } else {
    // Pulumi Cloud and object stores: the backend knows whether an update is still marked running.
    // A failed cancel is reported, not fatal: a stack still locked fails the next step with its own words.
    const cancel = await pulumi(["cancel", "--yes", ...stackArgs]);
    const said = `${cancel.stdout}\n${cancel.stderr}`.trim().split("\n").pop();
    step(
      "unlock",
      cancel.code === 0
        ? "marked the killed update as cancelled with `pulumi cancel`"
        : `\`pulumi cancel\` cancelled nothing: ${said}`,
    );
  }

  report.operation = decision.finish;
  if (decision.finish === "nothing") {
    step("none", decision.why);
  } else {
    const argv = [decision.finish, "--yes", "--skip-preview", ...stackArgs];
    const history = () => pulumi(["stack", "history", "--json", ...stackArgs]);
    const plan = decision.finish === "up" ? await adoptionPlan(history, exported.stdout, holders) : undefined;
    if (plan) step("adoption", plan.detail);
    log(`- running \`pulumi ${decision.finish}\`: ${decision.why}`);
    let result: PulumiResult;
    try {
      result = await pulumi(argv, true, plan?.env);
    } finally {
      plan?.remove();
    }
    if (result.code !== 0) throw failed(`pulumi ${decision.finish}`, result);
    step(
      decision.finish,
      decision.finish === "up"
        ? `ran \`pulumi up\` (${decision.why}): the interrupted writes were sent again with the same idempotency keys, so the API replayed them instead of doing them twice`
        : `ran \`pulumi destroy\` (${decision.why})`,
    );
  }

  const left = await pendingAfter(pulumi, stackArgs, args.stack, failed);
  if (left.length > 0) {
    const clear = await pulumi(["refresh", "--yes", "--skip-preview", "--clear-pending-creates", ...stackArgs], true);
    if (clear.code !== 0) throw failed("pulumi refresh --clear-pending-creates", clear);
    step(
      "clear-pending",
      `dropped the state's ${left.length} record(s) of interrupted operations with \`pulumi refresh --clear-pending-creates\`; the \`${decision.finish}\` has finished them`,
    );
    const still = await pendingAfter(pulumi, stackArgs, args.stack, failed);
    if (still.length > 0) {
      throw new RecoveryError(
        `stack ${args.stack}: the state still records ${still.map(describeOperation).join(", ")} after the refresh. ` +
          "Fix: `pulumi refresh --yes --clear-pending-creates` interactively and check `pulumi stack export`.",
      );
    }
  }
  report.recovered = true;
}

function removeEmptySidecars(
  files: FileBackendStack,
  step: (action: RecoverStep["action"], detail: string) => void,
): void {
  for (const sidecar of checkpointSidecars(files)) {
    if (sidecar.bytes !== 0) continue;
    // Checked empty a moment ago, and no live run holds the lock: nothing is lost with it.
    fs.rmSync(sidecar.file);
    step(
      "remove-empty-sidecar",
      `removed ${sidecar.file}: it was empty, left by a kill while the CLI saved the state, and made every command fail with "failed to load checkpoint: EOF"; the state itself is whole`,
    );
  }
}

function unreadableState(
  stack: string,
  files: FileBackendStack | undefined,
  exported: PulumiResult,
  failed: (what: string, result: PulumiResult) => RecoveryError,
): RecoveryError {
  if (!/failed to load checkpoint/i.test(exported.stderr)) return failed("pulumi stack export", exported);
  const kept = files ? checkpointSidecars(files).filter((sidecar) => sidecar.bytes > 0) : [];
  return new RecoveryError(
    `stack ${stack}: the backend cannot load the state (${exported.stderr.trim().split("\n").pop()}). ` +
      (kept.length > 0
        ? `Its metadata sidecars are not empty (${kept.map((s) => `${s.file}, ${s.bytes} bytes`).join("; ")}), so this is not the empty-sidecar case, and recover deletes no file that holds data. `
        : "") +
      (kept.length > 0
        ? `Fix: look at it, then move it aside (\`mv ${kept[0]?.file} ${kept[0]?.file}.broken\`): the backend reads a missing sidecar as no metadata. Then run recover again.`
        : "Fix: compare the checkpoint with its backup (<stack>.json.bak) and `pulumi stack import` a whole one, then run recover again."),
  );
}

async function pendingAfter(
  pulumi: (argv: string[]) => Promise<PulumiResult>,
  stackArgs: string[],
  stack: string,
  failed: (what: string, result: PulumiResult) => RecoveryError,
): Promise<PendingOperation[]> {
  const exported = await pulumi(["stack", "export", ...stackArgs]);
  if (exported.code !== 0) throw failed(`pulumi stack export --stack ${stack}`, exported);
  return pendingOperations(exported.stdout);
}
