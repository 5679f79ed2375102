import type { Deployment } from "@pulumi/pulumi/automation";
import { SENSITIVE_SCOPES } from "../../contract/keys";
import { kindOfType } from "../../provider/kinds";
import { KINDS, type NativeKind } from "../../provider/native/kinds";
import type { ProxyClient } from "../../sdk";

/** One object of the account, as the coverage report names it. */
export interface AccountObject {
  id: string;
  /** The object's own name (an allocation's address), for people. */
  name: string;
  /** For keys: their scopes. */
  scopes?: string[];
}

export interface KindCoverage {
  /** `ProxyUser` */
  type: string;
  /** The native token the import file uses: `proxy:index:ProxyUser`. */
  token: string;
  /**
   * What the account holds of this kind, the stack's own credential left out (it is never imported):
   * always `managed + unmanaged.length`, in the JSON and in the text alike.
   */
  total: number;
  managed: number;
  /** Objects no resource of the stack holds, the stack's own credential left out. */
  unmanaged: AccountObject[];
  /** Ids the state holds that the account no longer has: the next refresh drops them. */
  goneFromAccount: string[];
  /** List requests the walk of this kind's collection made. */
  listRequests: number;
}

export interface CoverageReport {
  stack: string;
  kinds: KindCoverage[];
  /** Unmanaged keys that can spend or mint keys, named first. */
  findings: AccountObject[];
  /** The key the stack's provider authenticates with: never imported (a destroy would revoke it). */
  credential?: AccountObject;
  /** Managed share of the objects, the credential left out: 100 when nothing is left to import. */
  percent: number;
}

/** One entry of `pulumi import --file`. */
export interface ImportEntry {
  type: string;
  name: string;
  id: string;
}

/** Ids of every proxy resource the state holds, dynamic (`pulumi-nodejs:dynamic/proxy:*`) or native, by kind. */
export function managedIds(deployment: Deployment): Map<string, Set<string>> {
  const resources = (deployment.deployment?.resources ?? []) as { type: string; id?: string }[];
  const managed = new Map<string, Set<string>>();
  for (const resource of resources) {
    const kind = kindOfType(resource.type);
    if (!kind || !resource.id) continue;
    const ids = managed.get(kind.type) ?? new Set<string>();
    ids.add(resource.id);
    managed.set(kind.type, ids);
  }
  return managed;
}

/** Names the state already uses, so an import never collides with a resource of the stack. */
export function stateNames(deployment: Deployment): string[] {
  const resources = (deployment.deployment?.resources ?? []) as { urn: string }[];
  return resources.map((resource) => resource.urn.split("::").pop() ?? "");
}

function describe(item: Record<string, unknown> & { id: string }): AccountObject {
  const name = typeof item.name === "string" ? item.name : typeof item.ip === "string" ? item.ip : item.id;
  return { id: item.id, name, ...(Array.isArray(item.scopes) ? { scopes: item.scopes.map(String) } : {}) };
}

export interface Walked {
  items: AccountObject[];
  /** Keys' `secret_hint`: the last four characters of their secret, which the API shows of every key. */
  hints: Map<string, string>;
  requests: number;
}

/** Objects a caller already listed (the report reads full objects), as coverage counts them. */
export function walkedFrom(listed: readonly object[], requests: number): Walked {
  const items: AccountObject[] = [];
  const hints = new Map<string, string>();
  for (const item of listed as (Record<string, unknown> & { id: string })[]) {
    items.push(describe(item));
    if (typeof item.secret_hint === "string") hints.set(item.id, item.secret_hint);
  }
  return { items, hints, requests };
}

/** Every object of one kind, by the walk of its collection's list (full pages, following the cursor). */
async function walk(kind: NativeKind, client: ProxyClient): Promise<Walked> {
  const collection = kind.declaration.collection(client);
  const listed: object[] = [];
  let requests = 0;
  let cursor: string | undefined;
  do {
    const page = await collection.page(cursor, () => {
      requests += 1;
    });
    listed.push(...(page.items as object[]));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return walkedFrom(listed, requests);
}

// A key with one of them outside any stack is a security finding.
const isPowerful = (object: AccountObject) => SENSITIVE_SCOPES.some((scope) => object.scopes?.includes(scope));

/**
 * What the account holds against what the stack manages: every kind's collection walked once, no
 * request per object. `credentialHint` is the last four characters of the stack's API key, which the
 * API shows of every key as `secret_hint`. A kind in `listed` (by its name, `ProxyUser`) is not walked again.
 */
export async function coverageOf(
  stack: string,
  client: ProxyClient,
  deployment: Deployment,
  credentialHint: string,
  listed: ReadonlyMap<string, Walked> = new Map(),
): Promise<CoverageReport> {
  const managed = managedIds(deployment);
  const walks = await Promise.all(KINDS.map((kind) => listed.get(kind.name) ?? walk(kind, client)));
  let credential: AccountObject | undefined;
  const kinds = KINDS.map((kind, index): KindCoverage => {
    const { items, hints, requests } = walks[index] ?? { items: [], hints: new Map(), requests: 0 };
    const ids = managed.get(kind.declaration.type) ?? new Set<string>();
    const unmanaged = items.filter((item) => !ids.has(item.id));
    const own = unmanaged.find((item) => hints.get(item.id) === credentialHint);
    if (own) credential = own;
    const present = new Set(items.map((item) => item.id));
    return {
      type: kind.name,
      token: kind.token,
      total: items.length - (own ? 1 : 0),
      managed: items.length - unmanaged.length,
      unmanaged: unmanaged.filter((item) => item !== own),
      goneFromAccount: [...ids].filter((id) => !present.has(id)).sort(),
      listRequests: requests,
    };
  });
  const findings = kinds.flatMap((kind) => kind.unmanaged.filter(isPowerful));
  const counted = kinds.reduce((sum, kind) => sum + kind.total, 0);
  const open = kinds.reduce((sum, kind) => sum + kind.unmanaged.length, 0);
  const percent = counted === 0 ? 100 : Math.floor(((counted - open) / counted) * 1000) / 10;
  return { stack, kinds, findings, ...(credential ? { credential } : {}), percent };
}
