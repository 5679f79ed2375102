import fs from "node:fs";
import path from "node:path";
import { apiKeyIsPlaintextIn } from "../core/credentials";

/**
 * The stack's config file as the engine reads it: `Pulumi.<stack>.yaml` in the project's folder (the
 * folder the engine starts the plugin in), or in its `stackConfigDir`. The stack's name is the first
 * part of the provider's URN. Undefined when there is none to read there.
 */
function stackConfigText(providerUrn: string): string | undefined {
  const stack = /^urn:pulumi:([^:]+)::/.exec(providerUrn)?.[1];
  if (!stack) return undefined;
  const projectFile = ["Pulumi.yaml", "Pulumi.yml"]
    .map((name) => path.resolve(name))
    .find((file) => fs.existsSync(file));
  if (!projectFile) return undefined;
  const configDir = /^stackConfigDir:\s*["']?([^"'#\s]+)/m.exec(fs.readFileSync(projectFile, "utf8"))?.[1] ?? ".";
  for (const extension of ["yaml", "yml"]) {
    const file = path.resolve(path.dirname(projectFile), configDir, `Pulumi.${stack}.${extension}`);
    if (fs.existsSync(file)) return fs.readFileSync(file, "utf8");
  }
  return undefined;
}

/** Whether the stack of this provider sets proxy:apiKey in plain text in its config file. */
export function stackSetsPlaintextApiKey(providerUrn: string): boolean {
  const text = stackConfigText(providerUrn);
  return text !== undefined && apiKeyIsPlaintextIn(text);
}
