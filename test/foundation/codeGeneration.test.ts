import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

/**
 * The language host's code generation (tools/language-host/codegen.go), through the real CLI: the
 * calls upstream's host answers and this project's host once answered with "not implemented".
 */
const exec = promisify(execFile);
const workspaces: CliWorkspace[] = [];
afterEach(() => {
  for (const workspace of workspaces.splice(0)) workspace.cleanup();
});
function workspace(): CliWorkspace {
  const created = cliWorkspace();
  workspaces.push(created);
  return created;
}

/** A made-up package with one resource: what gen-sdk gets, and what the source plugin below serves. */
const GADGETS_SCHEMA = {
  name: "gadgets",
  version: "1.0.0",
  resources: {
    "gadgets:index:Gadget": {
      description: "A gadget with a size and a label.",
      inputProperties: { size: { type: "integer" }, label: { type: "string" } },
      requiredInputs: ["size"],
      properties: { size: { type: "integer" }, label: { type: "string" } },
      required: ["size", "label"],
    },
  },
};

/**
 * A resource provider written in Node.js and run from its source folder, which the engine starts
 * through the language host's RunPlugin. Its `read` answers any id, so `pulumi import` works offline.
 */
const GADGETS_PLUGIN = {
  "PulumiPlugin.yaml": "runtime:\n  name: nodejs\n  options:\n    typescript: false\n",
  "package.json": JSON.stringify({ name: "pulumi-resource-gadgets", main: "index.js" }),
  "index.js": `
const provider = require("@pulumi/pulumi/provider");
const { ReadRequest } = require("@pulumi/pulumi/proto/provider_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
// An import reads with no properties, which @pulumi/pulumi's provider server does not expect.
const readProperties = ReadRequest.prototype.getProperties;
ReadRequest.prototype.getProperties = function () {
  return readProperties.call(this) ?? new Struct();
};
provider.main(
  {
    version: "1.0.0",
    schema: ${JSON.stringify(JSON.stringify(GADGETS_SCHEMA))},
    async read(id) {
      const props = { size: 7, label: "gadget " + id };
      return { id, props, inputs: props };
    },
  },
  process.argv.slice(2),
);
`,
};

describe("code generation by the language host, through the real CLI", () => {
  it("`pulumi package gen-sdk --language nodejs` writes an SDK that type-checks", async () => {
    const cli = workspace();
    const dir = cli.project("gen-sdk", { "schema.json": JSON.stringify(GADGETS_SCHEMA) });
    const run = await pulumi(
      ["package", "gen-sdk", "schema.json", "--language", "nodejs", "--out", "sdk"],
      dir,
      cli.env,
    );
    expect(run.code, run.output).toBe(0);

    const sdk = path.join(dir, "sdk", "nodejs");
    expect(fs.readFileSync(path.join(sdk, "gadget.ts"), "utf8")).toContain(
      "export class Gadget extends pulumi.CustomResource",
    );
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(sdk, "node_modules"), "dir");
    const tsc = path.join(REPO_ROOT, "node_modules", ".bin", "tsc");
    // Throws with tsc's diagnostics when the generated code does not type-check.
    await exec(tsc, ["--noEmit", "-p", path.join(sdk, "tsconfig.json")], { cwd: sdk });
  });

  it("`pulumi import` writes TypeScript for a resource of a provider run from source", async () => {
    const cli = workspace();
    const plugin = cli.project("gadgets-provider", GADGETS_PLUGIN);
    const dir = cli.project("importer", {
      "Pulumi.yaml": `name: importer\nruntime: nodejs\nplugins:\n  providers:\n    - name: gadgets\n      path: ${plugin}\n`,
      "package.json": JSON.stringify({ name: "importer", main: "index.ts" }),
      "index.ts": "",
    });
    expect((await pulumi(["stack", "init", "dev"], dir, cli.env)).code).toBe(0);

    const run = await pulumi(
      ["import", "gadgets:index:Gadget", "main", "g-42", "--yes", "--out", "imported.ts"],
      dir,
      cli.env,
    );
    expect(run.code, run.output).toBe(0);
    const code = fs.readFileSync(path.join(dir, "imported.ts"), "utf8");
    expect(code).toContain('import * as gadgets from "@pulumi/gadgets";');
    expect(code).toMatch(
      /new gadgets\.Gadget\("main", \{\s+label: "gadget g-42",\s+size: 7,\s+\}, \{\s+protect: true,/,
    );
  });

  it("`pulumi convert --from pcl --language typescript` writes the program as TypeScript", async () => {
    const cli = workspace();
    const dir = cli.project(
      "pcl",
      {
        "main.pp": [
          'config prefix string {\n  default = "edge"\n}',
          'names = ["alpha", "beta"]',
          `output labels {\n  value = [for name in names : "\${prefix}-\${name}"]\n}`,
          "",
        ].join("\n\n"),
      },
      // convert copies every other file of the PCL folder into the new project.
      { nodeModules: false },
    );
    const run = await pulumi(
      ["convert", "--from", "pcl", "--language", "typescript", "--out", "../ts", "--generate-only"],
      dir,
      cli.env,
    );
    expect(run.code, run.output).toBe(0);
    const code = fs.readFileSync(path.join(cli.dir, "ts", "index.ts"), "utf8");
    expect(code).toContain('const prefix = config.get("prefix") || "edge";');
    expect(code).toContain(`export const labels = names.map(name => (\`\${prefix}-\${name}\`));`);
  });
});
