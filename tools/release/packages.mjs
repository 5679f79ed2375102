// @ts-check
/**
 * Each language's own package, made from SDKs the release regenerated with its plugin download URL:
 * the npm tarball (this package, with the Node SDK compiled in), the Python wheel, and the Go SDK as
 * a module zip with its go.sum.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { pipWheel } from "../python-wheel.mjs";

const exec = promisify(execFile);

/**
 * The npm tarball, packed from `packageDir`, whose dist/ holds the compiled package; added here: the
 * plugin bundle `provider install` copies, the regenerated Node SDK compiled, the wheel and the Go
 * module (`pulumi-proxy sdk python|go` names them), and the repository's manifest and the files it
 * ships outside dist/.
 * Scripts are off: dist/ is already the release build, and `prepack` would rebuild it from the
 * committed SDK.
 * @param {{ repoRoot: string, packageDir: string, outDir: string,
 *   contents: { pluginScript: string, nodeSdk: string, wheel: string, goModule: string } }} options
 */
export async function packNpm({ repoRoot, packageDir, outDir, contents }) {
  const dist = path.join(packageDir, "dist");
  fs.mkdirSync(path.join(dist, "plugin"));
  fs.copyFileSync(contents.pluginScript, path.join(dist, "plugin", path.basename(contents.pluginScript)));
  const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  const nodeSdk = path.join(dist, "native-sdk", "nodejs");
  const noMaps = ["--sourceMap", "false", "--declarationMap", "false"];
  await exec(process.execPath, [tsc, "-p", contents.nodeSdk, "--outDir", nodeSdk, ...noMaps]);
  fs.copyFileSync(path.join(contents.nodeSdk, "package.json"), path.join(nodeSdk, "package.json"));
  fs.mkdirSync(path.join(dist, "native-sdk", "python"));
  fs.copyFileSync(contents.wheel, path.join(dist, "native-sdk", "python", path.basename(contents.wheel)));
  fs.cpSync(contents.goModule, path.join(dist, "native-sdk", "go"), { recursive: true });

  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
  for (const file of ["package.json", "README.md", "LICENSE", "CHANGELOG.md"]) {
    fs.copyFileSync(path.join(repoRoot, file), path.join(packageDir, file));
  }
  // Every other file the manifest ships beside dist/: the build scripts, and the process helpers the
  // CLI requires at start (provider/process/*.cjs), without which `npx pulumi-proxy` cannot run.
  const outsideDist = (/** @type {string} */ entry) => !entry.startsWith("dist/") && !entry.startsWith("!");
  for (const file of manifest.files.filter(outsideDist)) {
    fs.mkdirSync(path.dirname(path.join(packageDir, file)), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, file), path.join(packageDir, file));
  }
  const { stdout } = await exec("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", outDir], {
    cwd: packageDir,
  });
  return path.join(outDir, JSON.parse(stdout)[0].filename);
}

/** The wheel of the regenerated Python SDK, into `outDir`. @param {{ sdkDir: string, outDir: string }} options */
export function buildWheel({ sdkDir, outDir }) {
  const built = pipWheel(sdkDir, path.join(path.dirname(sdkDir), "wheel"));
  const wheel = path.join(outDir, path.basename(built));
  fs.copyFileSync(built, wheel);
  return wheel;
}

/**
 * The Go SDK as a module a program's go.mod replaces: its go.mod requires the Pulumi Go SDK of the
 * pinned Node SDK's version (the generator writes an old floor), and `go mod tidy` writes the go.sum
 * that a build with the default `-mod=readonly` needs. Zipped with one top folder,
 * `pulumi-proxy-sdk-go/`. @param {{ sdkDir: string, outDir: string, version: string, pulumiVersion: string }} options
 */
export async function zipGoModule({ sdkDir, outDir, version, pulumiVersion }) {
  const env = {
    ...process.env,
    GOFLAGS: "-mod=mod",
    // The module proxy serves Pulumi's modules, but this network's checksum database has no entries for them.
    GONOSUMDB: [process.env.GONOSUMDB, "github.com/pulumi/pulumi"].filter(Boolean).join(","),
  };
  await exec("go", ["mod", "edit", "-require", `github.com/pulumi/pulumi/sdk/v3@v${pulumiVersion}`], {
    cwd: sdkDir,
    env,
  });
  await exec("go", ["mod", "tidy"], { cwd: sdkDir, env });
  const top = path.join(path.dirname(sdkDir), "pulumi-proxy-sdk-go");
  fs.rmSync(top, { recursive: true, force: true });
  fs.renameSync(sdkDir, top);
  const zip = path.join(outDir, `pulumi-proxy-sdk-go-v${version}.zip`);
  await exec("zip", ["-q", "-r", "-X", zip, path.basename(top)], { cwd: path.dirname(top) });
  return { zip, moduleDir: top };
}
