import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { closingItsClients } from "./inlineRuns";
import { readResultsAtFirstUse } from "./stackReads";

/**
 * One isolated local Pulumi stack, the way the tests, the benchmarks and the demo each need it: its
 * own Pulumi home and file:// backend (so nothing touches ~/.pulumi or another run's state), a
 * passphrase secrets provider, the pinned CLI first on PATH, and a name no other run uses.
 */
export interface LocalStackOptions {
  /** The folder holding the `pulumi` binary; it goes first on PATH. */
  binDir: string;
  /** Names the temp folder (`pulumi-proxy-<label>-…`), the default passphrase and, by its first letter, the stack. */
  label: string;
  /** Home and backend live here and outlive `cleanup` (the demo's --keep). Default: a temp folder that `cleanup` removes. */
  stateDir?: string;
  /** Default: unique, `<first letter of label><time><random>`. */
  stackName?: string;
  /** Select the stack when it exists already instead of failing. */
  selectExisting?: boolean;
  /** Default `<label>-passphrase`. */
  passphrase?: string;
  /** A secrets provider instead of the passphrase (vaultTransit.ts): its URL, and what the CLI needs to reach it. */
  secretsProvider?: { url: string; env: Record<string, string> };
  /** An inline program; it runs in `<programsDir>/<stackName>`, created here and removed by `cleanup`. */
  program?: PulumiFn;
  /**
   * Where inline programs get their work folder. The dynamic-provider process runs there and must
   * resolve `pulumi-proxy` from a node_modules above it, so it lies inside the repository.
   */
  programsDir?: string;
  /** A directory holding Pulumi.yaml, for local programs such as the examples. */
  workDir?: string;
  projectName?: string;
  config?: Record<string, { value: string; secret?: boolean }>;
  /** Added to the stack's environment, after the isolation variables (so they may override them). */
  envVars?: Record<string, string>;
}

export interface LocalStack {
  stack: Stack;
  stackName: string;
  /** Home (`home/`) and backend (`backend/`) of this stack, plus room for the caller's own files. */
  stateDir: string;
  /** The environment the engine runs with: PULUMI_HOME, PULUMI_BACKEND_URL, the passphrase, PATH. */
  envVars: Record<string, string>;
  /** Removes the stack, its work folder, and the state folder when it was a temp one. */
  cleanup(): Promise<void>;
}

export async function openLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const temporary = options.stateDir === undefined;
  const stateDir = options.stateDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `pulumi-proxy-${options.label}-`));
  const backendDir = path.join(stateDir, "backend");
  const pulumiHome = path.join(stateDir, "home");
  fs.mkdirSync(backendDir, { recursive: true });
  fs.mkdirSync(pulumiHome, { recursive: true });
  const envVars: Record<string, string> = {
    PULUMI_CONFIG_PASSPHRASE: options.passphrase ?? `${options.label}-passphrase`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_BACKEND_URL: `file://${backendDir}`,
    PULUMI_HOME: pulumiHome,
    PATH: `${options.binDir}${path.delimiter}${process.env.PATH ?? ""}`,
    ...options.secretsProvider?.env,
    ...options.envVars,
  };
  const stackName =
    options.stackName ?? `${options.label.charAt(0)}${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const workspace = {
    pulumiHome,
    envVars,
    pulumiCommand: await pulumiCommandIn(options.binDir),
    ...(options.secretsProvider ? { secretsProvider: options.secretsProvider.url } : {}),
  };
  // Both read `this`, so they are called on LocalWorkspace.
  const open = (options.selectExisting ? LocalWorkspace.createOrSelectStack : LocalWorkspace.createStack).bind(
    LocalWorkspace,
  );
  let inlineWorkDir: string | undefined;
  let stack: Stack;
  let inlineRuns: ReturnType<typeof closingItsClients> | undefined;
  if (options.program) {
    inlineRuns = closingItsClients(options.program);
    if (!options.programsDir) throw new Error("an inline program needs programsDir");
    inlineWorkDir = path.join(options.programsDir, stackName);
    fs.mkdirSync(inlineWorkDir, { recursive: true });
    const projectName = options.projectName ?? `pulumi-proxy-${options.label}`;
    stack = await open(
      { stackName, projectName, program: inlineRuns.program },
      {
        ...workspace,
        workDir: inlineWorkDir,
        projectSettings: { name: projectName, runtime: "nodejs", backend: { url: envVars.PULUMI_BACKEND_URL } },
      },
    );
  } else {
    if (!options.workDir) throw new Error("openLocalStack needs either a program or a workDir");
    stack = await open({ stackName, workDir: options.workDir }, workspace);
  }
  // One CLI call for all of it: each call costs a CLI start and, for a secret, the passphrase's key derivation.
  if (options.config && Object.keys(options.config).length > 0) await stack.setAllConfig(options.config);
  readResultsAtFirstUse(stack, envVars.PULUMI_BACKEND_URL);
  inlineRuns?.closeAfterEachOperation(stack);
  return {
    stack,
    stackName,
    stateDir,
    envVars,
    async cleanup() {
      if (temporary) {
        // The backend goes with the state folder: of what `stack rm` removes, only the stack's
        // settings file lies outside it. One CLI start fewer per stack.
        fs.rmSync(path.join(stack.workspace.workDir, `Pulumi.${stackName}.yaml`), { force: true });
        fs.rmSync(stateDir, { recursive: true, force: true });
      } else {
        await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
      }
      if (inlineWorkDir) fs.rmSync(inlineWorkDir, { recursive: true, force: true });
      inlineRuns?.closeAll();
    },
  };
}

/**
 * One `pulumi version` per CLI and process: PulumiCommand.get runs it each time to learn the version,
 * and a test file opens many stacks with the same CLI.
 */
const commands = new Map<string, Promise<PulumiCommand>>();

function pulumiCommandIn(binDir: string): Promise<PulumiCommand> {
  let command = commands.get(binDir);
  if (!command) {
    command = PulumiCommand.get({ root: path.dirname(binDir) });
    commands.set(binDir, command);
    command.catch(() => commands.delete(binDir));
  }
  return command;
}

interface RepositoryTools {
  provisionPulumi(): Promise<{ binDir: string; version: string; source: string }>;
  ensureSelfLink(): void;
}

/**
 * The CLI provisioning and self-link scripts are plain ESM next to the sources and are not compiled
 * into dist, so compiled callers (the demo, the bench) load them from the repository.
 */
export async function loadRepositoryTools(repoRoot: string): Promise<RepositoryTools> {
  const load = (name: string) => import(pathToFileURL(path.join(repoRoot, "tools", name)).href);
  const provision = (await load("provision-pulumi.mjs")) as Pick<RepositoryTools, "provisionPulumi">;
  const selfLink = (await load("self-link.mjs")) as Pick<RepositoryTools, "ensureSelfLink">;
  return { provisionPulumi: provision.provisionPulumi, ensureSelfLink: selfLink.ensureSelfLink };
}
