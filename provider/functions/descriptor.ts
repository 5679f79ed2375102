import { z } from "zod";
import { ENDPOINTS, type OperationId, type Scope } from "../../contract";
import type { ProxyClient } from "../../sdk";
import { explain } from "../core/errors";
import type { ApiSettings } from "../core/settings";

/**
 * One descriptor per function (a read a program makes): everything the native provider's `Invoke`,
 * its schema (and so every generated SDK and the reference docs) and the Node functions of the
 * dynamic resources know of it. The inputs and outputs are zod fields, each documented with
 * `describe`; the scopes come from the endpoint table, by the operations the call makes.
 */
export interface FunctionDescriptor<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  /** `getUsage`: the token is `proxy:index:getUsage`. */
  name: string;
  /** What it returns, for the schema and the generated SDKs' docs. */
  description: string;
  /** What the call does, for messages: `getUsage: cannot read usage: …`. */
  action: string;
  inputs: I;
  outputs: O;
  /** The operations of contract/endpoints.ts the call makes: its scopes are theirs. */
  operations: readonly OperationId[];
  /** Example inputs, for the schema's example in each language. */
  example: z.input<z.ZodObject<I>>;
  call(client: ProxyClient, args: z.output<z.ZodObject<I>>, account: Account): Promise<z.input<z.ZodObject<O>>>;
}

/** Which account a read looked at, in words that hold no secret: where the key came from, and the URL. */
export interface Account {
  description: string;
}

export function describeFunction<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  descriptor: FunctionDescriptor<I, O>,
): FunctionDescriptor<I, O> {
  return descriptor;
}

/** The scopes a function's key needs: those of every operation it makes, from the endpoint table. */
export function scopesOf(descriptor: Pick<FunctionDescriptor, "operations">): Scope[] {
  const scopes = descriptor.operations.flatMap(
    (operation) => ENDPOINTS.find((endpoint) => endpoint.operationId === operation)?.scopes ?? [],
  );
  return [...new Set(scopes)] as Scope[];
}

export function accountOf(settings: Pick<ApiSettings, "apiUrl" | "apiKeyFrom">): Account {
  const key = settings.apiKeyFrom === "config" ? "proxy:apiKey" : "PROXY_API_KEY";
  return { description: `the account of the key in ${key} at ${settings.apiUrl}` };
}

/**
 * Runs a function on raw arguments (from the engine or a Node program): they are checked by the
 * inputs' schema, each bad one named with the function and its bound, and a failure of the call is
 * worded by `explain` (which names a missing scope, and never a credential).
 */
export async function invokeFunction(
  descriptor: FunctionDescriptor,
  session: () => { client: ProxyClient; account: Account },
  raw: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const parsed = z.strictObject(descriptor.inputs).safeParse(withoutNulls(raw));
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => {
      if (issue.code === "unrecognized_keys") return `${issue.keys.join(", ")} is not an input`;
      return `${issue.path.join(".")} ${issue.message}`;
    });
    const inputs = Object.keys(descriptor.inputs).join(", ") || "none";
    throw explain(descriptor.name, descriptor.action, new Error(`${reasons.join("; ")} (inputs: ${inputs})`));
  }
  try {
    const { client, account } = session();
    return (await descriptor.call(client, parsed.data, account)) as Record<string, unknown>;
  } catch (error) {
    throw explain(descriptor.name, descriptor.action, error);
  }
}

/** The engine sends an input left out as absent, and some languages as null: both mean "not given". */
function withoutNulls(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null && value !== undefined));
}
