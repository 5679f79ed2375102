import { visibleText } from "../../contract/visibleText";
import type { Clock } from "../clock";
import { renderAllocation, renderCharge, renderKey, renderProxyUser } from "../render";
import type { ListedKind, Store } from "../store";

export const LISTED_KINDS: readonly ListedKind[] = ["proxyUsers", "keys", "ips", "charges"];
/** The newest charges the console lists; older ones leave the page as new ones arrive. */
export const CHARGES_SHOWN = 200;

/** What the page gets for one kind after a change: objects to add or replace, ids to drop. */
export interface KindChanges {
  put: string[];
  gone: string[];
}

/** Strings as a person should read them: a hidden character in a name is written out, not hidden. */
function shown(object: object): string {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(object))
    copy[field] = typeof value === "string" ? visibleText(value) : value;
  return JSON.stringify(copy);
}

/**
 * The console's copy of every listed object, as the JSON the page gets, kept only while a page
 * watches. The store says which object a change touched; only those are rendered again, so a write
 * costs the console one object's JSON, whatever the size of the account, and the full list is
 * written out once per change for every page that opens, not once per page.
 */
export class ObjectMirror {
  private shownObjects: Map<ListedKind, Map<string, string>> | undefined;
  private readonly touched = new Map<ListedKind, Set<string>>(LISTED_KINDS.map((kind) => [kind, new Set()]));
  private fullList: string | undefined;

  /** Writes since the last `changes()`: how large the next changes frame is about to be. */
  private backlog = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Told the backlog after each write, so a burst can be sent before it outgrows a page's allowance. */
    private readonly onBacklog: (writes: number) => void = () => undefined,
  ) {}

  private readonly onTouched = (kind: ListedKind, id: string): void => {
    this.touched.get(kind)?.add(id);
    this.onBacklog(++this.backlog);
  };

  get watching(): boolean {
    return this.shownObjects !== undefined;
  }

  /** Reads every list once, when the first page opens. */
  start(): void {
    if (this.shownObjects) return;
    this.store.listObservers.add(this.onTouched);
    const charges = this.store.charges.page({ limit: CHARGES_SHOWN, newestFirst: true }).items.reverse();
    this.shownObjects = new Map(
      LISTED_KINDS.map((kind) => {
        const ids = kind === "charges" ? charges.map((charge) => charge.id) : this.ids(kind);
        const entries = ids.flatMap((id) => {
          const json = this.render(kind, id);
          return json === undefined ? [] : [[id, json] as const];
        });
        return [kind, new Map(entries)];
      }),
    );
    for (const ids of this.touched.values()) ids.clear();
    this.fullList = undefined;
  }

  /** The last page closed: nothing is kept or rendered until the next one opens. */
  stop(): void {
    this.store.listObservers.delete(this.onTouched);
    this.shownObjects = undefined;
    this.fullList = undefined;
    for (const ids of this.touched.values()) ids.clear();
  }

  /** Every listed object, as `{kind: [object, …]}` in creation order: what a page opening gets. */
  list(): string {
    if (this.fullList !== undefined) return this.fullList;
    const parts = LISTED_KINDS.map(
      (kind) => `"${kind}":[${[...(this.shownObjects?.get(kind)?.values() ?? [])].join(",")}]`,
    );
    this.fullList = `{${parts.join(",")}}`;
    return this.fullList;
  }

  /** What the touched objects became since the last call, or undefined when nothing shown changed. */
  changes(): string | undefined {
    const mirror = this.shownObjects;
    if (!mirror) return undefined;
    this.backlog = 0;
    const out: Partial<Record<ListedKind, KindChanges>> = {};
    let any = false;
    for (const kind of LISTED_KINDS) {
      const ids = this.touched.get(kind) ?? new Set<string>();
      if (ids.size === 0) continue;
      const shown = mirror.get(kind) ?? new Map<string, string>();
      const change: KindChanges = { put: [], gone: [] };
      for (const id of ids) {
        const json = this.render(kind, id);
        if (json === undefined) {
          if (shown.delete(id)) change.gone.push(id);
        } else if (shown.get(id) !== json) {
          shown.set(id, json);
          change.put.push(json);
        }
      }
      ids.clear();
      if (kind === "charges") {
        for (const oldest of shown.keys()) {
          if (shown.size <= CHARGES_SHOWN) break;
          shown.delete(oldest);
          change.gone.push(oldest);
        }
      }
      if (change.put.length + change.gone.length === 0) continue;
      out[kind] = change;
      any = true;
    }
    if (!any) return undefined;
    this.fullList = undefined;
    const parts = Object.entries(out).map(
      ([kind, { put, gone }]) => `"${kind}":{"put":[${put.join(",")}],"gone":${JSON.stringify(gone)}}`,
    );
    return `{${parts.join(",")}}`;
  }

  private ids(kind: ListedKind): string[] {
    const collection = { proxyUsers: this.store.proxyUsers, keys: this.store.keys, ips: this.store.allocations }[
      kind as Exclude<ListedKind, "charges">
    ];
    return [...collection.values()].map((record) => record.id);
  }

  /** The object as the page shows it, or undefined once it is gone. */
  private render(kind: ListedKind, id: string): string | undefined {
    const now = this.clock.now();
    switch (kind) {
      case "proxyUsers": {
        const record = this.store.proxyUsers.get(id);
        return record && shown(renderProxyUser(record));
      }
      case "keys": {
        const record = this.store.keys.get(id);
        if (!record) return undefined;
        // The hint is the secret's last four characters: the API lists it, the console has no need to.
        const { secret_hint: _hint, ...key } = renderKey(record, now);
        return shown(key);
      }
      case "ips": {
        const record = this.store.allocations.get(id);
        return record && shown(renderAllocation(record, now));
      }
      case "charges": {
        const record = this.store.charges.get(id);
        return record && shown(renderCharge(record));
      }
    }
  }
}
