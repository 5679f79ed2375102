import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outsideFolder, workingTreeFiles } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";

/**
 * The names `pulumi-proxy` (npm) and `pulumi_proxy` / `pulumi-proxy` (PyPI) are not published by
 * this project yet, so anyone could publish them: whatever installs them by name could run a
 * stranger's code on the reader's machine. The package and its SDKs come from files (a release's, or the tarball and the wheel inside it).
 */
const NAME = "pulumi[-_]proxy";
/** The name as a whole argument (optionally `@version`), not part of a path or of a file name. */
const BARE = String.raw`(?<![\w./:@-])${NAME}(?:@[^\s"'\`]*)?(?=[\s"'\`)]|$)`;
const BARE_INSTALLS = [
  new RegExp(String.raw`\b(?:npm|pnpm|yarn)\s+(?:install|i|add)\b[^\n#\x60;&|]*${BARE}`),
  new RegExp(String.raw`\bnpx\s+(?:-y|--yes)\b[^\n#\x60;&|]*${BARE}`),
  new RegExp(String.raw`\bnpm\s+exec\s+(?:-y|--yes)\b[^\n#\x60;&|]*${BARE}`),
  new RegExp(String.raw`\bpip3?\s+install\b[^\n#\x60;&|]*${BARE}`),
];
/** A requirements file's line that names the Python package alone resolves it on PyPI. */
const BARE_REQUIREMENT = new RegExp(String.raw`^\s*${NAME}\s*(?:[=<>~!].*)?$`, "m");

/** The dependency specs that never ask a registry: a file, a folder or a git URL (a fork's own). */
const FROM_FILE_OR_GIT = /^(?:file:|git\+|\.{0,2}\/)/;

const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"] as const;

function specsOf(manifest: Record<string, unknown>): string[] {
  return DEPENDENCY_FIELDS.flatMap((field) => {
    const specs = (manifest[field] ?? {}) as Record<string, string>;
    return specs["pulumi-proxy"] !== undefined ? [specs["pulumi-proxy"]] : [];
  });
}

/** Every file a reader follows: the READMEs and docs, and whatever the examples hold. */
async function readerFiles(): Promise<string[]> {
  return (await workingTreeFiles()).filter(
    (file) => file.endsWith(".md") || file.startsWith("examples/") || file.startsWith("docs/"),
  );
}

describe("no README, doc or example installs pulumi-proxy by its bare name", () => {
  const outside = outsideFolder();
  afterAll(() => outside.cleanup());

  it("in a command", async () => {
    const found: string[] = [];
    for (const file of await readerFiles()) {
      const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
      text.split("\n").forEach((line, index) => {
        // A command substitution is a command of its own: `pip install "$(npx pulumi-proxy sdk python)"` installs a file.
        const command = line.replace(/\$\([^)]*\)/g, "$()");
        if (BARE_INSTALLS.some((pattern) => pattern.test(command))) found.push(`${file}:${index + 1}: ${line.trim()}`);
      });
      if (path.basename(file).startsWith("requirements") && BARE_REQUIREMENT.test(text)) found.push(file);
    }
    expect(found, "install the tarball or the wheel from its file").toEqual([]);
  });

  it("in an example's package.json, or in the policy pack `pulumi-proxy policy init` writes", async () => {
    const manifests = (await readerFiles()).filter((file) => path.basename(file) === "package.json");
    const pack = path.join(outside.dir, "proxy-policy");
    execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "policy", "init", pack]);
    const written = { file: path.join(pack, "package.json"), name: "the package.json of `policy init`" };
    const fromRegistry = [
      ...manifests.map((file) => ({ file: path.join(REPO_ROOT, file), name: file })),
      written,
    ].flatMap(({ file, name }) =>
      specsOf(JSON.parse(fs.readFileSync(file, "utf8")))
        .filter((spec) => !FROM_FILE_OR_GIT.test(spec))
        .map((spec) => `${name}: "pulumi-proxy": "${spec}"`),
    );
    expect(fromRegistry, "`npm install` there would fetch the registry's pulumi-proxy").toEqual([]);
  });
});
