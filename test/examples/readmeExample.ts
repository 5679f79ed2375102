import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { type LocalStack, openLocalStack } from "../../harness/localStack";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "../../server";
import { blockWith, substitute } from "../support/readmeBlocks";
import { copyOfExample, README_PASSPHRASE, readmeShell } from "../support/readmeRun";
import { runShell } from "../support/shell";
import { EXAMPLES_DIR } from "./harness";

/** The stack name every example README creates with `pulumi stack init dev`. */
const README_STACK = "dev";

export interface ReadmeExample {
  /** The user's copy of the example, where the README's commands run. */
  dir: string;
  server: ReferenceServer;
  api: ProxyClient;
  /**
   * Runs the README's one shell block that contains `words`, word for word apart from the API's
   * placeholders, and returns what it printed; a non-zero exit throws with the output.
   */
  runBlock(words: string): Promise<string>;
  /** The stack the README's blocks created, opened for the test's own steps and assertions. */
  stack(): Promise<LocalStack["stack"]>;
  cleanup(): Promise<void>;
}

/**
 * An example's README run the way its user runs it, so the example's test can build its stack with
 * the README's own commands (marked `readme:skip <this test> runs it`) instead of its own: the example
 * copied to a folder of its own, node_modules resolving to the repository's as after `npm install`,
 * a fresh reference server, the suite's pulumi CLI, a file backend and a passphrase, and no
 * credentials in the environment (the README's `config set` lines must supply them).
 */
export async function readmeExample(
  example: string,
  serverOptions: ReferenceServerOptions = {},
): Promise<ReadmeExample> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), `pulumi-proxy-readme-${example}-`));
  const dir = copyOfExample(example, tempDir, true);
  const stateDir = path.join(tempDir, "state");
  // openLocalStack puts the backend and Pulumi home at the same places under stateDir.
  const env = readmeShell({
    home: path.join(stateDir, "user-home"),
    pulumiHome: path.join(stateDir, "home"),
    backend: path.join(stateDir, "backend"),
  });
  const binDir = inject("pulumiBinDir");
  const server = await startReferenceServer({ rateLimitPerMinute: 100_000, ...serverOptions });
  const readme = path.join(EXAMPLES_DIR, example, "README.md");
  let opened: LocalStack | undefined;

  return {
    dir,
    server,
    api: new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey }),
    async runBlock(words) {
      const script = substitute(blockWith(readme, words).script, { url: server.url, key: server.rootKey });
      const { code, output } = await runShell(["-euo", "pipefail"], script, dir, env);
      if (code !== 0) throw new Error(`${readme}: exit ${code} running\n${script}\n--- output ---\n${output}`);
      return output;
    },
    async stack() {
      opened ??= await openLocalStack({
        binDir,
        label: "readme",
        stateDir,
        stackName: README_STACK,
        selectExisting: true,
        passphrase: README_PASSPHRASE,
        workDir: dir,
        // The reader's HOME and prompts; the Pulumi home, backend and passphrase are the stack's own.
        envVars: {
          HOME: env.HOME ?? stateDir,
          PULUMI_SKIP_CONFIRMATIONS: "true",
          PULUMI_NODEJS_TRANSPILE_ONLY: "true",
        },
      });
      return opened.stack;
    },
    async cleanup() {
      // No `stack rm`: the backend goes with the folder, and the server with its objects.
      await server.close();
      fs.rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

/**
 * The first JSON value among a block's output, as `pulumi stack output <name>` prints it: on one line,
 * or (`--json`) over several from a line that starts with the bracket. The rest is the engine's own output.
 */
export function printedJson(printed: string): unknown {
  const lines = printed.split("\n");
  for (let start = 0; start < lines.length; start++) {
    if (!/^[[{]/.test(lines[start] ?? "")) continue;
    for (let end = start; end < lines.length; end++) {
      try {
        return JSON.parse(lines.slice(start, end + 1).join("\n"));
      } catch {
        // Not yet a whole value: take the next line too.
      }
    }
  }
  throw new Error(`no JSON value in:\n${printed}`);
}
