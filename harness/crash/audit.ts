import { request } from "undici";
import type { ReferenceServer } from "../../server";
import type { Deployment, StateResource } from "./cliStack";

/**
 * What a killed run can leave wrong, measured against the server's own records:
 * - orphans: objects the account holds that no state names (the stack lost track of them);
 * - dead ids: state that names an object the account no longer holds;
 * - duplicates: one name held more than once;
 * - extra charges: allocation charges beyond the allocations the stack meant to make, plus
 *   address replacements beyond the ones it meant to make (each uses a free replacement or costs one);
 * - dead secrets: a key secret in state that is not the key's current secret, or a password that is
 *   not the proxy user's, or either missing from a record that should hold it.
 */
export interface CrashAudit {
  orphans: string[];
  deadIds: string[];
  duplicates: string[];
  extraCharges: number;
  deadSecrets: string[];
  /** Operations the engine still records as interrupted. */
  pendingOperations: number;
}

/** The audit of a stack that a kill left nothing wrong with. */
export const CLEAN_AUDIT: CrashAudit = {
  orphans: [],
  deadIds: [],
  duplicates: [],
  extraCharges: 0,
  deadSecrets: [],
  pendingOperations: 0,
};

/** What the stack meant to do so far: allocations made and address replacements of live allocations. */
export interface Intent {
  allocations: number;
  /** Allocation resource name → replacements it asked for since it was created. */
  replacements: Map<string, number>;
}

interface Named {
  id: string;
  name: string;
}
interface WireKey extends Named {
  secret_hint: string;
}
interface WireAllocation {
  id: string;
  replacements_this_month: number;
}
interface WireCharge {
  kind: string;
}

const kindOf = (resource: StateResource) => resource.type.split(":").pop() ?? "";

/** A value from `pulumi stack export --show-secrets`: secrets come wrapped, their plaintext as JSON. */
export function plain(value: unknown): unknown {
  if (value && typeof value === "object" && "plaintext" in value) {
    return JSON.parse(String((value as { plaintext: unknown }).plaintext));
  }
  return value;
}

export async function auditCrash(server: ReferenceServer, state: Deployment, intent: Intent): Promise<CrashAudit> {
  const snapshot = server.control.snapshot();
  const users = snapshot.proxyUsers as Named[];
  const keys = (snapshot.keys as (WireKey & { name: string })[]).filter((key) => key.name !== "root");
  const ips = snapshot.ips as WireAllocation[];
  const charges = snapshot.charges as WireCharge[];
  const managed = (state.resources ?? []).filter((resource) =>
    ["ProxyUser", "ApiKey", "IpAllocation"].includes(kindOf(resource)),
  );
  const inState = new Set(managed.map((resource) => resource.id));
  const held = new Set([...users, ...keys, ...ips].map((object) => object.id));

  const duplicates: string[] = [];
  for (const [label, list] of [
    ["ProxyUser", users],
    ["ApiKey", keys],
  ] as const) {
    const counts = new Map<string, number>();
    for (const object of list) counts.set(object.name, (counts.get(object.name) ?? 0) + 1);
    for (const [name, count] of counts) if (count > 1) duplicates.push(`${label} ${name} ×${count}`);
  }

  const allocationCharges = charges.filter((charge) => charge.kind === "ip_allocation").length;
  let extraReplacements = 0;
  for (const resource of managed.filter((r) => kindOf(r) === "IpAllocation")) {
    const live = ips.find((ip) => ip.id === resource.id);
    const name = resource.urn.split("::").pop() ?? "";
    if (live) extraReplacements += Math.max(0, live.replacements_this_month - (intent.replacements.get(name) ?? 0));
  }
  const replacementCharges = charges.filter((charge) => charge.kind === "ip_replacement").length;

  const deadSecrets: string[] = [];
  for (const resource of managed) {
    const outputs = resource.outputs ?? {};
    const name = `${kindOf(resource)} ${resource.urn.split("::").pop()}`;
    const secret = { ApiKey: "secret", ProxyUser: "password" }[kindOf(resource)];
    if (!secret) continue;
    const value = plain(outputs[secret]);
    // A lost secret is as dead as a wrong one; only a key adopted with adoptId never had one in state.
    if (value === undefined || value === null) {
      if (!resource.inputs?.adoptId) deadSecrets.push(`${name} (no secret in state)`);
      continue;
    }
    const works =
      secret === "secret"
        ? await secretIsCurrent(server.url, String(resource.id), String(value))
        : server.control.passwordMatches(String(resource.id), String(value));
    if (!works) deadSecrets.push(name);
  }

  return {
    orphans: [...held].filter((id) => !inState.has(id)),
    deadIds: [...inState].filter((id) => id === undefined || !held.has(id)).map(String),
    duplicates,
    extraCharges: Math.max(0, allocationCharges - intent.allocations) + replacementCharges + extraReplacements,
    deadSecrets,
    pendingOperations: state.pending_operations?.length ?? 0,
  };
}

/** A key's own secret may read the key: it works, and it is the current one (not one in its grace period). */
async function secretIsCurrent(baseUrl: string, keyId: string, secret: string): Promise<boolean> {
  const response = await request(`${baseUrl}/v1/keys/${encodeURIComponent(keyId)}`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) return false;
  return (JSON.parse(text) as WireKey).secret_hint === secret.slice(-4);
}
