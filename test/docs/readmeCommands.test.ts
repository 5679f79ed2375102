import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { type ShellBlock, shellBlocks } from "../support/readmeBlocks";
import { DOC_PAGES, EXAMPLE_READMES, PACKAGE_READMES, runnableReadmes, runReadme, where } from "../support/readmeRun";

describe("every shell command in every README and page of docs/", () => {
  it("is marked to run, or to be skipped with a reason", () => {
    const unmarked = [...PACKAGE_READMES, ...DOC_PAGES, ...EXAMPLE_READMES]
      .flatMap((readme) => shellBlocks(path.join(REPO_ROOT, readme)))
      .filter((block) => block.marker === "none")
      .map(where);
    expect(unmarked, "add <!-- readme:run --> or <!-- readme:skip why --> before these blocks").toEqual([]);
  });

  it("is left to a test only where that test exists and reads this README", () => {
    const pages = [...PACKAGE_READMES, ...DOC_PAGES, ...EXAMPLE_READMES];
    const leftToTests = pages.flatMap((readme) =>
      shellBlocks(path.join(REPO_ROOT, readme))
        .map((block) => ({ block, testFile: /^test\/\S+\.test\.ts\b/.exec(block.reason)?.[0] }))
        .filter((entry): entry is { block: ShellBlock; testFile: string } => entry.testFile !== undefined)
        .map(({ block, testFile }) => ({ readme, where: where(block), testFile })),
    );
    expect(leftToTests.length).toBeGreaterThan(0);
    for (const { readme, where: at, testFile } of leftToTests) {
      const file = path.join(REPO_ROOT, testFile);
      expect(fs.existsSync(file), `${at} names ${testFile}`).toBe(true);
      // The test finds the README's words by its path (directly or through the example's folder name).
      const example = /^examples\/([^/]+)\//.exec(readme)?.[1];
      const source = fs.readFileSync(file, "utf8");
      expect(source.includes(readme) || (example !== undefined && source.includes(`"${example}"`)), at).toBe(true);
    }
  });

  // The examples' READMEs run in exampleReadmes.test.ts and exampleReadmesSecondHalf.test.ts, docs/ in docsCommands.test.ts.
  for (const { readme, blocks } of runnableReadmes(PACKAGE_READMES)) {
    // The root README runs the whole demo, then several engine commands in a row.
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 900_000);
  }
});
