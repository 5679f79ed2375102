import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { pythonInterpreter } from "../support/nodeFree";
import { REPO_ROOT } from "../support/pulumi";
import { atRelease, releaseBlocks } from "../support/readmeBlocks";
import type { ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);

/** The README's Install blocks, by language: what a user runs to install from a release. */
export const INSTALL = releaseBlocks(path.join(REPO_ROOT, "README.md"));
export function installBlock(language: string, release: ServedRelease): string {
  const block = INSTALL.get(language);
  if (!block) throw new Error(`README.md has no <!-- readme:release ${language} --> block`);
  return atRelease(block, release.baseUrl);
}

/** What reaching a package registry needs (certificates, pip's and Go's settings), and nothing else. */
export const REGISTRY_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([name]) =>
    /^(PIP_|SSL_CERT|CURL_CA|GOPROXY$|GOSUMDB$|GONOSUMDB$|GOPRIVATE$|https?_proxy$|no_proxy$)/i.test(name),
  ),
);

/**
 * Runs a README block with bash by its path (the case's PATH has no /bin), asynchronously: the
 * release it downloads from is served by this process.
 */
export async function runInstallBlock(
  language: string,
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  await exec("/bin/bash", ["-euo", "pipefail", "-c", script], { cwd, env, maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(
        `README.md's ${language} install block exited ${error.code}:\n${script}\n${error.stdout}${error.stderr}`,
      );
    },
  );
}

/** A PATH with the Pulumi CLI, its language hosts and a case's tools, and no node or npm. */
export function nodeFreePath(root: string, tools: string[]): string {
  const shims = path.join(root, "tools");
  fs.mkdirSync(shims, { recursive: true });
  for (const tool of tools) {
    const found =
      tool === "python3"
        ? pythonInterpreter()
        : spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (!found) throw new Error(`${tool} is not on this machine's PATH`);
    fs.symlinkSync(found, path.join(shims, tool));
  }
  return [inject("pulumiBinDir"), shims].join(path.delimiter);
}

/** A stack's API URL and, as a secret, its key, in one `pulumi config set-all`: a CLI start and a key derivation fewer than two `config set`. */
export function credentialsConfig(apiUrl: string, apiKey: string): string[] {
  return ["config", "set-all", "--plaintext", `proxy:apiUrl=${apiUrl}`, "--secret", `proxy:apiKey=${apiKey}`];
}
