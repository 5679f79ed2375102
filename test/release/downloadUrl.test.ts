import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outsideFolder } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";

/**
 * What `npm run release --plugin-download-url` accepts: the URL reaches the PCL program `pulumi import`
 * writes, where `${…}` is a template, so the release fills in what it can and refuses the rest before
 * it builds anything (release.test.ts builds one with the README's `${VERSION}` and imports from it).
 */
describe("npm run release --plugin-download-url", () => {
  const outside = outsideFolder();
  afterAll(() => outside.cleanup());

  for (const placeholder of [`\${OS}`, `\${ARCH}`]) {
    it(`refuses ${placeholder}, which one SDK for every platform cannot carry, before building`, () => {
      const out = path.join(outside.dir, "release");
      const url = `https://downloads.example.com/pulumi-proxy/v\${VERSION}/${placeholder}/`;
      const run = spawnSync(process.execPath, ["tools/release.mjs", "--plugin-download-url", url, "--out", out], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`--plugin-download-url ${url}: ${placeholder} cannot be in the URL the SDKs carry`);
      expect(fs.existsSync(out)).toBe(false);
    });
  }
});
