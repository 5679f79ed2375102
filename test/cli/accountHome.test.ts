import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";

/**
 * The release's executable runs the tool on Bun, whose os.userInfo().homedir is $HOME. With HOME
 * moved away from the account's home, `recover` and `provider` must still find the ~/.pulumi the
 * Pulumi CLI uses: the account's, from the user database.
 */
describe("accountHome on the release's runtime", () => {
  it("is the account's home under Bun, whatever HOME says", () => {
    const bun = path.join(REPO_ROOT, "node_modules", "bun", "bin", "bun.exe");
    const script = `import { accountHome } from ${JSON.stringify(path.join(REPO_ROOT, "cli", "pulumiCli.ts"))}; console.log(accountHome());`;
    const moved = execFileSync(bun, ["-e", script], {
      env: { ...process.env, HOME: os.tmpdir() },
      encoding: "utf8",
    }).trim();
    expect(moved).toBe(os.userInfo().homedir);
    expect(moved).not.toBe(os.tmpdir());
  });
});
