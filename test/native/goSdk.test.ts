import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { outsideFolder } from "../support/outside";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";

const exec = promisify(execFile);
const PINNED = require("../../package.json").dependencies["@pulumi/pulumi"] as string;

/** A user's Go program: its own module, with the SDK's module replaced by the copy in the package. */
const goMod = (sdkDir: string) => `module example.com/proxy-go-app

go 1.25

require (
\texample.com/pulumi-proxy/sdk/go v0.1.0
\tgithub.com/pulumi/pulumi/sdk/v3 v${PINNED}
)

replace example.com/pulumi-proxy/sdk/go => ${sdkDir}
`;

const MAIN_GO = `package main

import (
\t"example.com/pulumi-proxy/sdk/go/proxy"
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
\tpulumi.Run(func(ctx *pulumi.Context) error {
\t\tuser, err := proxy.NewProxyUser(ctx, "scraper", &proxy.ProxyUserArgs{
\t\t\tName:   pulumi.String("go-scraper"),
\t\t\tLimits: &proxy.ProxyUserLimitsArgs{DailyGb: pulumi.Float64(5)},
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tctx.Export("userId", user.ProxyUserId)
\t\tctx.Export("password", user.Password)
\t\treturn nil
\t})
}
`;

/** The module proxy serves these versions, but this network's checksum database has no entries for them. */
const GO_ENV = {
  GOFLAGS: "-mod=mod",
  GONOSUMDB: [process.env.GONOSUMDB, "github.com/pulumi/pulumi"].filter(Boolean).join(","),
};

/** A Go program in a folder of its own, run by the project's Go language host. */
describe("the generated Go SDK", () => {
  const outside = outsideFolder();
  const app = outside.dir;
  let server: ReferenceServer;
  let harness: TestStack;
  let api: ProxyClient;
  const go = (args: string[]) => exec("go", args, { cwd: app, env: { ...process.env, ...GO_ENV } });

  beforeAll(async () => {
    fs.writeFileSync(path.join(app, "Pulumi.yaml"), "name: proxy-go-app\nruntime: go\n");
    const main = path.join(REPO_ROOT, "dist", "cli", "main.js");
    // Where the README says the module is: `pulumi-proxy sdk go`.
    const sdkDir = (await exec(process.execPath, [main, "sdk", "go"])).stdout.trim();
    fs.writeFileSync(path.join(app, "go.mod"), goMod(sdkDir));
    fs.writeFileSync(path.join(app, "main.go"), MAIN_GO);
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    harness = await createTestStack({
      workDir: app,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
      envVars: { ...GO_ENV, PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    });
    await exec(process.execPath, [main, "provider", "install"], {
      env: { ...process.env, PULUMI_HOME: harness.envVars.PULUMI_HOME },
    });
  });
  afterAll(async () => {
    await harness?.cleanup();
    await server?.close();
    outside.cleanup();
  });

  it("builds and vets against the pinned github.com/pulumi/pulumi/sdk/v3", async () => {
    await go(["build", "./...", "example.com/pulumi-proxy/sdk/go/..."]);
    await go(["vet", "./...", "example.com/pulumi-proxy/sdk/go/..."]);
    const { stdout } = await go(["list", "-m", "github.com/pulumi/pulumi/sdk/v3"]);
    expect(stdout.trim()).toBe(`github.com/pulumi/pulumi/sdk/v3 v${PINNED}`);
  });

  it("runs a Go program through the CLI: up, a clean preview, destroy", async () => {
    const result = await harness.stack.up();
    const userId = String(result.outputs.userId?.value);
    expect(await api.proxyUsers.get(userId)).toMatchObject({ name: "go-scraper", limits: { daily_gb: 5 } });
    expect(result.outputs.password?.secret).toBe(true);
    expect((await harness.stack.preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 2 });
    await harness.stack.destroy();
    await expect(api.proxyUsers.get(userId)).rejects.toThrow(/not.found|404/i);
  });
});
