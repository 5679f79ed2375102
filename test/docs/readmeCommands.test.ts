import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { shellBlocks } from "../support/readmeBlocks";
import { DOC_PAGES, EXAMPLE_READMES, PACKAGE_READMES, runnableReadmes, runReadme, where } from "../support/readmeRun";

describe("every shell command in every README and page of docs/", () => {
  it("is marked to run, or to be skipped with a reason", () => {
    const unmarked = [...PACKAGE_READMES, ...DOC_PAGES, ...EXAMPLE_READMES]
      .flatMap((readme) => shellBlocks(path.join(REPO_ROOT, readme)))
      .filter((block) => block.marker === "none")
      .map(where);
    expect(unmarked, "add <!-- readme:run --> or <!-- readme:skip why --> before these blocks").toEqual([]);
  });

  // The examples' READMEs run in exampleReadmes.test.ts and exampleReadmesSecondHalf.test.ts, docs/ in docsCommands.test.ts.
  for (const { readme, blocks } of runnableReadmes(PACKAGE_READMES)) {
    // The root README runs the whole demo, then several engine commands in a row.
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 900_000);
  }
});
