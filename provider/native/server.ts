import * as grpc from "@grpc/grpc-js";
import * as pluginProto from "@pulumi/pulumi/proto/plugin_pb";
import * as services from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as proto from "@pulumi/pulumi/proto/provider_pb";
import * as statusProto from "@pulumi/pulumi/proto/status_pb";
import { Any } from "google-protobuf/google/protobuf/any_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { PLAINTEXT_API_KEY_REFUSAL } from "../core/credentials";
import { invoke } from "./functions";
import { CONFIG, configFailures, configureFrom } from "./kinds";
import { fromStruct, toStruct } from "./protocol";
import * as resources from "./resources";
import { packageSchema } from "./schema";
import { stackSetsPlaintextApiKey } from "./stackFile";
import { packageVersion } from "./version";

/**
 * The `proxy` resource provider plugin: Pulumi's ResourceProvider gRPC service, served with the stubs
 * `@pulumi/pulumi` ships, as the engine starts any plugin: it prints the port it listens on (loopback
 * only) and serves until the engine kills it. What is not implemented here (Construct, Call)
 * answers UNIMPLEMENTED, which the engine reads as "not supported".
 */

/** An error as the engine shows it; an object created before the failure is sent along, for the state. */
function toServiceError(error: unknown): Partial<grpc.StatusObject> {
  const message = error instanceof Error ? error.message : String(error);
  const metadata = new grpc.Metadata();
  if (error instanceof resources.InitFailed) {
    const detail = new proto.ErrorResourceInitFailed()
      .setId(error.id)
      .setProperties(error.properties)
      .setReasonsList(error.reasons);
    const any = new Any();
    any.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
    const status = new statusProto.Status().setCode(grpc.status.UNKNOWN).setMessage(message);
    status.addDetails(any);
    // The engine reads structured details from this trailer, as upstream's Node provider server sends them.
    metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
  }
  return { code: grpc.status.UNKNOWN, details: message, metadata };
}

function unary<Req, Res>(handle: (request: Req) => Promise<Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    handle(call.request).then(
      (response) => callback(null, response),
      (error) => callback(toServiceError(error), null),
    );
  };
}

/** The secret entry of the provider's config, `apiKey`. */
const API_KEY = CONFIG.find((entry) => entry.secret)?.key ?? "apiKey";

const changesOf = (changed: boolean) =>
  changed ? proto.DiffResponse.DiffChanges.DIFF_SOME : proto.DiffResponse.DiffChanges.DIFF_NONE;

/**
 * Provider config: `proxy:apiUrl`, `proxy:apiKey` and the settings. A plaintext proxy:apiKey is
 * refused by the same rule and message as the dynamic resources (credentials.ts): in CheckConfig when
 * the stack's config file holds it so, in Configure when the key would reach the state unencrypted
 * (an explicit provider given a plain string). A config change updates the provider in place, never
 * replacing the resources it manages.
 */
const configService = {
  checkConfig: unary(async (request: proto.CheckRequest) => {
    const news = fromStruct(request.getNews());
    const response = new proto.CheckResponse().setInputs(toStruct(news.values, news.secrets));
    for (const failure of configFailures(news.values)) {
      response.addFailures(new proto.CheckFailure().setProperty(failure.property).setReason(failure.reason));
    }
    // No property: the engine would print the value of the one named, the key.
    if (stackSetsPlaintextApiKey(request.getUrn())) {
      response.addFailures(new proto.CheckFailure().setProperty("").setReason(PLAINTEXT_API_KEY_REFUSAL));
    }
    return response;
  }),
  diffConfig: unary(async (request: proto.DiffRequest) => {
    const olds = fromStruct(request.getOlds()).values;
    const news = fromStruct(request.getNews()).values;
    const changed = CONFIG.map((entry) => entry.key).filter((key) => String(olds[key]) !== String(news[key]));
    return new proto.DiffResponse().setChanges(changesOf(changed.length > 0)).setDiffsList(changed);
  }),
  configure: unary(async (request: proto.ConfigureRequest) => {
    const args = fromStruct(request.getArgs());
    const apiKey = args.values[API_KEY];
    if (typeof apiKey === "string" && apiKey !== "" && !args.secrets.has(API_KEY)) {
      throw new Error(PLAINTEXT_API_KEY_REFUSAL);
    }
    configureFrom(args.values);
    return new proto.ConfigureResponse()
      .setAcceptsecrets(true)
      .setSupportspreview(true)
      .setAcceptresources(false)
      .setAcceptoutputs(false);
  }),
};

const version = packageVersion();

const providerService = {
  ...configService,
  getPluginInfo: unary(async () => new pluginProto.PluginInfo().setVersion(version)),
  getSchema: unary(async (request: proto.GetSchemaRequest) => {
    if (request.getVersion() !== 0) throw new Error(`unsupported schema version ${request.getVersion()}`);
    return new proto.GetSchemaResponse().setSchema(JSON.stringify(await packageSchema(version)));
  }),
  attach: unary(async () => new Empty()),
  cancel: unary(async () => new Empty()),
  check: unary(resources.check),
  diff: unary(resources.diff),
  create: unary(resources.create),
  read: unary(resources.read),
  invoke: unary(invoke),
  update: unary(resources.update),
  delete: unary(async (request: proto.DeleteRequest) => {
    await resources.remove(request);
    return new Empty();
  }),
};

/** Serves on 127.0.0.1 at a port the system picks, and prints it for the engine. */
export async function serve(): Promise<grpc.Server> {
  const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  server.addService(services.ResourceProviderService, providerService);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  process.stdout.write(`${port}\n`);
  return server;
}
