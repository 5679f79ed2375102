import { GetSchemaRequest, type GetSchemaResponse } from "@pulumi/pulumi/proto/provider_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type RunningPlugin, startPlugin } from "./plugin";

type Spec = {
  description?: string;
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
interface Schema {
  name: string;
  version: string;
  config: { variables: Record<string, Spec> };
  resources: Record<string, Resource>;
  types: Record<string, { properties: Record<string, Spec> }>;
}

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

  it("declares the provider config, the API key secret", () => {
    expect(schema.config.variables).toEqual({
      apiUrl: { type: "string" },
      apiKey: { type: "string", secret: true },
      rateLimitReserve: { type: "integer" },
      retryWindowSeconds: { type: "integer" },
      requestTimeoutSeconds: { type: "integer" },
    });
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
    expect(key?.inputProperties.scopes).toMatchObject({ type: "array", items: { type: "string" } });
    expect(key?.inputProperties.graceHours).toMatchObject({ type: "integer" });
    // A trigger takes text or a number and is stored as text.
    expect(key?.inputProperties.rotationTrigger).toMatchObject({ type: "string" });
    expect(key?.inputProperties.rotationTrigger?.$ref).toBeUndefined();

    const allocation = schema.resources["proxy:index:IpAllocation"];
    expect(allocation?.inputProperties.maxReplacementChargeCents).toMatchObject({ type: "integer" });
    expect(allocation?.properties.blacklists).toEqual({ type: "number" });
  });

  it("documents each resource and property from the declarations, outputs that echo an input by the input", () => {
    const user = schema.resources["proxy:index:ProxyUser"];
    expect(user?.description).toMatch(/^A gateway login with traffic ceilings/);
    expect(user?.inputProperties.name?.description).toMatch(/Changing it replaces the user/);
    expect(user?.properties.name?.description).toBe(user?.inputProperties.name?.description);
    expect(user?.properties.password?.description).toMatch(/returned once by the API at creation/);
    expect(schema.types["proxy:index:ProxyUserLimits"]?.properties.dailyGb?.description).toMatch(/Daily ceiling/);
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
