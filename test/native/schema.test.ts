import { GetSchemaRequest, type GetSchemaResponse } from "@pulumi/pulumi/proto/provider_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "../../contract";
import { providerSettings } from "../../provider/core/settings";
import { call, type RunningPlugin, startPlugin } from "./plugin";

type Spec = {
  description?: string;
  defaultInfo?: { environment?: string[] };
  type?: string;
  $ref?: string;
  items?: Spec;
  secret?: boolean;
  replaceOnChanges?: boolean;
};
type Resource = {
  description?: string;
  inputProperties: Record<string, Spec>;
  requiredInputs: string[];
  properties: Record<string, Spec>;
  required: string[];
};
type ObjectSpec = { properties: Record<string, Spec>; required?: string[] };
type Function = { description?: string; inputs?: ObjectSpec; outputs: ObjectSpec };
type TypeSpec = { type: string; description?: string; properties?: Record<string, Spec>; enum?: { value: string }[] };
interface Schema {
  name: string;
  version: string;
  config: { variables: Record<string, Spec> };
  provider: { inputProperties: Record<string, Spec> };
  resources: Record<string, Resource>;
  functions: Record<string, Function>;
  types: Record<string, TypeSpec>;
}

const LANGUAGES = ["typescript", "python", "go", "yaml"];

/** The schema as the engine gets it: GetSchema over gRPC from the compiled plugin process. */
describe("GetSchema", () => {
  let plugin: RunningPlugin;
  let schema: Schema;

  beforeAll(async () => {
    plugin = await startPlugin();
    const response = await call<GetSchemaRequest, GetSchemaResponse>(
      plugin.client.getSchema.bind(plugin.client),
      new GetSchemaRequest(),
    );
    schema = JSON.parse(response.getSchema());
  });
  afterAll(() => plugin?.stop());

  const replacing = (resource: Resource | undefined) =>
    Object.entries(resource?.inputProperties ?? {})
      .filter(([, spec]) => spec.replaceOnChanges)
      .map(([key]) => key);
  const secrets = (resource: Resource | undefined) =>
    Object.entries(resource?.properties ?? {})
      .filter(([, spec]) => spec.secret)
      .map(([key]) => key);

  it("names the package, its version and its three resources", () => {
    expect(schema.name).toBe("proxy");
    expect(schema.version).toBe(require("../../package.json").version);
    expect(Object.keys(schema.resources).sort()).toEqual([
      "proxy:index:ApiKey",
      "proxy:index:IpAllocation",
      "proxy:index:ProxyUser",
    ]);
  });

  it("declares the provider config, each key described, the API key secret, the credentials' environment", () => {
    const { variables } = schema.config;
    expect(Object.keys(variables)).toEqual([
      "apiUrl",
      "apiKey",
      "rateLimitReserve",
      "retryWindowSeconds",
      "requestTimeoutSeconds",
    ]);
    expect(variables.apiUrl).toMatchObject({ type: "string", defaultInfo: { environment: ["PROXY_API_URL"] } });
    expect(variables.apiKey).toMatchObject({
      type: "string",
      secret: true,
      defaultInfo: { environment: ["PROXY_API_KEY"] },
    });
    // Each setting's description names what the provider takes when the stack sets none.
    const fallbacks = providerSettings(() => undefined);
    for (const setting of ["rateLimitReserve", "retryWindowSeconds", "requestTimeoutSeconds"] as const) {
      expect(variables[setting]).toMatchObject({ type: "integer" });
      expect(variables[setting]?.description, setting).toMatch(new RegExp(`default ${fallbacks[setting]}\\)\\.$`));
    }
    const undescribed = [...Object.entries(variables), ...Object.entries(schema.provider.inputProperties)]
      .filter(([, spec]) => !spec.description)
      .map(([key]) => key);
    expect(undescribed).toEqual([]);
  });

  it("lists every function, each described with the scopes its key needs", () => {
    expect(Object.keys(schema.functions).sort()).toEqual([
      "proxy:index:getBalance",
      "proxy:index:getCharges",
      "proxy:index:getIpAllocations",
      "proxy:index:getProxyUsers",
      "proxy:index:getUsage",
      "proxy:index:lookupIpAllocation",
      "proxy:index:lookupProxyUser",
    ]);
    const scopes = Object.fromEntries(
      Object.entries(schema.functions).map(([token, fn]) => [
        token,
        /needs ([a-z:, -]+)\./.exec(fn.description ?? "")?.[1],
      ]),
    );
    expect(scopes).toEqual({
      "proxy:index:getBalance": "billing:read",
      "proxy:index:getCharges": "billing:read",
      "proxy:index:getIpAllocations": "proxy-users:read",
      "proxy:index:getProxyUsers": "proxy-users:read",
      "proxy:index:getUsage": "usage:read",
      "proxy:index:lookupIpAllocation": "proxy-users:read",
      "proxy:index:lookupProxyUser": "proxy-users:read",
    });
    const usage = schema.functions["proxy:index:getUsage"];
    expect(usage?.inputs?.required?.sort()).toEqual(["from", "to"]);
    expect(usage?.outputs.properties.rows).toMatchObject({
      type: "array",
      items: { $ref: "#/types/proxy:index:GetUsageRow" },
    });
    expect(schema.functions["proxy:index:lookupProxyUser"]?.outputs.properties.id).toMatchObject({ type: "string" });
    // No inputs: the SDKs take none.
    expect(schema.functions["proxy:index:getBalance"]?.inputs).toBeUndefined();
  });

  it("describes every property of every resource, function and type: inputs and outputs", () => {
    const undescribed: string[] = [];
    const check = (where: string, properties: Record<string, Spec> = {}) => {
      for (const [key, spec] of Object.entries(properties)) if (!spec.description) undescribed.push(`${where}.${key}`);
    };
    for (const [token, resource] of Object.entries(schema.resources)) {
      check(`${token} input`, resource.inputProperties);
      check(`${token} output`, resource.properties);
    }
    for (const [token, fn] of Object.entries(schema.functions)) {
      check(`${token} input`, fn.inputs?.properties);
      check(`${token} output`, fn.outputs.properties);
    }
    for (const [token, type] of Object.entries(schema.types)) check(token, type.properties);
    expect(undescribed).toEqual([]);
    const typesUndescribed = Object.entries(schema.types).filter(([, type]) => type.enum && !type.description);
    expect(typesUndescribed).toEqual([]);
  });

  it("makes every closed set an enum: product, health, scopes, granularity", () => {
    const values = (token: string) => schema.types[token]?.enum?.map((member) => member.value);
    expect(values("proxy:index:Product")).toEqual(["isp", "dedicated"]);
    expect(values("proxy:index:Health")).toEqual(["good", "degraded", "bad"]);
    expect(values("proxy:index:Scope")).toEqual([...SCOPES]);
    expect(values("proxy:index:Granularity")).toEqual(["day", "month"]);
    const allocation = schema.resources["proxy:index:IpAllocation"];
    expect(allocation?.inputProperties.product?.$ref).toBe("#/types/proxy:index:Product");
    expect(allocation?.properties.health?.$ref).toBe("#/types/proxy:index:Health");
    expect(schema.resources["proxy:index:ApiKey"]?.inputProperties.scopes?.items?.$ref).toBe(
      "#/types/proxy:index:Scope",
    );
    expect(schema.functions["proxy:index:getIpAllocations"]?.inputs?.properties.product?.$ref).toBe(
      "#/types/proxy:index:Product",
    );
    // Any string property whose description lists its values in quotes would have been a missed enum.
    const stringsWithValues = Object.entries(schema.resources).flatMap(([token, resource]) =>
      Object.entries({ ...resource.inputProperties, ...resource.properties })
        .filter(([, spec]) => spec.type === "string" && /^"[a-z]+" or "[a-z]+"/.test(spec.description ?? ""))
        .map(([key]) => `${token}.${key}`),
    );
    expect(stringsWithValues).toEqual([]);
  });

  it("gives every resource and function an example in each language", () => {
    const owners = { ...schema.resources, ...schema.functions } as Record<string, { description?: string }>;
    const missing = Object.entries(owners).flatMap(([token, owner]) => {
      const text = owner.description ?? "";
      const lacks = LANGUAGES.filter((language) => !text.includes(`\`\`\`${language}\n`));
      return text.includes("{{% examples %}}") && lacks.length === 0
        ? []
        : [`${token}: ${lacks.join(", ") || "no examples block"}`];
    });
    expect(missing).toEqual([]);
    expect(schema.functions["proxy:index:getUsage"]?.description).toContain("proxy.get_usage_output(from_=");
    expect(schema.resources["proxy:index:IpAllocation"]?.description).toContain("Product: proxy.ProductIsp");
  });

  it("gives each resource its inputs, outputs and types from the declarations", () => {
    const user = schema.resources["proxy:index:ProxyUser"];
    expect(user?.requiredInputs).toEqual(["name"]);
    expect(user?.inputProperties.enabled).toMatchObject({ type: "boolean" });
    expect(user?.inputProperties.limits).toMatchObject({ $ref: "#/types/proxy:index:ProxyUserLimits" });
    expect(schema.types["proxy:index:ProxyUserLimits"]?.properties).toMatchObject({
      dailyGb: { type: "number" },
      monthlyGb: { type: "number" },
    });
    expect(user?.properties.proxyUserId).toMatchObject({ type: "string" });
    expect(user?.required).toContain("proxyUserId");
    // Null until the API gives one: present in the state, but not promised.
    expect(user?.required).not.toContain("password");

    const key = schema.resources["proxy:index:ApiKey"];
    expect(key?.requiredInputs.sort()).toEqual(["name", "scopes"]);
    expect(key?.inputProperties.scopes).toMatchObject({ type: "array", items: { $ref: "#/types/proxy:index:Scope" } });
    expect(key?.inputProperties.graceHours).toMatchObject({ type: "integer" });
    // A trigger takes text or a number and is stored as text.
    expect(key?.inputProperties.rotationTrigger).toMatchObject({ type: "string" });
    expect(key?.inputProperties.rotationTrigger?.$ref).toBeUndefined();

    const allocation = schema.resources["proxy:index:IpAllocation"];
    expect(allocation?.inputProperties.maxReplacementChargeCents).toMatchObject({ type: "integer" });
    expect(allocation?.properties.blacklists).toMatchObject({ type: "number" });
  });

  it("documents each resource and property from the declarations, outputs that echo an input by the input", () => {
    const user = schema.resources["proxy:index:ProxyUser"];
    expect(user?.description).toMatch(/^A gateway login with traffic ceilings/);
    expect(user?.inputProperties.name?.description).toMatch(/Changing it replaces the user/);
    expect(user?.properties.name?.description).toBe(user?.inputProperties.name?.description);
    expect(user?.properties.password?.description).toMatch(/returned once by the API at creation/);
    expect(schema.types["proxy:index:ProxyUserLimits"]?.properties?.dailyGb?.description).toMatch(/Daily ceiling/);
    const undocumented = Object.entries(schema.resources).flatMap(([token, resource]) =>
      Object.entries(resource.inputProperties)
        .filter(([, spec]) => !spec.description)
        .map(([key]) => `${token}.${key}`),
    );
    expect(undocumented).toEqual([]);
  });

  it("marks the secret outputs", () => {
    expect(secrets(schema.resources["proxy:index:ProxyUser"])).toEqual(["password"]);
    expect(secrets(schema.resources["proxy:index:ApiKey"])).toEqual(["secret"]);
    expect(secrets(schema.resources["proxy:index:IpAllocation"])).toEqual([]);
  });

  it("marks replace-on-change where the field says every change replaces", () => {
    expect(replacing(schema.resources["proxy:index:ProxyUser"])).toEqual(["name"]);
    expect(replacing(schema.resources["proxy:index:ApiKey"])).toEqual(["name", "scopes", "expiresAt"]);
    // A city change replaces only when the address is elsewhere: the diff decides it, so the schema
    // must not make the engine replace on every change.
    expect(replacing(schema.resources["proxy:index:IpAllocation"])).toEqual(["product", "country"]);
    expect(schema.resources["proxy:index:ProxyUser"]?.properties.name?.replaceOnChanges).toBe(true);
  });
});
