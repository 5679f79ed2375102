import { describe, it } from "vitest";
import { exampleReadmesHalf, runReadme } from "../support/readmeRun";

// The first half of the examples' READMEs; exampleReadmesSecondHalf.test.ts runs the rest, in the other worker.
describe("every shell command in every example's README (first half)", () => {
  for (const { readme, blocks } of exampleReadmesHalf(0)) {
    it(`${readme}: runs against the reference server in a temp folder`, () => runReadme(readme, blocks), 900_000);
  }
});
