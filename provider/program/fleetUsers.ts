import fs from "node:fs";
import path from "node:path";

/**
 * A reseller's proxy users as one file: CSV (a header row naming the columns, the way a spreadsheet
 * or a database export writes it) or JSON (an array of objects). The fleet command splits the file
 * into one stack per customer, and each stack's program reads its own customer's rows from the same
 * file, so both sides read it here. Only the shape is checked here; the values' bounds (name syntax,
 * ceilings) are the resource's own, checked at preview with the resource's name.
 */
export interface FleetUser {
  customer: string;
  name: string;
  dailyGb?: number;
  monthlyGb?: number;
  enabled?: boolean;
}

const COLUMNS = ["customer", "name", "dailyGb", "monthlyGb", "enabled"] as const;
/** A customer names a stack, so it takes the characters a stack name takes, lower case. */
const CUSTOMER = /^[a-z0-9][a-z0-9_.-]{0,99}$/;

type Row = Record<string, unknown>;

function csvRows(text: string, file: string): { row: Row; where: string }[] {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? "").split(",").map((cell) => cell.trim());
  const unknown = header.filter((column) => !(COLUMNS as readonly string[]).includes(column));
  if (unknown.length > 0) {
    throw new Error(`${file}:1: unknown column "${unknown[0]}"; the columns are ${COLUMNS.join(", ")}`);
  }
  return lines.slice(1).flatMap((line, index) => {
    if (line.trim() === "") return [];
    const where = `${file}:${index + 2}`;
    if (line.includes('"')) throw new Error(`${where}: quoted cells are not read; names and numbers need none`);
    const cells = line.split(",").map((cell) => cell.trim());
    if (cells.length !== header.length) {
      throw new Error(`${where}: ${cells.length} cells, the header names ${header.length}`);
    }
    const row: Row = Object.fromEntries(header.map((column, i) => [column, cells[i] === "" ? undefined : cells[i]]));
    return [{ row, where }];
  });
}

function jsonRows(text: string, file: string): { row: Row; where: string }[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error(`${file}: must hold a JSON array of users`);
  return parsed.map((row, index) => ({ row: row as Row, where: `${file}[${index}]` }));
}

function numberField(row: Row, field: "dailyGb" | "monthlyGb", where: string): number | undefined {
  const value = row[field];
  if (value === undefined || value === null) return undefined;
  const number = typeof value === "number" ? value : Number(value);
  if (typeof value === "boolean" || !Number.isFinite(number)) {
    throw new Error(`${where}: ${field} must be a number of GB, got ${JSON.stringify(value)}`);
  }
  return number;
}

function booleanField(row: Row, where: string): boolean | undefined {
  const value = row.enabled;
  if (value === undefined || value === null || typeof value === "boolean") return value ?? undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new Error(`${where}: enabled must be true or false, got ${JSON.stringify(value)}`);
}

function userOf(row: Row, where: string): FleetUser {
  const extra = Object.keys(row).filter((key) => !(COLUMNS as readonly string[]).includes(key));
  if (extra.length > 0) throw new Error(`${where}: unknown field "${extra[0]}"; the fields are ${COLUMNS.join(", ")}`);
  const customer = row.customer;
  if (typeof customer !== "string" || !CUSTOMER.test(customer)) {
    throw new Error(
      `${where}: customer ${JSON.stringify(customer)} must be 1–100 of a-z, 0-9, _ . - (it names a stack)`,
    );
  }
  if (typeof row.name !== "string" || row.name === "") throw new Error(`${where}: name is required`);
  const dailyGb = numberField(row, "dailyGb", where);
  const monthlyGb = numberField(row, "monthlyGb", where);
  const enabled = booleanField(row, where);
  return {
    customer,
    name: row.name,
    ...(dailyGb !== undefined ? { dailyGb } : {}),
    ...(monthlyGb !== undefined ? { monthlyGb } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
  };
}

/** Every user in the file, checked for shape and for names used twice (names are unique per account). */
export function fleetUsers(file: string): FleetUser[] {
  const text = fs.readFileSync(file, "utf8");
  const shown = path.basename(file);
  const rows = file.endsWith(".json") ? jsonRows(text, shown) : csvRows(text, shown);
  const seen = new Map<string, string>();
  return rows.map(({ row, where }) => {
    const user = userOf(row, where);
    const first = seen.get(user.name);
    if (first) throw new Error(`${where}: the name "${user.name}" is used at ${first} already; names are unique`);
    seen.set(user.name, where);
    return user;
  });
}

/** One customer's users, in the file's order: what one stack of the fleet declares. */
export function customerUsers(file: string, customer: string): FleetUser[] {
  return fleetUsers(file).filter((user) => user.customer === customer);
}
