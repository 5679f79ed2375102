import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Longest files first, so that none starts last and runs alone while the other worker idles. A
 * file's length is its duration in Vitest's cache of the last run; without one (a fresh clone, CI,
 * a new file) it is its folder's typical length: README and example files take a minute or more,
 * engine tests in the CLI, native and provider folders tens of seconds, the rest seconds. Vitest's
 * own order ranks a file without a cached duration by size, which put the README files, a few
 * lines each and minutes long, at the very end.
 */
const TYPICAL_SECONDS: [folder: string, seconds: number][] = [
  ["test/release/", 90],
  ["test/docs/", 60],
  ["test/examples/", 40],
  ["test/cli/", 40],
  ["test/native/", 25],
  ["test/provider/", 15],
  ["test/foundation/", 6],
];

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const expectedMs = (file: TestSpecification) => {
      const relative = path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join("/");
      const cached = this.ctx.cache.getFileTestResults(`${file.project.name}:${relative}`)?.duration;
      if (cached !== undefined) return cached;
      return (TYPICAL_SECONDS.find(([folder]) => relative.startsWith(folder))?.[1] ?? 1) * 1000;
    };
    return (await super.sort(files)).sort((a, b) => expectedMs(b) - expectedMs(a));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/deferModules.setup.ts"],
    sequence: { sequencer: LongFilesFirst },
    // Engine tests drive the real CLI through several up/preview/destroy rounds; a loaded 2-core machine needs room.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Engine tests spawn the CLI, a language host and provider processes; two cores fit two files at once.
    // A third worker was measured: no faster (777 s against 781 s), each file slower.
    maxWorkers: 2,
  },
});
