import { afterEach, describe, expect, it } from "vitest";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

/**
 * A `@pulumi/policy` pack is an analyzer plugin that the engine starts through the language host's
 * RunPlugin (tools/language-host/plugin.go); before, the preview failed with "method RunPlugin not
 * implemented" before checking anything.
 */
const workspaces: CliWorkspace[] = [];
afterEach(() => {
  for (const workspace of workspaces.splice(0)) workspace.cleanup();
});

const POLICY_PACK = {
  "PulumiPolicy.yaml": "runtime: nodejs\n",
  "package.json": JSON.stringify({ name: "widget-policies", version: "0.1.0", main: "index.js" }),
  "index.js": `
const { PolicyPack } = require("@pulumi/policy");
new PolicyPack("widget-policies", {
  policies: [
    {
      name: "widget-size-limit",
      description: "A widget holds at most 10 parts.",
      enforcementLevel: "mandatory",
      validateResource: (resource, reportViolation) => {
        if (resource.type === "pulumi-nodejs:dynamic:Resource" && resource.props.size > 10) {
          reportViolation("size " + resource.props.size + " is above the limit of 10");
        }
      },
    },
  ],
});
`,
};

/** Two dynamic resources; only the first breaks the pack's rule. */
const PROGRAM = {
  "Pulumi.yaml": "name: policed\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
  "package.json": JSON.stringify({ name: "policed", main: "index.js" }),
  "index.js": `
const pulumi = require("@pulumi/pulumi");
const provider = {
  async create(inputs) {
    return { id: "widget-" + inputs.size, outs: inputs };
  },
};
class Widget extends pulumi.dynamic.Resource {
  constructor(name, props) {
    super(provider, name, props);
  }
}
new Widget("oversized-widget", { size: 12 });
new Widget("small-widget", { size: 3 });
`,
};

describe("a policy pack run by `pulumi preview --policy-pack`", () => {
  it("fails the preview on a mandatory violation and names the resource that broke it", async () => {
    const cli = cliWorkspace();
    workspaces.push(cli);
    const pack = cli.project("policy", POLICY_PACK);
    const dir = cli.project("program", PROGRAM);
    expect((await pulumi(["stack", "init", "dev"], dir, cli.env)).code).toBe(0);

    const run = await pulumi(["preview", "--policy-pack", pack], dir, cli.env);
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(
      /\[mandatory\]\s+widget-size-limit\s+\(pulumi-nodejs:dynamic:Resource: oversized-widget\)/,
    );
    expect(run.output).toContain("size 12 is above the limit of 10");
    expect(run.output).not.toContain("small-widget)");
    expect(run.output).not.toContain("not implemented");
  });
});
