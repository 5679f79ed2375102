import { afterEach, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

/**
 * A guard, not a figure: the failing lookup used to grow the program process to gigabytes for minutes
 * (issue #26, item 1). A heap ceiling far below that turns the old behaviour into an out-of-memory
 * crash, and the time bound catches the slow growth before it.
 */
const HEAP_MB = 256;
const BOUND_MS = 90_000;

let workspace: CliWorkspace | undefined;
let server: ReferenceServer | undefined;
afterEach(async () => {
  workspace?.cleanup();
  await server?.close();
  workspace = server = undefined;
});

describe("a lookup of a name nobody holds, its id fed on, under the real CLI", () => {
  it("fails the preview fast with the one-line message, the program staying within a small heap", async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    workspace = cliWorkspace();
    const dir = workspace.project("lookup-missing", {
      "Pulumi.yaml": "name: lookup-missing\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
      "package.json": JSON.stringify({ name: "lookup-missing", main: "index.js" }),
      "index.js": [
        'const pulumi = require("@pulumi/pulumi");',
        'const { getUsage, lookupProxyUser } = require("pulumi-proxy");',
        'const user = lookupProxyUser({ name: "nope" });',
        "exports.id = user.id;",
        "exports.both = pulumi.all([user.id]);",
        'exports.usage = getUsage({ from: "2026-01-01", to: "2026-01-31", proxyUserId: user.id });',
      ].join("\n"),
    });
    const env = {
      ...workspace.env,
      PROXY_API_URL: server.url,
      PROXY_API_KEY: server.rootKey,
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    };
    expect((await pulumi(["stack", "init", "dev"], dir, env)).code).toBe(0);

    const started = Date.now();
    const run = await pulumi(["preview"], dir, env, BOUND_MS);
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toContain('lookupProxyUser: cannot look up a proxy user: no proxy user is named "nope"');
    expect(run.output).not.toContain("non-zero exit code");
    expect(run.output).not.toMatch(/heap out of memory/i);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  }, 150_000);
});
