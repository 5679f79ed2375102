import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outsideFolder } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";

const exec = promisify(execFile);
const PINNED = require("../../package.json").dependencies["@pulumi/pulumi"] as string;

/**
 * A user's Go program: its own module, with the SDK's module replaced by the copy in the package. It
 * names no version of the Pulumi SDK: the SDK's module asks for the pinned one.
 */
const goMod = (sdkDir: string) => `module example.com/proxy-go-app

go 1.25

require example.com/pulumi-proxy/sdk/go v0.1.0

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

/**
 * A Go program in a folder of its own builds and vets against the SDK's module. The engine round (up,
 * a clean preview, destroy through the project's Go language host) is examples/go-quickstart's
 * README, which the suite runs as written.
 */
describe("the generated Go SDK", () => {
  const outside = outsideFolder();
  const app = outside.dir;
  const go = (args: string[]) => exec("go", args, { cwd: app, env: { ...process.env, ...GO_ENV } });

  beforeAll(async () => {
    const main = path.join(REPO_ROOT, "dist", "cli", "main.js");
    // Where the README says the module is: `pulumi-proxy sdk go`.
    const sdkDir = (await exec(process.execPath, [main, "sdk", "go"])).stdout.trim();
    fs.writeFileSync(path.join(app, "go.mod"), goMod(sdkDir));
    fs.writeFileSync(path.join(app, "main.go"), MAIN_GO);
  });
  afterAll(() => outside.cleanup());

  it("builds and vets against the pinned github.com/pulumi/pulumi/sdk/v3", async () => {
    await go(["build", "./...", "example.com/pulumi-proxy/sdk/go/..."]);
    await go(["vet", "./...", "example.com/pulumi-proxy/sdk/go/..."]);
    const { stdout } = await go(["list", "-m", "github.com/pulumi/pulumi/sdk/v3"]);
    expect(stdout.trim()).toBe(`github.com/pulumi/pulumi/sdk/v3 v${PINNED}`);
  });
});
