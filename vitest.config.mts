import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engine tests spawn the CLI, a language host and provider processes; two cores fit two files at once.
    maxWorkers: 2,
  },
});
