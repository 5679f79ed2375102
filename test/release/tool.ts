import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import type { ProxyClient } from "../../sdk";

const exec = promisify(execFile);

/** A run of the release executable as the tool: its output and exit code, whatever the code. */
async function tool(executable: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await exec(executable, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/**
 * The plugin executable the engine installed, run as the `pulumi-proxy` tool on a stack that is up
 * to date, with the program's own PATH (no node): `plan` finds nothing to do, `coverage` counts the
 * account's one user as managed, `drift` finds nothing, then, after a change made outside Pulumi, exits 2
 * and names it in its JSON, and `report` writes its page. The change is undone after.
 */
export async function toolReviewsAStack(options: {
  executable: string;
  app: string;
  env: NodeJS.ProcessEnv;
  api: ProxyClient;
  userId: string;
}): Promise<void> {
  const { executable, app, env, api, userId } = options;
  const run = (args: string[]) => tool(executable, args, app, env);

  const version = await run(["--version"]);
  expect(version.stdout).toMatch(/^pulumi-proxy \d+\.\d+\.\d+/);

  const plan = await run(["plan", "--stack", "dev", "--json"]);
  expect(plan.code, plan.stderr).toBe(0);
  expect(JSON.parse(plan.stdout)).toMatchObject({ stack: "dev", hasChanges: false });

  const coverage = await run(["coverage", "--stack", "dev", "--json"]);
  expect(coverage.code, coverage.stderr).toBe(0);
  expect(JSON.parse(coverage.stdout).kinds).toContainEqual(
    expect.objectContaining({ type: "ProxyUser", managed: 1, unmanaged: [] }),
  );

  const clean = await run(["drift", "--stack", "dev", "--json"]);
  expect(clean.code, clean.stderr).toBe(0);
  expect(JSON.parse(clean.stdout)).toMatchObject({ drift: false, drifted: [] });

  const before = await api.proxyUsers.get(userId);
  await api.proxyUsers.update(userId, { limits: { daily_gb: 11 } });
  try {
    const drifted = await run(["drift", "--stack", "dev", "--json"]);
    expect(drifted.code, drifted.stderr).toBe(2);
    expect(JSON.parse(drifted.stdout)).toMatchObject({
      drift: true,
      drifted: [{ type: "proxy:index:ProxyUser", properties: [{ path: "limits.dailyGb", recorded: 5, actual: 11 }] }],
    });
  } finally {
    await api.proxyUsers.update(userId, { limits: { daily_gb: before.limits.daily_gb } });
  }

  const report = await run(["report", "--stack", "dev"]);
  expect(report.code, report.stderr).toBe(0);
  const page = report.stdout.trim().split("\n").at(-1) ?? "";
  expect(path.isAbsolute(page), report.stdout).toBe(true);
  expect(fs.readFileSync(page, "utf8")).toMatch(/<html[\s\S]*nodefree-python/i);
}
