import { SENSITIVE_SCOPES } from "../../contract/keys";
import { DAY_MS } from "../../contract/pricing";
import type { CoverageReport } from "../coverage/report";
import type { KeyDeadline } from "../deadlines";
import type { ResourceDrift } from "../drift/detect";
import { type AccountData, isReadable, type Unreadable } from "./collect";
import { type Crossing, monthOf, type ReportMonth, trafficByUser, type UserTraffic } from "./traffic";

/** Days after its last rotation (or creation) a key is due to rotate when no stack says otherwise. */
export const ROTATE_EVERY_DAYS_DEFAULT = 90;
/** A key rotating or expiring within this many days is flagged. */
export const DUE_SOON_DAYS = 14;

export interface KeyRow {
  id: string;
  name: string;
  scopes: string[];
  /** Holds billing:write or keys:write: can spend the balance or mint keys. */
  powerful: boolean;
  createdAt: string;
  ageDays: number;
  expiresAt: string | null;
  lastRotatedAt: string | null;
  rotationDueAt: string;
  /** Whose schedule `rotationDueAt` follows: the stack's `rotateAfterDays`, or `--rotate-every`. */
  rotationSchedule: "stack" | "policy";
  status: "ok" | "due-soon" | "overdue" | "expired";
}

export interface SpendByKind {
  kind: string;
  count: number;
  cents: number;
}

export interface StackFacts {
  name: string;
  coverage: CoverageReport;
  /** Resources that differ from the state, by `pulumi preview --refresh`; a string when it could not run. */
  drift: ResourceDrift[] | Unreadable;
  /** Keys the stack rotates on a schedule, by key id. */
  rotations: Map<string, KeyDeadline["at"]>;
}

/**
 * The report as `--json` prints it and the HTML and Markdown render it. `version: 1` is the shape;
 * fields are only added within a version. Holds no secret: the API lists none.
 */
export interface Report {
  version: 1;
  generatedAt: string;
  asOf: string;
  apiUrl: string;
  month: ReportMonth;
  users: UserTraffic[] | Unreadable;
  /** Users that reached or will reach a ceiling this month, soonest first. */
  atRisk: { id: string; name: string; crossing: Crossing }[];
  spend: { balanceCents: number | null; currency: string; byKind: SpendByKind[]; totalCents: number } | Unreadable;
  keys: KeyRow[] | Unreadable;
  stack?: {
    name: string;
    percent: number;
    kinds: { type: string; managed: number; unmanaged: number; goneFromAccount: number }[];
    findings: { id: string; name: string; scopes: string[] }[];
    drift: ResourceDrift[] | Unreadable;
  };
  requests: { total: number; lists: Record<string, number> };
}

const iso = (ms: number) => new Date(ms).toISOString();

function keyRows(data: AccountData, nowMs: number, rotateEveryDays: number, stack?: StackFacts): KeyRow[] | Unreadable {
  if (!isReadable(data.keys)) return data.keys;
  return data.keys.map((key): KeyRow => {
    const created = Date.parse(key.created_at);
    const secretSet = key.last_rotated_at ? Date.parse(key.last_rotated_at) : created;
    const fromStack = stack?.rotations.get(key.id);
    const rotationDue = fromStack ? Date.parse(fromStack) : secretSet + rotateEveryDays * DAY_MS;
    const expires = key.expires_at ? Date.parse(key.expires_at) : Number.POSITIVE_INFINITY;
    const soon = nowMs + DUE_SOON_DAYS * DAY_MS;
    const status: KeyRow["status"] =
      expires <= nowMs
        ? "expired"
        : rotationDue <= nowMs
          ? "overdue"
          : Math.min(rotationDue, expires) <= soon
            ? "due-soon"
            : "ok";
    return {
      id: key.id,
      name: key.name,
      scopes: key.scopes,
      powerful: SENSITIVE_SCOPES.some((scope) => key.scopes.includes(scope)),
      createdAt: key.created_at,
      ageDays: Math.floor((nowMs - created) / DAY_MS),
      expiresAt: key.expires_at,
      lastRotatedAt: key.last_rotated_at,
      rotationDueAt: iso(rotationDue),
      rotationSchedule: fromStack ? "stack" : "policy",
      status,
    };
  });
}

function spendOf(data: AccountData): Report["spend"] {
  if (!isReadable(data.charges)) return data.charges;
  const byKind = new Map<string, SpendByKind>();
  for (const charge of data.charges) {
    const entry = byKind.get(charge.kind) ?? { kind: charge.kind, count: 0, cents: 0 };
    entry.count++;
    entry.cents += charge.amount_cents;
    byKind.set(charge.kind, entry);
  }
  const kinds = [...byKind.values()].sort((a, b) => b.cents - a.cents || a.kind.localeCompare(b.kind));
  return {
    balanceCents: isReadable(data.balance) ? data.balance.balance_cents : null,
    currency: isReadable(data.balance) ? data.balance.currency : "usd",
    byKind: kinds,
    totalCents: kinds.reduce((sum, kind) => sum + kind.cents, 0),
  };
}

/** The report of what was read. `nowMs` dates the keys' ages and due dates. */
export function buildReport(
  data: AccountData,
  options: { apiUrl: string; nowMs: number; rotateEveryDays: number; stack?: StackFacts },
): Report {
  const users = !isReadable(data.users)
    ? data.users
    : !isReadable(data.usage)
      ? data.usage
      : trafficByUser(data.users, data.usage, data.asOf);
  const atRisk = isReadable(users)
    ? users
        .flatMap((user) => user.crossings.map((crossing) => ({ id: user.id, name: user.name, crossing })))
        .sort((a, b) => a.crossing.date.localeCompare(b.crossing.date) || a.name.localeCompare(b.name))
    : [];
  const { stack } = options;
  return {
    version: 1,
    generatedAt: new Date().toISOString(),
    asOf: data.asOf,
    apiUrl: options.apiUrl,
    month: monthOf(data.asOf),
    users,
    atRisk,
    spend: spendOf(data),
    keys: keyRows(data, options.nowMs, options.rotateEveryDays, stack),
    ...(stack
      ? {
          stack: {
            name: stack.name,
            percent: stack.coverage.percent,
            kinds: stack.coverage.kinds.map((kind) => ({
              type: kind.type,
              managed: kind.managed,
              unmanaged: kind.unmanaged.length,
              goneFromAccount: kind.goneFromAccount.length,
            })),
            findings: stack.coverage.findings.map((key) => ({ id: key.id, name: key.name, scopes: key.scopes ?? [] })),
            drift: stack.drift,
          },
        }
      : {}),
    requests: { total: data.requests, lists: data.listRequests },
  };
}
