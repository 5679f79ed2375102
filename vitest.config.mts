import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // Engine tests drive the real CLI through several up/preview/destroy rounds; a loaded 2-core machine needs room.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Engine tests spawn the CLI, a language host and provider processes; two cores fit two files at once.
    maxWorkers: 2,
  },
});
