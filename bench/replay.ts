import fs from "node:fs";
import path from "node:path";
import { SECRET_SIGNATURE } from "../provider/core/pulumiState";

/**
 * The same-state floor: a provider that makes no request yet leaves the state the real one left. It
 * replays, per resource, the inputs (as `check` normalized them, with the hidden identity), the id and
 * the outputs that a real run stored, secrets included as secrets of the same length. The engine then
 * checkpoints a state of the real size and shape, so real ÷ same-state is what the provider's own
 * work (requests, waits, its process) adds, and same-state ÷ no-op is what storing its outputs costs
 * the engine.
 */

/** Per resource name: what the program passes and the provider process replays. */
export type Recorded = Record<
  string,
  { id: string; inputs: Record<string, unknown>; outputs: Record<string, unknown>; secrets: string[] }
>;

const RECORD_FILE = "recorded.json";

/** Looks the resource up by its hidden identity, which the program passes as the real classes do. */
export const REPLAY_PROVIDER = `"use strict";
const recorded = Object.values(require("./${RECORD_FILE}"));
const byIdentity = new Map(recorded.map((entry) => [entry.inputs.__identity, entry]));
module.exports = {
  async check(olds, news) { return { inputs: { ...byIdentity.get(news.__identity).inputs } }; },
  async create(inputs) {
    const entry = byIdentity.get(inputs.__identity);
    return { id: entry.id, outs: entry.outputs };
  },
  async read(id, props) { return { id, props }; },
  async diff() { return { changes: false }; },
  async delete() {},
};
`;

/**
 * An exported secret's value: {<signature>: …, plaintext: <JSON>} as the Automation API exports it, or
 * {…, ciphertext: "v1:<nonce>:<base64 of plaintext + 16-byte tag>"}, given back as a string of that length.
 */
function secretValue(value: unknown): { value: unknown } | undefined {
  if (typeof value !== "object" || value === null || !(SECRET_SIGNATURE in value)) return undefined;
  const { plaintext, ciphertext } = value as { plaintext?: string; ciphertext?: string };
  if (plaintext !== undefined) return { value: JSON.parse(plaintext) };
  const sealed = Buffer.from(ciphertext?.split(":").pop() ?? "", "base64");
  return { value: "s".repeat(Math.max(0, sealed.length - 16)) };
}

interface ExportedResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

/** Writes what the real stack stored where the replay provider's process reads it; returns it for the program. */
export function recordForReplay(deployment: { resources?: ExportedResource[] }, moduleDir: string): Recorded {
  const recorded: Recorded = {};
  for (const resource of deployment.resources ?? []) {
    // The proxy resources, dynamic or native; not the stack or its providers.
    if (resource.id === undefined || resource.type.startsWith("pulumi:")) continue;
    const secrets: string[] = [];
    const outputs: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource.outputs ?? {})) {
      if (key === "__provider") continue;
      const secret = secretValue(value);
      if (secret) secrets.push(key);
      outputs[key] = secret ? secret.value : value;
    }
    const { __provider: _provider, ...inputs } = resource.inputs ?? {};
    recorded[resource.urn.split("::").pop() ?? ""] = { id: resource.id, inputs, outputs, secrets };
  }
  fs.writeFileSync(path.join(moduleDir, RECORD_FILE), JSON.stringify(recorded));
  return recorded;
}
