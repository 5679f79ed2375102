import { createRequire } from "node:module";
import path from "node:path";

/**
 * Each test file runs in a process of its own and imports @pulumi/pulumi; as in the provider
 * processes, the modules that provider/process/defer-modules.cjs lists (typescript, arborist, …) load
 * at first use, not with every file.
 */
const require = createRequire(__filename);
const { deferPulumiModules } = require("../provider/process/defer-modules.cjs");
deferPulumiModules(require.resolve("@pulumi/pulumi", { paths: [path.resolve(__dirname, "..")] }));
