import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadFleet, SHARD_SCOPES, shardsOf } from "../../cli/fleet/spec";
import { EXAMPLES_DIR } from "../examples/harness";
import { runCli } from "../support/cli";

/** The fleet's files and generated manifests: no engine, no server. */
const example = path.join(EXAMPLES_DIR, "fleet");
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-fleet-files-"));
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

/** A fleet folder with the example's program and fleet file, and these users. */
function fleetWith(name: string, usersFile: string, users: string): string {
  const dir = path.join(temp, name);
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(example, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  fs.writeFileSync(path.join(dir, "fleet.json"), JSON.stringify({ users: usersFile }));
  fs.writeFileSync(path.join(dir, usersFile), users);
  return dir;
}

type Stack = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
  spec: Record<string, unknown> & { config: Record<string, string>; secretsRef: Record<string, unknown> };
};

describe("pulumi-proxy fleet: its files", () => {
  it("splits the example's users by customer, one shard and one key name per customer", () => {
    const shards = shardsOf(loadFleet(example));
    expect(shards.map((shard) => [shard.stack, shard.keyName, shard.users.length])).toEqual([
      ["acme", "fleet-acme", 3],
      ["globex", "fleet-globex", 2],
      ["initech", "fleet-initech", 1],
      ["umbrella", "fleet-umbrella", 2],
    ]);
    expect(shards[0]?.users[2]).toEqual({ customer: "acme", name: "acme-backfill", monthlyGb: 1000, enabled: false });
    expect(SHARD_SCOPES).not.toContain("keys:write");
  });

  it("reads JSON as CSV, and names the line and the field of a bad row", () => {
    const json = fleetWith("json", "users.json", JSON.stringify([{ customer: "a", name: "a-1", dailyGb: 1 }]));
    expect(shardsOf(loadFleet(json))[0]?.users).toEqual([{ customer: "a", name: "a-1", dailyGb: 1 }]);
    const cases: [string, RegExp][] = [
      ["customer,name\na,x\nb,x\n", /users\.csv:3: the name "x" is used at users\.csv:2 already/],
      ["customer,name,dailyGb\na,x,lots\n", /users\.csv:2: dailyGb must be a number of GB, got "lots"/],
      ["customer,name,city\na,x,paris\n", /users\.csv:1: unknown column "city"/],
      ["customer,name\nAcme Corp,x\n", /users\.csv:2: customer "Acme Corp" must be 1–100 of a-z/],
    ];
    for (const [index, [users, error]] of cases.entries()) {
      expect(() => shardsOf(loadFleet(fleetWith(`bad${index}`, "users.csv", users)))).toThrow(error);
    }
  });

  it("a bad fleet file fails naming the field and the bound", async () => {
    const dir = fleetWith("badspec", "users.csv", "customer,name\na,x\n");
    fs.writeFileSync(path.join(dir, "fleet.json"), JSON.stringify({ users: "users.csv", concurrency: 0 }));
    const result = await runCli(["fleet", "up", "--fleet", dir], process.env as Record<string, string>);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/fleet\.json: concurrency: Too small: expected number to be >=1/);

    // Checkpoints are off unless the file turns them on, and only a boolean does.
    fs.writeFileSync(path.join(dir, "fleet.json"), JSON.stringify({ users: "users.csv" }));
    expect(loadFleet(dir)).toMatchObject({ concurrency: 4, checkpoints: false });
    fs.writeFileSync(path.join(dir, "fleet.json"), JSON.stringify({ users: "users.csv", checkpoints: "yes" }));
    expect(() => loadFleet(dir)).toThrow(/fleet\.json: checkpoints: Invalid input: expected boolean/);
  });

  it("a wrong command line fails before any engine run, saying what to change", async () => {
    const env = process.env as Record<string, string>;
    const cases: [string[], string][] = [
      [["fleet", "up", "--fleet", example, "--shard", "nobody"], "--shard nobody: no customer of that name"],
      [["fleet", "upgrade", "--fleet", example], 'unknown fleet command "upgrade"'],
      [["drift", "--fleet", example, "--stack", "acme"], "--fleet and --stack exclude each other"],
      [["plan", "--fleet", path.join(temp, "missing")], "no fleet file at"],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, env);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr, args.join(" ")).toContain(message);
    }
  });

  it("shards is the matrix, and operator writes one pulumi.com/v1 Stack per shard, its key by Secret reference", async () => {
    const env = process.env as Record<string, string>;
    const shards = await runCli(["fleet", "shards", "--fleet", example], env);
    expect(JSON.parse(shards.stdout)).toEqual(["acme", "globex", "initech", "umbrella"]);
    const args = [
      "--repo",
      "https://git.example.com/infra.git",
      "--repo-dir",
      "fleet",
      "--backend",
      "s3://state/fleet",
    ];
    const result = await runCli(
      [
        "fleet",
        "operator",
        "--fleet",
        example,
        ...args,
        "--api-url",
        "https://api.example.com",
        "--namespace",
        "proxy",
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const stacks = result.stdout
      .split(/^---$/m)
      .filter((doc) => doc.trim())
      .map((doc) => JSON.parse(doc) as Stack);
    expect(stacks.map((stack) => [stack.apiVersion, stack.kind, stack.metadata.name, stack.spec.stack])).toEqual([
      ["pulumi.com/v1", "Stack", "fleet-acme", "acme"],
      ["pulumi.com/v1", "Stack", "fleet-globex", "globex"],
      ["pulumi.com/v1", "Stack", "fleet-initech", "initech"],
      ["pulumi.com/v1", "Stack", "fleet-umbrella", "umbrella"],
    ]);
    const acme = stacks[0] as Stack;
    expect(acme.metadata.namespace).toBe("proxy");
    expect(acme.spec).toMatchObject({
      projectRepo: "https://git.example.com/infra.git",
      repoDir: "fleet",
      branch: "main",
      backend: "s3://state/fleet",
      destroyOnFinalize: true,
      config: { "fleet:customer": "acme", "fleet:usersFile": "users.csv", "proxy:apiUrl": "https://api.example.com" },
      secretsRef: { "proxy:apiKey": { type: "Secret", secret: { name: "fleet-acme", key: "apiKey" } } },
      envRefs: {
        PULUMI_CONFIG_PASSPHRASE: { type: "Secret", secret: { name: "fleet-passphrase", key: "passphrase" } },
      },
    });
    // Only fields the operator's v1 Stack spec defines, and never a credential.
    const fields = new Set(stacks.flatMap((stack) => Object.keys(stack.spec)));
    expect([...fields].sort()).toEqual(
      ["backend", "branch", "config", "destroyOnFinalize", "envRefs", "projectRepo", "refresh", "repoDir"]
        .concat(["resyncFrequencySeconds", "secretsRef", "stack"])
        .sort(),
    );
    expect(acme.spec.config).not.toHaveProperty("proxy:apiKey");
    expect(result.stdout).not.toMatch(/live_|secure:/);
  });
});
