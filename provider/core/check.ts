import type * as pulumi from "@pulumi/pulumi";
import { unknownValue } from "@pulumi/pulumi/runtime/rpc";
import type { z } from "zod";

/**
 * `check` for every resource: each input is validated against its field of the resource's input
 * schema, which reuses the SDK's wire schemas, so the provider refuses exactly what the API would.
 * Every bad input is reported at once, as "<field> <what is wrong> (got <value>)" in plain words;
 * the engine adds the resource's name. Values the engine does not know yet (outputs of other
 * resources during a preview) pass unvalidated, to be checked again once known.
 */

/** The engine's placeholder for a value not known until an apply: the Node SDK's own constant, as the native front reads it. */
function isUnknown(value: unknown): boolean {
  return value === unknownValue;
}

function containsUnknown(value: unknown): boolean {
  if (isUnknown(value)) return true;
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(containsUnknown);
}

export type CheckFailure = pulumi.dynamic.CheckFailure;

/**
 * Validates and normalizes `news`; `refine` adds the rules that span fields or need the old inputs,
 * and runs only once every input is valid and known.
 */
export function checkInputs<S extends z.ZodRawShape>(
  shape: S,
  news: Record<string, unknown>,
  refine?: (inputs: z.output<z.ZodObject<S>>) => CheckFailure[],
): pulumi.dynamic.CheckResult<z.output<z.ZodObject<S>>> {
  const failures: CheckFailure[] = [];
  const inputs: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shape) as [string, z.ZodType][]) {
    // null and absent both mean "not set", as they do in state.
    const value = news[key] ?? undefined;
    if (isUnknown(value)) {
      inputs[key] = value;
      continue;
    }
    const parsed = field.safeParse(value, { error: plainMessage });
    if (parsed.success) {
      if (parsed.data !== undefined) inputs[key] = parsed.data;
      continue;
    }
    // A list or object with unknown parts is checked again once they are known.
    const issues = parsed.error.issues.filter((issue) => !containsUnknown(at(value, issue.path)));
    if (issues.length === 0) inputs[key] = value;
    failures.push(...issues.flatMap((issue) => toFailures(key, value, issue)));
  }
  const valid = inputs as z.output<z.ZodObject<S>>;
  if (failures.length === 0 && refine && !containsUnknown(inputs)) failures.push(...refine(valid));
  return failures.length > 0 ? { failures } : { inputs: valid };
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<PropertyKey, unknown> | null | undefined)?.[key];
  return current;
}

/** `limits.dailyGb`, `scopes[0]`: the engine's property path syntax. */
function propertyPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("");
}

function toFailures(key: string, value: unknown, issue: z.core.$ZodIssue): CheckFailure[] {
  const path = [key, ...issue.path];
  // An unknown field is named by its own path, so the user sees which one to remove.
  const named = issue.code === "unrecognized_keys" ? issue.keys.map((extra) => [...path, extra]) : [path];
  return named.map((where) => {
    const property = propertyPath(where);
    const shown = describe(at(value, issue.path));
    const got = shown && !issue.message.includes(`(${shown})`) ? ` (got ${shown})` : "";
    return { property, reason: `${property} ${issue.message}${got}` };
  });
}

function describe(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === "boolean") return String(value);
  return undefined;
}

const KINDS: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "text",
  boolean: "true or false",
  array: "a list",
  object: "an object",
};

const FORMATS: Record<string, string> = {
  datetime: "an ISO 8601 timestamp such as 2030-01-31T00:00:00Z",
  date: "a date such as 2030-01-31",
  ipv4: "an IPv4 address",
};

/**
 * Plain wording for what a schema leaves to zod's defaults ("expected int, received number"). A
 * message the schema gives itself takes precedence: zod consults this only where there is none.
 */
function plainMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      return `must be one of ${issue.values.map(String).join(", ")}`;
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const side = issue.code === "too_small" ? "at least" : "at most";
      const exact = issue.inclusive === false ? (issue.code === "too_small" ? "more than" : "less than") : side;
      if (issue.origin === "string") {
        return issue.code === "too_small" && Number(bound) === 1
          ? "must not be empty"
          : `must be ${exact} ${bound} characters`;
      }
      if (issue.origin === "array") return `must list ${exact} ${bound}`;
      return `must be ${exact} ${bound}`;
    }
    case "invalid_format":
      return `must be ${FORMATS[issue.format] ?? `in ${issue.format} format`}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_union":
      return issue.errors.map((branch) => branch[0]?.message ?? "is not valid").join(", or ");
    case "unrecognized_keys":
      return "is not a known field";
    default:
      return "is not valid";
  }
}
