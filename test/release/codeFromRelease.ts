import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { npm } from "../support/outside";
import { credentialsConfig } from "./nodeFree";
import type { ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);
const PINNED_PULUMI = require("../../package.json").dependencies["@pulumi/pulumi"] as string;

/** The CLI in `cwd`, non-interactive, with `env` alone; a failure carries what the CLI printed. */
function cliIn(cwd: string, env: NodeJS.ProcessEnv) {
  return (args: string[]) =>
    exec(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--non-interactive"], {
      cwd,
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`pulumi ${args.join(" ")} failed:\n${error.stdout}${error.stderr}`);
    });
}

/**
 * A TypeScript program on the release's npm package, installed from the release's file beside the
 * pinned @pulumi/pulumi as the README's Node.js block does, with the plugin put in the cache by
 * `npx pulumi-proxy provider install`, as the README says for the native provider: `pulumi import`
 * runs no program, so nothing else names the plugin to it. `pulumi import --out imported.ts` then
 * writes the code the program imports, and the program previews clean with it.
 * @returns the generated code
 */
export async function importWithTypeScript(
  root: string,
  release: ServedRelease,
  stack: { apiUrl: string; apiKey: string; legacyId: string },
): Promise<string> {
  const app = path.join(root, "app");
  fs.mkdirSync(app, { recursive: true });
  fs.mkdirSync(path.join(root, "backend"));
  fs.writeFileSync(path.join(app, "Pulumi.yaml"), "name: release-typescript\nruntime: nodejs\n");
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "release-typescript", private: true }));
  fs.writeFileSync(path.join(app, "index.ts"), 'import "./imported";\n');
  await npm(["install", "--save-exact", release.file(".tgz"), `@pulumi/pulumi@${PINNED_PULUMI}`], app);
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(root, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "release-typescript",
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
  await exec("npx", ["pulumi-proxy", "provider", "install"], { cwd: app, env });
  const pulumi = cliIn(app, env);
  await pulumi(["stack", "init", "dev"]);
  await pulumi(credentialsConfig(stack.apiUrl, stack.apiKey));
  fs.writeFileSync(path.join(app, "imported.ts"), "export {};\n");
  const importArgs = ["import", "proxy:index:ProxyUser", "legacy", stack.legacyId, "--yes", "--protect=false"];
  await pulumi([...importArgs, "--out", "imported.ts"]);
  const code = fs.readFileSync(path.join(app, "imported.ts"), "utf8");
  await pulumi(["preview", "--expect-no-changes"]);
  // No destroy: nothing checks it, and the stack's server goes with the suite.
  return code;
}

/**
 * `pulumi convert --language python --generate-only` of a PCL program that declares a user, with
 * the release's plugin in the plugin cache (its schema is what the converter reads).
 * @returns the requirements.txt written
 */
export async function convertToPython(root: string, release: ServedRelease): Promise<string> {
  const pcl = path.join(root, "pcl");
  fs.mkdirSync(pcl, { recursive: true });
  fs.writeFileSync(path.join(pcl, "main.pp"), 'resource legacy "proxy:index:ProxyUser" {\n  name = "legacy"\n}\n');
  const pulumi = cliIn(pcl, { ...process.env, PULUMI_HOME: path.join(root, "home"), PULUMI_SKIP_UPDATE_CHECK: "true" });
  const tarball = release.file("-linux-amd64.tar.gz");
  await pulumi(["plugin", "install", "resource", "proxy", release.version, "--file", tarball]);
  await pulumi(["convert", "--from", "pcl", "--language", "python", "--out", "../python", "--generate-only"]);
  return fs.readFileSync(path.join(root, "python", "requirements.txt"), "utf8");
}
