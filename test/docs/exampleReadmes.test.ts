import { describe, it } from "vitest";
import { EXAMPLE_READMES, runnableReadmes, runReadme } from "../support/readmeRun";

describe("every shell command in every example's README", () => {
  for (const { readme, blocks } of runnableReadmes(EXAMPLE_READMES)) {
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 900_000);
  }
});
