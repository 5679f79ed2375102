import { z } from "zod";
import { IpHealth, IpProduct, SCOPES, UsageGranularity } from "../../contract";
import { scopesOf } from "../functions/descriptor";
import { enumMemberName, functionExample, resourceExample } from "./examples";
import { FUNCTIONS } from "./functions";
import { CONFIG, KINDS, PACKAGE, replaceOnChanges } from "./kinds";
import { release } from "./release";
import { packageFacts } from "./version";

/**
 * The package schema `GetSchema` answers, derived on each call from the declarations (the zod fields
 * through zod's JSON Schema), the config list and the rules' own diff: it is never written down, so it
 * cannot drift from what the provider does. An object-valued property becomes a named type,
 * `proxy:index:<Kind><Property>`.
 */

type JsonSchema = {
  description?: string;
  type?: string | string[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
};

export interface PropertySpec {
  description?: string;
  type?: string;
  items?: PropertySpec;
  $ref?: string;
  secret?: boolean;
  replaceOnChanges?: boolean;
  default?: unknown;
}

type ObjectType = {
  type: "object";
  description?: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
};
type EnumType = { type: "string"; description?: string; enum: { name: string; value: string }[] };
type Types = Record<string, ObjectType | EnumType>;

/**
 * The closed sets by their values, each named once: a field whose values are one of these is that
 * enum type in every SDK, wherever it appears; any other closed set is named by its property.
 */
const ENUM_NAMES: [string, readonly string[], string][] = [
  ["Product", IpProduct.options, "An IP product."],
  ["Health", IpHealth.options, "An address's reputation as the service monitors it."],
  ["Scope", SCOPES, "A permission an API key holds."],
  ["Granularity", UsageGranularity.options, "The period of one usage row."],
  ["Currency", ["usd"], "A currency."],
];

function enumType(values: string[], typeName: string, types: Types): PropertySpec {
  const known = ENUM_NAMES.find(
    ([, members]) => members.length === values.length && values.every((v) => members.includes(v)),
  );
  const name = known ? `${PACKAGE}:index:${known[0]}` : typeName;
  types[name] ??= {
    type: "string",
    ...(known ? { description: known[2] } : {}),
    enum: values.map((value) => ({ name: enumMemberName(value), value })),
  };
  return { $ref: `#/types/${name}` };
}

const PRIMITIVES = new Set(["string", "number", "integer", "boolean"]);

/** One JSON Schema node as a Pulumi type; a union of text and a number (a trigger) is text, as `check` makes it. */
function typeOf(node: JsonSchema, typeName: string, types: Types): PropertySpec {
  const spec = bareTypeOf(node, typeName, types);
  return node.description ? { description: node.description, ...spec } : spec;
}

function bareTypeOf(node: JsonSchema, typeName: string, types: Types): PropertySpec {
  const branches = (node.anyOf ?? []).filter((branch) => branch.type !== "null");
  if (branches[0]) return typeOf(branches[0], typeName, types);
  const kinds = (Array.isArray(node.type) ? node.type : [node.type]).filter((kind) => kind && kind !== "null");
  const kind = kinds.includes("string") ? "string" : kinds[0];
  // An element type is named in the singular: `GetUsageRow` for `rows`.
  if (kind === "array") return { type: "array", items: typeOf(node.items ?? {}, typeName.replace(/s$/, ""), types) };
  const values = node.enum ?? (node.const !== undefined ? [node.const] : undefined);
  if (kind === "string" && values?.every((value) => typeof value === "string")) {
    return enumType(values as string[], typeName, types);
  }
  if (kind === "object" && node.properties) {
    types[typeName] ??= objectType(node, typeName, types);
    return { $ref: `#/types/${typeName}` };
  }
  if (kind && PRIMITIVES.has(kind)) {
    const primitive = node.default;
    return primitive !== null && typeof primitive !== "object" ? { type: kind, default: primitive } : { type: kind };
  }
  return { $ref: "pulumi.json#/Any" };
}

function objectType(node: JsonSchema, typeName: string, types: Types): ObjectType {
  const properties = Object.fromEntries(
    Object.entries(node.properties ?? {}).map(([key, field]) => [
      key,
      typeOf(field, `${typeName}${capital(key)}`, types),
    ]),
  );
  return {
    type: "object",
    ...(node.description ? { description: node.description } : {}),
    properties,
    ...(node.required?.length ? { required: node.required } : {}),
  };
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The owner of a set of properties: a resource, or a function (whose types are named `Get…`, as registries do). */
interface Owner {
  name: string;
  secretOutputs: readonly string[];
}

function propertiesOf(
  owner: Owner,
  shape: z.ZodRawShape,
  io: "input" | "output",
  types: Types,
  replacing: string[],
  inputs: Record<string, PropertySpec> = {},
): { properties: Record<string, PropertySpec>; required: string[] } {
  const json = z.toJSONSchema(z.object(shape), { io, unrepresentable: "any" }) as JsonSchema;
  const properties: Record<string, PropertySpec> = {};
  for (const [key, field] of Object.entries(json.properties ?? {})) {
    const spec = typeOf(field, `${PACKAGE}:index:${capital(owner.name)}${capital(key)}`, types);
    if (io === "output" && owner.secretOutputs.includes(key)) spec.secret = true;
    if (replacing.includes(key)) spec.replaceOnChanges = true;
    if (io === "output") delete spec.default;
    // An output that echoes an input is documented by the input.
    const description = spec.description ?? inputs[key]?.description;
    properties[key] = description ? { ...spec, description } : spec;
  }
  // A nullable output is always in the state, but may hold no value: not required of a reader.
  const required = (json.required ?? []).filter((key) => !(io === "output" && isNullable(json.properties?.[key])));
  return { properties, required };
}

function objectSpec({ properties, required }: { properties: Record<string, PropertySpec>; required: string[] }) {
  return { properties, ...(required.length > 0 ? { required } : {}) };
}

function isNullable(node: JsonSchema | undefined): boolean {
  const types = Array.isArray(node?.type) ? node.type : [node?.type];
  return types.includes("null") || (node?.anyOf ?? []).some((branch) => branch.type === "null");
}

export async function packageSchema(version: string): Promise<Record<string, unknown>> {
  const types: Types = {};
  const resources: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const replacing = replaceOnChanges(kind);
    const owner = { name: kind.name, secretOutputs: kind.declaration.secretOutputs };
    const inputs = propertiesOf(owner, kind.declaration.inputs, "input", types, replacing);
    const outputs = propertiesOf(owner, kind.declaration.outputs, "output", types, replacing, inputs.properties);
    const example = resourceExample(kind.name, kind.declaration.example, inputs.properties, types);
    resources[kind.token] = {
      description: `${kind.declaration.description}\n\n${example}`,
      inputProperties: inputs.properties,
      requiredInputs: inputs.required,
      properties: outputs.properties,
      required: outputs.required,
    };
  }
  const functions: Record<string, unknown> = {};
  for (const { token, declaration } of FUNCTIONS) {
    const owner = { name: declaration.name, secretOutputs: [] };
    const inputs = propertiesOf(owner, declaration.inputs, "input", types, []);
    const outputs = propertiesOf(owner, declaration.outputs, "output", types, []);
    const scopes = scopesOf(declaration).join(", ");
    const firstOutput = Object.keys(outputs.properties)[0] ?? "id";
    const example = functionExample(declaration.name, declaration.example, inputs.properties, types, firstOutput);
    functions[token] = {
      description: `${declaration.description} The API key needs ${scopes}.\n\n${example}`,
      ...(Object.keys(inputs.properties).length > 0 ? { inputs: { type: "object", ...objectSpec(inputs) } } : {}),
      outputs: { type: "object", ...objectSpec(outputs) },
    };
  }
  // The environment fallback is declared for the stack config only: on an explicit provider's inputs
  // it would make each SDK send PROXY_API_KEY as a plain input, which the state would record.
  const config = Object.fromEntries(
    CONFIG.map(({ key, type, secret, description }) => [
      key,
      { type, description, ...(secret ? { secret: true } : {}) },
    ]),
  );
  const variables = Object.fromEntries(
    CONFIG.map(({ key, environment }) => [
      key,
      { ...config[key], ...(environment ? { defaultInfo: { environment: [environment] } } : {}) },
    ]),
  );
  const { license, keywords, author } = packageFacts();
  return {
    name: PACKAGE,
    displayName: "Proxy service",
    description: "Proxy users, API keys and ISP or dedicated IPs of the proxy service's management API.",
    version,
    // What the Pulumi registry shows of a package: from the manifest, and the repository from the release.
    publisher: author,
    license,
    keywords,
    ...(release?.repository ? { homepage: release.repository, repository: release.repository } : {}),
    // Where the engine fetches the plugin when a program needs it and the cache lacks it; each SDK
    // passes it on (Python's pulumi-plugin.json, Node's package.json, Go's resource options).
    ...(release?.pluginDownloadURL ? { pluginDownloadURL: release.pluginDownloadURL } : {}),
    config: { variables },
    provider: {
      description: "The proxy service's provider: the API it manages and the key it acts with.",
      inputProperties: config,
    },
    resources,
    functions,
    types,
    language: SDK_PACKAGES,
    // The generators' current layout, as `pulumi package pack-sdk` expects it: the Go SDK gets a go.mod
    // of its own, which a program's `replace` needs.
    meta: { supportPack: true },
  };
}

/**
 * Where each generated SDK lives. Node: inside this package, so a program needs nothing else, and the
 * code `pulumi import` writes imports it from there. Python: the wheel `pulumi_proxy`, built with the
 * package. Go: a module of its own, example.com/pulumi-proxy/sdk/go, which a program's go.mod
 * replaces with the copy in this package. Each carries the schema's version, which its resources ask
 * the engine for as the plugin's.
 */
const SDK_PACKAGES = {
  nodejs: { packageName: "pulumi-proxy/native", respectSchemaVersion: true },
  python: { packageName: "pulumi_proxy", respectSchemaVersion: true },
  go: { importBasePath: "example.com/pulumi-proxy/sdk/go/proxy", respectSchemaVersion: true },
};
