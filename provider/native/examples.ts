/**
 * The example of each resource and function, in each language the SDKs are generated for, written
 * from the descriptor's example inputs and the schema's own types (so a Go literal gets the type the
 * Go SDK has): the `{{% examples %}}` block Pulumi's generators put in each SDK's docs and a registry
 * page shows.
 */

export interface ExampleSpec {
  type?: string;
  items?: ExampleSpec;
  $ref?: string;
}

type Types = Record<string, { type?: string; enum?: unknown[]; properties?: Record<string, ExampleSpec> }>;

/** `proxy-users:read` as `ProxyUsersRead`: an enum member's name every generator can use. */
export const enumMemberName = (value: string) =>
  value
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

const pad = (depth: number) => "    ".repeat(depth);
const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const snake = (text: string) => text.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const PYTHON_KEYWORDS = new Set(["from", "import", "global", "lambda", "pass", "in", "is", "not"]);
const pythonName = (key: string) => (PYTHON_KEYWORDS.has(snake(key)) ? `${snake(key)}_` : snake(key));

function typeOf(spec: ExampleSpec | undefined, types: Types) {
  const ref = spec?.$ref?.replace(/^#\/types\//, "");
  return { ref, named: ref ? types[ref] : undefined };
}

function typescript(value: unknown, depth: number): string {
  if (Array.isArray(value)) return `[${value.map((item) => typescript(item, depth)).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const lines = Object.entries(value).map(
      ([key, item]) => `${pad(depth + 1)}${key}: ${typescript(item, depth + 1)},`,
    );
    return `{\n${lines.join("\n")}\n${pad(depth)}}`;
  }
  return JSON.stringify(value);
}

function python(value: unknown, depth: number): string {
  if (Array.isArray(value)) return `[${value.map((item) => python(item, depth)).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const lines = Object.entries(value).map(
      ([key, item]) => `${pad(depth + 1)}"${snake(key)}": ${python(item, depth + 1)},`,
    );
    return `{\n${lines.join("\n")}\n${pad(depth)}}`;
  }
  if (typeof value === "boolean") return value ? "True" : "False";
  return JSON.stringify(value);
}

/** A Go input literal (`pulumi.String("x")`, `proxy.ProductIsp`), of the type the Go SDK has for the property. */
function go(value: unknown, spec: ExampleSpec | undefined, types: Types, depth: number): string {
  const { ref, named } = typeOf(spec, types);
  const name = (ref ?? "").split(":").pop() ?? "";
  if (Array.isArray(value)) {
    const items = value.map((item) => go(item, spec?.items, types, depth));
    const element = typeOf(spec?.items, types);
    const arrayType = element.named?.enum
      ? `proxy.${element.ref?.split(":").pop()}Array`
      : `pulumi.${capital(spec?.items?.type ?? "string")}Array`;
    return `${arrayType}{${items.join(", ")}}`;
  }
  if (typeof value === "object" && value !== null && named?.properties) {
    const fields = Object.entries(value).map(
      ([key, item]) => `${pad(depth + 1)}${capital(key)}: ${go(item, named.properties?.[key], types, depth + 1)},`,
    );
    return `&proxy.${name}Args{\n${fields.join("\n")}\n${pad(depth)}}`;
  }
  if (named?.enum) return `proxy.${name}${enumMemberName(String(value))}`;
  const primitive = spec?.type ?? typeof value;
  const goType = { string: "String", integer: "Int", number: "Float64", boolean: "Bool" }[primitive] ?? "String";
  return `pulumi.${goType}(${JSON.stringify(value)})`;
}

function yaml(value: unknown, depth: number): string {
  // A list in flow style: JSON is YAML.
  if (typeof value !== "object" || value === null || Array.isArray(value)) return JSON.stringify(value);
  const lines = Object.entries(value).map(([key, item]) => `${"  ".repeat(depth)}${key}: ${yaml(item, depth + 1)}`);
  return `\n${lines.join("\n").replace(/: \n/g, ":\n")}`;
}

function block(title: string, code: Record<"typescript" | "python" | "go" | "yaml", string>): string {
  const fences = Object.entries(code).map(([language, text]) => `\`\`\`${language}\n${text}\n\`\`\``);
  return [
    "{{% examples %}}",
    "## Example Usage",
    "{{% example %}}",
    `### ${title}`,
    "",
    ...fences,
    "{{% /example %}}",
    "{{% /examples %}}",
  ].join("\n");
}

const goProgram = (body: string) =>
  [
    "package main",
    "",
    "import (",
    '\t"example.com/pulumi-proxy/sdk/go/proxy"',
    '\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"',
    ")",
    "",
    "func main() {",
    "\tpulumi.Run(func(ctx *pulumi.Context) error {",
    ...body.split("\n").map((line) => `\t\t${line.replaceAll("    ", "\t")}`),
    "\t})",
    "}",
  ].join("\n");

export function resourceExample(
  name: string,
  inputs: Record<string, unknown>,
  properties: Record<string, ExampleSpec>,
  types: Types,
): string {
  const variable = name.charAt(0).toLowerCase() + name.slice(1);
  const fields = Object.entries(inputs);
  return block(`${/^[AEIOU]/.test(name) ? "An" : "A"} ${name}`, {
    typescript: `import * as proxy from "pulumi-proxy/native";\n\nconst ${variable} = new proxy.${name}("${variable}", ${typescript(inputs, 0)});`,
    python: `import pulumi_proxy as proxy\n\n${snake(variable)} = proxy.${name}("${variable}",\n${fields
      .map(([key, value]) => `    ${pythonName(key)}=${python(value, 1)}`)
      .join(",\n")})`,
    go: goProgram(
      `_, err := proxy.New${name}(ctx, "${variable}", &proxy.${name}Args{\n${fields
        .map(([key, value]) => `    ${capital(key)}: ${go(value, properties[key], types, 1)},`)
        .join("\n")}\n})\nreturn err`,
    ),
    yaml: `resources:\n  ${variable}:\n    type: proxy:${name}\n    properties:${yaml(inputs, 3)}`,
  });
}

export function functionExample(
  name: string,
  args: Record<string, unknown>,
  properties: Record<string, ExampleSpec>,
  types: Types,
  firstOutput: string,
): string {
  const fields = Object.entries(args);
  const goName = capital(name);
  const goArgs = fields.length
    ? `, proxy.${goName}OutputArgs{\n${fields.map(([key, value]) => `    ${capital(key)}: ${go(value, properties[key], types, 1)},`).join("\n")}\n}`
    : "";
  return block(`Call ${name}`, {
    typescript: `import * as proxy from "pulumi-proxy/native";\n\nconst result = proxy.${name}Output(${fields.length ? typescript(args, 0) : ""});\nexport const ${firstOutput} = result.${firstOutput};`,
    python: `import pulumi\nimport pulumi_proxy as proxy\n\nresult = proxy.${snake(name)}_output(${fields
      .map(([key, value]) => `${pythonName(key)}=${python(value, 0)}`)
      .join(", ")})\npulumi.export("${firstOutput}", result.${snake(firstOutput)})`,
    go: goProgram(
      fields.length
        ? `result := proxy.${goName}Output(ctx${goArgs})\nctx.Export("${firstOutput}", result.${capital(firstOutput)}())\nreturn nil`
        : `result, err := proxy.${goName}(ctx)\nif err != nil {\n    return err\n}\nctx.Export("${firstOutput}", pulumi.Any(result.${capital(firstOutput)}))\nreturn nil`,
    ),
    yaml: `variables:\n  result:\n    fn::invoke:\n      function: proxy:${name}\n      arguments:${fields.length ? yaml(args, 4) : " {}"}\noutputs:\n  ${firstOutput}: \${result.${firstOutput}}`,
  });
}
