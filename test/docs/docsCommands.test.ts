import { describe, it } from "vitest";
import { DOC_PAGES, runnableReadmes, runReadme } from "../support/readmeRun";

/** The pages of docs/ run as the READMEs do, each in a fresh folder against a fresh reference server. */
describe("every shell command in docs/", () => {
  for (const { readme, blocks } of runnableReadmes(DOC_PAGES)) {
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 600_000);
  }
});
