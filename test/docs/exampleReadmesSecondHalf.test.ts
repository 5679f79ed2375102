import { describe, it } from "vitest";
import { exampleReadmesHalf, runReadme } from "../support/readmeRun";

// The second half of the examples' READMEs; exampleReadmes.test.ts runs the first.
describe("every shell command in every example's README (second half)", () => {
  for (const { readme, blocks } of exampleReadmesHalf(1)) {
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 900_000);
  }
});
