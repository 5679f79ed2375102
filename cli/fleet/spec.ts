import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { GRACE_HOURS_DEFAULT, GRACE_HOURS_MAX, type Scope } from "../../contract/keys";
import { type FleetUser, fleetUsers } from "../../provider/program/fleetUsers";
import { UsageError } from "../stack";

/**
 * The fleet file (`fleet.json`): where the program and the users are, how many stacks run at once,
 * and the keys' names and rotation schedule. Paths are relative to the file's folder.
 */
const FleetFile = z.strictObject({
  program: z.string().default("."),
  users: z.string(),
  concurrency: z.number().int().min(1).max(64).default(4),
  checkpoints: z.boolean().default(false),
  keys: z
    .strictObject({
      prefix: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,30}$/, "must be 1–31 of a-z, 0-9 and '-', starting with a letter")
        .default("fleet"),
      rotateAfterDays: z.number().positive().max(3650).default(30),
      graceHours: z.number().int().min(0).max(GRACE_HOURS_MAX).default(GRACE_HOURS_DEFAULT),
    })
    .default({ prefix: "fleet", rotateAfterDays: 30, graceHours: GRACE_HOURS_DEFAULT }),
});

export interface FleetSpec {
  /** The fleet file itself. */
  file: string;
  /** The program folder (holds Pulumi.yaml); every shard is a stack of this one project. */
  program: string;
  /** The users file, as the program's `fleet:usersFile` config names it (relative to the program). */
  usersFile: string;
  concurrency: number;
  /**
   * Whether the engine writes the state after every step (its default) or once at the end
   * (`PULUMI_SKIP_CHECKPOINTS`). Off by default: the rewrites grow with each stack's size, and a
   * 20 × 500 fleet's up took 646.6 s with them against 219.2 s without, side by side on 2 cores
   * (bench/RESULTS.md); a fleet's killed run is recovered without them (its creates replay by
   * idempotency key, its deletes of gone objects are done).
   */
  checkpoints: boolean;
  keys: { prefix: string; rotateAfterDays: number; graceHours: number };
}

/** One stack of the fleet: a customer's users, run with a key of its own. */
export interface Shard {
  /** The stack's name: the customer. */
  stack: string;
  users: FleetUser[];
  /** The key's name on the account: `<prefix>-<customer>`, cut to the API's 63 characters. */
  keyName: string;
}

/**
 * What a shard's key needs, and nothing more: the program declares proxy users only. Reading them
 * (refresh, drift) needs proxy-users:read; creating, disabling and deleting them proxy-users:write;
 * a create always carries the ceilings, so limits:write. No usage, billing or keys scope.
 */
export const SHARD_SCOPES: Scope[] = ["proxy-users:read", "proxy-users:write", "limits:write"];

/** A shard's key name on the account: `<prefix>-<customer>`, cut to the API's 63 characters. */
export const keyNameFor = (prefix: string, customer: string) => `${prefix}-${customer}`.slice(0, 63);

/** `--fleet` takes the fleet file or the folder holding `fleet.json`. */
export function loadFleet(given: string): FleetSpec {
  const resolved = path.resolve(given);
  const file =
    fs.existsSync(resolved) && fs.statSync(resolved).isDirectory() ? path.join(resolved, "fleet.json") : resolved;
  if (!fs.existsSync(file)) throw new UsageError(`--fleet ${given}: no fleet file at ${file}`);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = FleetFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${file}: ${issue?.path.join(".") || "(top level)"}: ${issue?.message}`);
  }
  const dir = path.dirname(file);
  const program = path.resolve(dir, parsed.data.program);
  if (!fs.existsSync(path.join(program, "Pulumi.yaml"))) {
    throw new UsageError(`${file}: program: no Pulumi.yaml in ${program}`);
  }
  const users = path.resolve(dir, parsed.data.users);
  if (!fs.existsSync(users)) throw new UsageError(`${file}: users: no file at ${users}`);
  return {
    file,
    program,
    usersFile: path.relative(program, users) || path.basename(users),
    concurrency: parsed.data.concurrency,
    checkpoints: parsed.data.checkpoints,
    keys: parsed.data.keys,
  };
}

/** The users split by customer, one shard per customer, sorted by name. */
export function shardsOf(spec: FleetSpec): Shard[] {
  const byCustomer = new Map<string, FleetUser[]>();
  for (const user of fleetUsers(path.resolve(spec.program, spec.usersFile))) {
    byCustomer.set(user.customer, [...(byCustomer.get(user.customer) ?? []), user]);
  }
  return [...byCustomer.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([stack, users]) => ({ stack, users, keyName: keyNameFor(spec.keys.prefix, stack) }));
}
