import * as proto from "@pulumi/pulumi/proto/provider_pb";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeyIsPlaintextIn, PLAINTEXT_API_KEY_REFUSAL } from "../../provider/core/credentials";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { call, type RunningPlugin, startPlugin } from "./plugin";

const URN = "urn:pulumi:dev::shop::proxy:index:ProxyUser::scraper";
const TYPE = "proxy:index:ProxyUser";

/**
 * The plugin's protocol answers, asked directly over gRPC as the engine asks them, against the
 * reference server: credentials from the environment when the config has none, secrets wrapped on
 * the wire, one object per URN however often the create is repeated, and an import from an id alone.
 */
describe("the native plugin's protocol", () => {
  let server: ReferenceServer;
  let plugin: RunningPlugin;
  let api: ProxyClient;

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    plugin = await startPlugin({ PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey });
    const configure = new proto.ConfigureRequest().setArgs(Struct.fromJavaScript({})).setAcceptsecrets(true);
    await call(plugin.client.configure.bind(plugin.client), configure);
  });
  afterAll(async () => {
    plugin?.stop();
    await server?.close();
  });

  const check = (news: Record<string, unknown>) =>
    call<proto.CheckRequest, proto.CheckResponse>(
      plugin.client.check.bind(plugin.client),
      new proto.CheckRequest()
        .setUrn(URN)
        .setType(TYPE)
        .setNews(Struct.fromJavaScript(news as never)),
    );
  const create = (properties: Struct) =>
    call<proto.CreateRequest, proto.CreateResponse>(
      plugin.client.create.bind(plugin.client),
      new proto.CreateRequest().setUrn(URN).setType(TYPE).setProperties(properties),
    );

  it("checks the provider config: a bad setting refused by name; Configure refuses a plaintext API key", async () => {
    const news = { apiUrl: server.url, apiKey: "live_plain", rateLimitReserve: "lots" };
    const checked = await call<proto.CheckRequest, proto.CheckResponse>(
      plugin.client.checkConfig.bind(plugin.client),
      new proto.CheckRequest()
        .setUrn("urn:pulumi:dev::shop::pulumi:providers:proxy::default")
        .setNews(Struct.fromJavaScript(news)),
    );
    expect(checked.getFailuresList().map((failure) => [failure.getProperty(), failure.getReason()])).toEqual([
      ["rateLimitReserve", expect.stringContaining("pulumi config set proxy:rateLimitReserve")],
    ]);

    // The engine hands Configure each value as secret as it was set: a plain one is refused, unshown.
    const configure = (apiKey: unknown) =>
      call(
        plugin.client.configure.bind(plugin.client),
        new proto.ConfigureRequest().setArgs(Struct.fromJavaScript({ apiUrl: server.url, apiKey } as never)),
      );
    const refused = await configure("live_plain").catch((error: Error) => error);
    expect(String(refused)).toContain(PLAINTEXT_API_KEY_REFUSAL);
    expect(String(refused)).not.toContain("live_plain");
    await configure({ [specialSigKey]: specialSecretSig, value: server.rootKey });

    // What the stack's config file says, which CheckConfig reads (the engine tells a plugin nothing).
    expect(apiKeyIsPlaintextIn("config:\n  proxy:apiKey: live_plain\n")).toBe(true);
    expect(apiKeyIsPlaintextIn("config:\n  proxy:apiKey:\n    secure: v1:abc\n")).toBe(false);
    expect(apiKeyIsPlaintextIn('config:\n  "proxy:apiKey": { secure: v1:abc }\n')).toBe(false);
    expect(apiKeyIsPlaintextIn("config:\n  proxy:apiUrl: http://127.0.0.1:1\n")).toBe(false);
  });

  it("refuses bad inputs with the rules' own messages", async () => {
    const checked = await check({ name: "Bad Name", limits: { dailyGb: -1 } });
    // A nested path goes without a property (the engine would print `{<nil>}` for it); its reason names it.
    expect(checked.getFailuresList().map((failure) => failure.getProperty())).toEqual(["name", ""]);
    expect(checked.getFailuresList()[1]?.getReason()).toMatch(/^limits\.dailyGb must be at least 0/);
  });

  it("creates once per URN with the environment's credentials, the password a secret on the wire", async () => {
    const inputs = (await check({ name: "scraper", limits: { dailyGb: 5 } })).getInputs() as Struct;
    const first = await create(inputs);
    const again = await create(inputs);
    expect(again.getId()).toBe(first.getId());
    const users = [];
    for await (const user of api.proxyUsers.list()) users.push(user.id);
    expect(users).toEqual([first.getId()]);
    const outputs = first.getProperties()?.toJavaScript() as Record<string, Record<string, unknown>>;
    expect(outputs.password).toMatchObject({ [specialSigKey]: specialSecretSig, value: expect.any(String) });
    expect(outputs.limits).toEqual({ dailyGb: 5, monthlyGb: null });
  });

  it("reads an id alone (an import) into the inputs the API reports", async () => {
    const made = await api.proxyUsers.create({ name: "legacy", limits: { daily_gb: 2, monthly_gb: 20 } });
    const read = await call<proto.ReadRequest, proto.ReadResponse>(
      plugin.client.read.bind(plugin.client),
      new proto.ReadRequest().setId(made.id).setUrn(URN.replace("scraper", "legacy")).setType(TYPE),
    );
    expect(read.getId()).toBe(made.id);
    expect(read.getInputs()?.toJavaScript()).toEqual({
      name: "legacy",
      limits: { dailyGb: 2, monthlyGb: 20 },
      enabled: true,
    });
    // The API shows a password only at creation: the imported user has none, still marked secret.
    expect(read.getProperties()?.toJavaScript().password).toMatchObject({
      [specialSigKey]: specialSecretSig,
      value: null,
    });
  });
});
