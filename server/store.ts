import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { IpHealth, IpProduct } from "../contract/ips";
import type { Scope } from "../contract/keys";
import { OrderedCollection, type Sequenced } from "./collection";
import { newId } from "./tokens";

export interface ProxyUserRecord extends Sequenced {
  name: string;
  limits: { daily_gb: number | null; monthly_gb: number | null };
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** Only a hash: the gateway password is shown once, in the create answer. */
  passwordHash: string;
}

export interface AllocationRecord extends Sequenced {
  ip: string;
  product: IpProduct;
  country: string;
  city: string;
  asn: string;
  allocatedAt: number;
  health: IpHealth;
  blacklists: number;
  /** `YYYY-MM` the counter below belongs to; a new UTC month starts again from zero. */
  replacementMonth: string | null;
  replacementsInMonth: number;
  /** Addresses this allocation gave up, with the term they were given up in: never handed back within it. */
  retiredIps: { ip: string; term: number }[];
}

export interface KeySecret {
  hash: string;
  hint: string;
}

export interface KeyRecord extends Sequenced {
  name: string;
  scopes: Scope[];
  createdAt: number;
  expiresAt: number | null;
  lastRotatedAt: number | null;
  /** The key the server starts with; a restart re-issues its secret so the operator can be told it. */
  root: boolean;
  current: KeySecret;
  previous: (KeySecret & { expiresAt: number }) | null;
}

export type ChargeKind = "ip_allocation" | "ip_replacement";

/** The lists the API serves, by the names the console shows them under. */
export type ListedKind = "proxyUsers" | "keys" | "ips" | "charges";

export interface ChargeRecord extends Sequenced {
  kind: ChargeKind;
  amountCents: number;
  createdAt: number;
  ref: string | null;
}

export interface TrafficBucket {
  proxyUserId: string;
  day: string;
  bytes: number;
  requests: number;
}

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  /** The first answer's body, sealed with a key derived from the caller's secret (create answers carry secrets). */
  sealedBody: string | null;
  createdAt: number;
}

interface PersistedState {
  version: 1;
  nextSeq: number;
  balanceCents: number;
  proxyUsers: ProxyUserRecord[];
  allocations: AllocationRecord[];
  keys: KeyRecord[];
  charges: ChargeRecord[];
  traffic: TrafficBucket[];
  idempotency: [string, IdempotencyRecord][];
}

/** All account state, in memory, with the secondary indexes the handlers need. */
export class Store {
  balanceCents: number;
  readonly proxyUsers = new OrderedCollection<ProxyUserRecord>("pu");
  readonly allocations = new OrderedCollection<AllocationRecord>("alloc");
  readonly keys = new OrderedCollection<KeyRecord>("key");
  readonly charges = new OrderedCollection<ChargeRecord>("ch");
  readonly traffic = new Map<string, TrafficBucket>();
  /** `<key id> <idempotency key>` → the first answer. */
  readonly idempotency = new Map<string, IdempotencyRecord>();
  private readonly proxyUserIdByName = new Map<string, string>();
  private readonly allocationIdByIp = new Map<string, string>();
  /** sha256 of a live or grace-period secret → key id. */
  private readonly keyIdBySecretHash = new Map<string, string>();
  /** `<proxy user id> <YYYY-MM>` → bytes, so the gateway checks a monthly ceiling without a scan. */
  private readonly bytesByMonth = new Map<string, number>();
  /**
   * Told a proxy user's state just before its `enabled`, limits or existence change. The gateway keeps
   * serving that state until its propagation delay has passed.
   */
  readonly proxyUserObservers = new Set<(before: ProxyUserRecord, at: number) => void>();
  /**
   * Told which listed object a change touches (added, about to change, or deleted), so that a watcher
   * (the console) re-reads that object alone instead of every list after every write.
   */
  readonly listObservers = new Set<(kind: ListedKind, id: string) => void>();
  private seq = 0;

  constructor(balanceCents: number) {
    this.balanceCents = balanceCents;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  proxyUserByName(name: string): ProxyUserRecord | undefined {
    const id = this.proxyUserIdByName.get(name);
    return id === undefined ? undefined : this.proxyUsers.get(id);
  }

  /** Every change to a listed object goes through a method below that calls this, or calls it itself. */
  touched(kind: ListedKind, id: string): void {
    for (const observe of this.listObservers) observe(kind, id);
  }

  addProxyUser(record: ProxyUserRecord): void {
    this.proxyUsers.add(record);
    this.proxyUserIdByName.set(record.name, record.id);
    this.touched("proxyUsers", record.id);
  }

  /** Call before changing `enabled` or the limits, or deleting: observers get a copy of the state so far. */
  noteProxyUserChange(record: ProxyUserRecord, at: number): void {
    for (const observe of this.proxyUserObservers) observe({ ...record, limits: { ...record.limits } }, at);
    this.touched("proxyUsers", record.id);
  }

  deleteProxyUser(record: ProxyUserRecord): void {
    this.proxyUsers.delete(record.id);
    this.proxyUserIdByName.delete(record.name);
    this.touched("proxyUsers", record.id);
  }

  allocationByIp(ip: string): AllocationRecord | undefined {
    const id = this.allocationIdByIp.get(ip);
    return id === undefined ? undefined : this.allocations.get(id);
  }

  isAllocated(ip: string): boolean {
    return this.allocationIdByIp.has(ip);
  }

  addAllocation(record: AllocationRecord): void {
    this.allocations.add(record);
    this.allocationIdByIp.set(record.ip, record.id);
    this.touched("ips", record.id);
  }

  moveAllocation(record: AllocationRecord, newIp: string): void {
    this.allocationIdByIp.delete(record.ip);
    record.ip = newIp;
    this.allocationIdByIp.set(newIp, record.id);
    this.touched("ips", record.id);
  }

  deleteAllocation(record: AllocationRecord): void {
    this.allocations.delete(record.id);
    this.allocationIdByIp.delete(record.ip);
    this.touched("ips", record.id);
  }

  keyIdForSecretHash(hash: string): string | undefined {
    return this.keyIdBySecretHash.get(hash);
  }

  addKey(record: KeyRecord): void {
    this.keys.add(record);
    this.indexKeySecrets(record);
    this.touched("keys", record.id);
  }

  /** Swaps a key's secrets; whatever is not current or previous afterwards stops working at once. */
  setKeySecrets(record: KeyRecord, current: KeySecret, previous: KeyRecord["previous"]): void {
    this.unindexKeySecrets(record);
    record.current = current;
    record.previous = previous;
    this.indexKeySecrets(record);
    this.touched("keys", record.id);
  }

  deleteKey(record: KeyRecord): void {
    this.keys.delete(record.id);
    this.unindexKeySecrets(record);
    this.touched("keys", record.id);
  }

  addCharge(kind: ChargeKind, amountCents: number, ref: string | null, now: number): ChargeRecord {
    const charge: ChargeRecord = { id: newId("ch"), seq: this.nextSeq(), kind, amountCents, createdAt: now, ref };
    this.charges.add(charge);
    this.balanceCents -= amountCents;
    this.touched("charges", charge.id);
    return charge;
  }

  recordTraffic(proxyUserId: string, day: string, bytes: number, requests: number): void {
    const bucketKey = `${proxyUserId} ${day}`;
    const bucket = this.traffic.get(bucketKey);
    if (bucket) {
      bucket.bytes += bytes;
      bucket.requests += requests;
    } else {
      this.traffic.set(bucketKey, { proxyUserId, day, bytes, requests });
    }
    const monthKey = `${proxyUserId} ${day.slice(0, 7)}`;
    this.bytesByMonth.set(monthKey, (this.bytesByMonth.get(monthKey) ?? 0) + bytes);
  }

  /** Bytes of one proxy user on a UTC day (`YYYY-MM-DD`). */
  bytesOnDay(proxyUserId: string, day: string): number {
    return this.traffic.get(`${proxyUserId} ${day}`)?.bytes ?? 0;
  }

  /** Bytes of one proxy user in a UTC month (`YYYY-MM`). */
  bytesInMonth(proxyUserId: string, month: string): number {
    return this.bytesByMonth.get(`${proxyUserId} ${month}`) ?? 0;
  }

  private indexKeySecrets(record: KeyRecord): void {
    this.keyIdBySecretHash.set(record.current.hash, record.id);
    if (record.previous) this.keyIdBySecretHash.set(record.previous.hash, record.id);
  }

  private unindexKeySecrets(record: KeyRecord): void {
    this.keyIdBySecretHash.delete(record.current.hash);
    if (record.previous) this.keyIdBySecretHash.delete(record.previous.hash);
  }

  toPersisted(): PersistedState {
    return {
      version: 1,
      nextSeq: this.seq,
      balanceCents: this.balanceCents,
      proxyUsers: [...this.proxyUsers.values()],
      allocations: [...this.allocations.values()],
      keys: [...this.keys.values()],
      charges: [...this.charges.values()],
      traffic: [...this.traffic.values()],
      idempotency: [...this.idempotency],
    };
  }

  static fromPersisted(state: PersistedState): Store {
    if (state.version !== 1) throw new Error(`unsupported state file version: ${String(state.version)}`);
    const store = new Store(state.balanceCents);
    store.seq = state.nextSeq;
    for (const record of state.proxyUsers) store.addProxyUser(record);
    for (const record of state.allocations) store.addAllocation(record);
    for (const record of state.keys) store.addKey(record);
    for (const record of state.charges) store.charges.add(record);
    for (const bucket of state.traffic)
      store.recordTraffic(bucket.proxyUserId, bucket.day, bucket.bytes, bucket.requests);
    for (const [key, record] of state.idempotency) store.idempotency.set(key, record);
    return store;
  }
}

export function loadStore(stateFile: string | undefined, balanceCents: number): Store {
  if (stateFile === undefined || !existsSync(stateFile)) return new Store(balanceCents);
  return Store.fromPersisted(JSON.parse(readFileSync(stateFile, "utf8")) as PersistedState);
}

/** Write-then-rename, so a crash mid-write never leaves a torn state file behind. */
export function saveStore(stateFile: string, store: Store): void {
  const temporary = `${stateFile}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(store.toPersisted()), { mode: 0o600 });
  renameSync(temporary, stateFile);
}
