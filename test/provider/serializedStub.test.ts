import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializedStub } from "../../provider/dynamic/serializedStub";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";

/**
 * `__provider` of a ProxyUser as a state written by @pulumi/pulumi 3.248.0's closure serializer holds
 * it (release 0.1.0, before the package wrote the text itself): byte for byte what it writes now.
 */
const SERIALIZED_BY_PULUMI =
  'exports.handler = __f0;\nconst provider = require("pulumi-proxy/dist/provider/stubs/proxyUser.js");\n\n' +
  "function __f0() {\n  return (function() {\n    with({ this: undefined, arguments: undefined }) {\n\n" +
  "return () => provider;\n\n    }\n  }).apply(undefined, undefined).apply(this, arguments);\n}\n";

describe("the provider text in state", () => {
  it("is what the closure serializer wrote, so states written before see no change", () => {
    expect(serializedStub("proxyUser")).toBe(SERIALIZED_BY_PULUMI);
  });
});

/**
 * The provider the engine stores in every resource's state is the short stub, a `require` of the
 * installed package, also when the package is installed as a link (`npm link`, a `file:` folder,
 * workspaces, the repository's own self-link that the demo uses). A program in a folder inside the
 * repository resolves `pulumi-proxy` through that self-link, as such an install does.
 */
describe("the serialized provider of a linked install", () => {
  let server: ReferenceServer;
  let harness: TestStack;
  let workDir: string;

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    workDir = fs.mkdtempSync(path.join(REPO_ROOT, ".pulumi-proxy", "linked-"));
    fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), "name: linked-install\nruntime: nodejs\nmain: index.js\n");
    fs.writeFileSync(
      path.join(workDir, "index.js"),
      'const proxy = require("pulumi-proxy");\n' +
        'new proxy.ProxyUser("linked", { name: "linked", limits: { monthlyGb: 5 } });\n' +
        'new proxy.ApiKey("linked-key", { name: "linked-key", scopes: ["usage:read"] });\n',
    );
    harness = await createTestStack({
      workDir,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
    });
  });
  afterAll(async () => {
    // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
    await harness?.cleanup();
    await server?.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it("is a require of the package's stub, not the stub's whole closure", async () => {
    expect(fs.realpathSync(path.join(REPO_ROOT, "node_modules", "pulumi-proxy"))).toBe(REPO_ROOT);
    await harness.stack.up();
    const { resources } = (await harness.stack.exportStack()).deployment;
    const ours = resources.filter((resource: { type: string }) => resource.type.includes("proxy:"));
    expect(ours.map((resource: { type: string }) => resource.type).sort()).toEqual([
      "pulumi-nodejs:dynamic/proxy:ApiKey",
      "pulumi-nodejs:dynamic/proxy:ProxyUser",
    ]);
    for (const resource of ours) {
      const stub = resource.inputs.__provider as string;
      const kind = resource.type.endsWith("ApiKey") ? "apiKey" : "proxyUser";
      expect(stub).toContain(`require("pulumi-proxy/dist/provider/stubs/${kind}.js")`);
      expect(stub.length).toBeLessThan(400);
      expect(resource.outputs.__provider).toBe(stub);
    }
  });
});
