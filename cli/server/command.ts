import { runServerCli } from "../../server/cli";
import type { CliCommand } from "../command";

/** The reference server's own CLI (server/cli.ts) parses its flags and prints its usage. */
export const command: CliCommand = {
  name: "server",
  summary: "the reference server: the API and its gateway on loopback, for tests and demos",
  usage: ["pulumi-proxy server [--port <port>] [...]   (pulumi-proxy server --help lists the options)"],
  run: async (argv) => {
    await runServerCli(argv);
    return 0;
  },
};
