import { z } from "zod";
import { CONFIG, KINDS, type NativeKind, PACKAGE, replaceOnChanges } from "./kinds";
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

type Types = Record<string, { type: "object"; properties: Record<string, PropertySpec>; required?: string[] }>;

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
  if (kind === "array") return { type: "array", items: typeOf(node.items ?? {}, typeName, types) };
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

function objectType(node: JsonSchema, typeName: string, types: Types): Types[string] {
  const properties = Object.fromEntries(
    Object.entries(node.properties ?? {}).map(([key, field]) => [
      key,
      typeOf(field, `${typeName}${capital(key)}`, types),
    ]),
  );
  return { type: "object", properties, ...(node.required?.length ? { required: node.required } : {}) };
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function propertiesOf(
  kind: NativeKind,
  shape: z.ZodRawShape,
  io: "input" | "output",
  types: Types,
  replacing: string[],
  inputs: Record<string, PropertySpec> = {},
): { properties: Record<string, PropertySpec>; required: string[] } {
  const json = z.toJSONSchema(z.object(shape), { io, unrepresentable: "any" }) as JsonSchema;
  const properties: Record<string, PropertySpec> = {};
  for (const [key, field] of Object.entries(json.properties ?? {})) {
    const spec = typeOf(field, `${PACKAGE}:index:${kind.name}${capital(key)}`, types);
    if (io === "output" && kind.declaration.secretOutputs.includes(key)) spec.secret = true;
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

function isNullable(node: JsonSchema | undefined): boolean {
  const types = Array.isArray(node?.type) ? node.type : [node?.type];
  return types.includes("null") || (node?.anyOf ?? []).some((branch) => branch.type === "null");
}

export async function packageSchema(version: string): Promise<Record<string, unknown>> {
  const types: Types = {};
  const resources: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const replacing = await replaceOnChanges(kind);
    const inputs = propertiesOf(kind, kind.declaration.inputs, "input", types, replacing);
    const outputs = propertiesOf(kind, kind.declaration.outputs, "output", types, replacing, inputs.properties);
    resources[kind.token] = {
      description: kind.declaration.description,
      inputProperties: inputs.properties,
      requiredInputs: inputs.required,
      properties: outputs.properties,
      required: outputs.required,
    };
  }
  const config = Object.fromEntries(
    CONFIG.map(({ key, type, secret }) => [key, { type, ...(secret ? { secret: true } : {}) }]),
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
    config: { variables: config },
    provider: { inputProperties: config },
    resources,
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
