import type { ConfigKey } from "../../provider/core/settings";
import type { FleetSpec, Shard } from "./spec";

/**
 * The fleet's shards as Pulumi Kubernetes Operator `Stack` resources (pulumi.com/v1): one per shard,
 * the same program from Git, the same stack name and config the local fleet uses. The shard's key is
 * never in a manifest: `proxy:apiKey` comes from the Secret named after the key (`secretsRef`), the
 * passphrase from one shared Secret (`envRefs`). The operator runs one update per Stack at a time.
 */
export interface OperatorOptions {
  /** The Git repository holding the program, as the operator clones it. */
  repo: string;
  branch: string;
  /** The program's folder inside the repository. */
  repoDir: string;
  /** The state backend both the operator and the local fleet use (e.g. s3://bucket/path). */
  backend: string;
  apiUrl: string;
  namespace?: string;
  /** The Secret holding PULUMI_CONFIG_PASSPHRASE (key `passphrase`). */
  passphraseSecret: string;
  /** How often the operator re-runs an unchanged Stack (a refresh and up), in seconds. */
  resyncSeconds: number;
}

export type Manifest = Record<string, unknown>;

/** The Secret a shard's key lives in, key `apiKey`: named like the key itself. */
export const keySecretName = (shard: Shard) => shard.keyName;

export function operatorStacks(spec: FleetSpec, shards: Shard[], options: OperatorOptions): Manifest[] {
  return shards.map((shard) => ({
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: {
      name: `${spec.keys.prefix}-${shard.stack}`.slice(0, 63).replace(/[^a-z0-9-]/g, "-"),
      ...(options.namespace ? { namespace: options.namespace } : {}),
      labels: { "app.kubernetes.io/part-of": `${spec.keys.prefix}-fleet`, "pulumi-proxy/customer": shard.stack },
    },
    spec: {
      stack: shard.stack,
      projectRepo: options.repo,
      branch: options.branch,
      repoDir: options.repoDir,
      backend: options.backend,
      refresh: true,
      resyncFrequencySeconds: options.resyncSeconds,
      // Deleting the Stack resource destroys the shard's users; its key is revoked by `fleet prune`.
      destroyOnFinalize: true,
      config: {
        "fleet:customer": shard.stack,
        "fleet:usersFile": spec.usersFile,
        ["proxy:apiUrl" satisfies ConfigKey]: options.apiUrl,
      },
      secretsRef: {
        ["proxy:apiKey" satisfies ConfigKey]: { type: "Secret", secret: { name: keySecretName(shard), key: "apiKey" } },
      },
      envRefs: {
        PULUMI_CONFIG_PASSPHRASE: { type: "Secret", secret: { name: options.passphraseSecret, key: "passphrase" } },
      },
    },
  }));
}

/** A YAML stream of the manifests. JSON is YAML, so each document is its JSON, which kubectl reads. */
export function yamlStream(manifests: Manifest[]): string {
  return manifests.map((manifest) => `---\n${JSON.stringify(manifest, null, 2)}\n`).join("");
}
