import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { ResourceProviderClient } from "@pulumi/pulumi/proto/provider_grpc_pb";
import { REPO_ROOT } from "../support/pulumi";

export interface RunningPlugin {
  client: ResourceProviderClient;
  stop(): void;
}

/** The compiled plugin started as the engine starts it: a process that prints its port, then a gRPC client on it. */
export async function startPlugin(env: Record<string, string> = {}): Promise<RunningPlugin> {
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, "dist", "provider", "native", "main.js")], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const port = await new Promise<string>((resolve, reject) => {
    let printed = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes("\n")) resolve(printed.trim());
    });
    child.on("exit", (code) => reject(new Error(`the plugin exited (${code}) before printing its port`)));
  });
  const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    client,
    stop() {
      client.close();
      child.kill();
    },
  };
}

/** A unary call of the client as a promise. */
export function call<Req, Res>(
  method: (request: Req, callback: (error: grpc.ServiceError | null, response: Res) => void) => unknown,
  request: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    method(request, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

/**
 * What an installed plugin executable prints when started as the engine starts it, here with an
 * empty PATH (so neither `node` nor any other command can be found): its port. It is stopped then.
 */
export async function portPrintedWithBarePath(executable: string): Promise<string> {
  const plugin = spawn(executable, [], { env: { PATH: "" }, stdio: ["ignore", "pipe", "pipe"] });
  try {
    return await new Promise<string>((resolve, reject) => {
      plugin.stdout.on("data", (chunk: Buffer) => resolve(chunk.toString().trim()));
      plugin.on("exit", (code) => reject(new Error(`the plugin exited with ${code}`)));
    });
  } finally {
    plugin.kill();
  }
}
