/**
 * The entry of the release's one executable per platform (tools/release/bundle.mjs): the plugin the
 * engine starts, and the `pulumi-proxy` tool for those with no Node.js. The engine starts the plugin
 * with no argument or with its own address; a first argument that is a command of the tool, or the
 * executable's own name `pulumi-proxy`, makes it the tool. One executable instead of two keeps each
 * tarball at one copy of the runtime (about 100 MB unpacked). Each side is required only once chosen,
 * so the plugin's start loads nothing of the tool.
 */
import path from "node:path";
import { TOOL_ARGUMENTS } from "./toolArguments";

const [first] = process.argv.slice(2);
const name = path.basename(process.execPath).replace(/\.exe$/i, "");
if (name === "pulumi-proxy" || (first !== undefined && TOOL_ARGUMENTS.has(first))) {
  const { main } = require("./main") as typeof import("./main");
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
} else {
  const { startPlugin } = require("../provider/native/start") as typeof import("../provider/native/start");
  startPlugin();
}
