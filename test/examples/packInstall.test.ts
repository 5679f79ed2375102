import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { copyExample, gitRepositoryOfWorkingTree, npm, outsideFolder, packFromCleanCopy } from "../support/outside";
import { createTestStack, type TestStack } from "../support/pulumi";

/**
 * What the README's Install section tells a user outside this repository to do: pack, install the
 * tarball into a folder of their own, copy an example there, and run it.
 */
describe("installed from a tarball, outside the repository", () => {
  const outside = outsideFolder();
  const app = path.join(outside.dir, "app");
  let server: ReferenceServer;
  let harness: TestStack;

  beforeAll(async () => {
    const tarball = await packFromCleanCopy(outside.dir);
    copyExample("quickstart", app);
    await npm(["install", tarball], app);
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    harness = await createTestStack({
      workDir: app,
      config: {
        "proxy:apiUrl": { value: server.url },
        "proxy:apiKey": { value: server.rootKey, secret: true },
      },
    });
  });
  afterAll(async () => {
    await harness?.cleanup();
    await server?.close();
    outside.cleanup();
  });

  it("the tarball holds the built package, and its command runs", async () => {
    const installed = path.join(app, "node_modules", "pulumi-proxy");
    expect(fs.realpathSync(installed).startsWith(outside.dir)).toBe(true);
    for (const file of ["dist/provider/index.js", "dist/provider/runtime.js", "dist/cli/main.js", "LICENSE"]) {
      expect(fs.existsSync(path.join(installed, file)), file).toBe(true);
    }
    const version = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")).version;
    expect(await npm(["exec", "--", "pulumi-proxy", "--version"], app)).toBe(`pulumi-proxy ${version}\n`);
  });

  it("the copied example comes up, previews clean and is destroyed", async () => {
    const up = await harness.stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(server.control.snapshot().proxyUsers).toHaveLength(1);
    const preview = await harness.stack.preview();
    expect(preview.changeSummary).toEqual({ same: 4 });
    await harness.stack.destroy();
    expect(server.control.snapshot()).toMatchObject({ proxyUsers: [], ips: [] });
  });
});

describe("installed from a git URL, outside the repository", () => {
  const outside = outsideFolder();
  afterAll(() => outside.cleanup());

  it("npm builds dist/ through prepare, with the TypeScript it installs for the package", async () => {
    const repo = await gitRepositoryOfWorkingTree(outside.dir);
    const app = path.join(outside.dir, "app");
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
    await npm(["install", `git+file://${repo}`], app);
    const installed = path.join(app, "node_modules", "pulumi-proxy");
    for (const file of [
      "dist/provider/index.js",
      "dist/provider/runtime.js",
      "dist/sdk/index.js",
      "dist/cli/main.js",
    ]) {
      expect(fs.existsSync(path.join(installed, file)), file).toBe(true);
    }
    // Only the package's runtime dependencies land in the program's node_modules.
    for (const devOnly of ["@biomejs", "vitest", "autocannon"]) {
      expect(fs.existsSync(path.join(app, "node_modules", devOnly)), devOnly).toBe(false);
    }
    expect(await npm(["exec", "--", "pulumi-proxy", "--version"], app)).toMatch(/^pulumi-proxy \d+\.\d+\.\d+\n$/);
  });
});
