import fs from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ensureChromium } from "../harness/browser";
import { ensureQemuAarch64 } from "../harness/debian";
import { buildIfStale } from "../tools/build.mjs";
import { provisionPulumi } from "../tools/provision-pulumi.mjs";
import { ensureSelfLink } from "../tools/self-link.mjs";
import { ensureWheelhouse, WHEELHOUSE_ENV } from "./support/wheelhouse";

declare module "vitest" {
  export interface ProvidedContext {
    pulumiBinDir: string;
  }
}

/**
 * Engine tests run the provider the way users do: the dynamic-provider process loads the compiled
 * package through node_modules, so it is built first when a source is newer than the last build
 * (after `npm ci`, whose `prepare` built it, it is not), and stamped: a test that runs `npm run demo`
 * or `npm run build` then finds dist/ fresh instead of recompiling it under the engine tests that load
 * it meanwhile.
 * Every engine test runs the real CLI, so a provisioning failure fails the run instead of skipping
 * tests.
 */
export default async function setup(project: TestProject): Promise<void> {
  await buildIfStale();
  pruneCodeCache(project.config.env?.PULUMI_PROXY_CODE_CACHE_DIR);
  // The browser tests drive Debian's chromium; a fresh machine (CI) gets the package here, once.
  ensureChromium();
  // The release test runs the linux-arm64 plugin under qemu's user mode.
  ensureQemuAarch64();
  ensureSelfLink();
  // Once per machine, before the workers, which inherit where it is: every venv of the suite
  // installs from it (machineCaches).
  const wheelhouse = ensureWheelhouse();
  if (wheelhouse) process.env[WHEELHOUSE_ENV] = wheelhouse;
  const cli = await provisionPulumi({ yaml: true });
  process.env.PATH = `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}`;
  project.provide("pulumiBinDir", cli.binDir);
}

/** The size past which the code cache (vitest.config.mts) starts again: it keeps every build's modules. */
const CODE_CACHE_LIMIT_BYTES = 512 * 1024 * 1024;

function pruneCodeCache(dir: string | undefined): void {
  if (!dir || !fs.existsSync(dir)) return;
  let bytes = 0;
  for (const entry of fs.readdirSync(dir))
    bytes += fs.statSync(path.join(dir, entry), { throwIfNoEntry: false })?.size ?? 0;
  if (bytes > CODE_CACHE_LIMIT_BYTES) fs.rmSync(dir, { recursive: true, force: true });
}
