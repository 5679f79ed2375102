import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Long files first, so that none starts last and runs alone while the other worker idles. Vitest
 * orders by the durations it cached from the last run, and without that cache (a fresh clone, CI)
 * by file size, which put the README files, a few lines each and minutes long, at the very end.
 * These folders go first, in this order; within one, Vitest's own order.
 */
const LONG_FIRST = ["test/docs/", "test/examples/", "test/cli/", "test/provider/"];

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const relative = path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join("/");
      const index = LONG_FIRST.findIndex((folder) => relative.startsWith(folder));
      return index === -1 ? LONG_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    sequence: { sequencer: LongFilesFirst },
    // Engine tests drive the real CLI through several up/preview/destroy rounds; a loaded 2-core machine needs room.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Engine tests spawn the CLI, a language host and provider processes; two cores fit two files at once.
    // A third worker was measured: no faster (777 s against 781 s), each file slower.
    maxWorkers: 2,
  },
});
