import * as grpc from "@grpc/grpc-js";
import * as pluginProto from "@pulumi/pulumi/proto/plugin_pb";
import * as services from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as proto from "@pulumi/pulumi/proto/provider_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { packageSchema } from "../provider/native/schema";
import { packageVersion } from "../provider/native/version";

/**
 * The floor of the native preview bench (preview.ts): a `proxy` plugin of the same name, version and
 * schema as the real one that answers at once and asks nothing. `check` gives back the program's
 * inputs as they came (the same Struct, never decoded), `diff` says "no change", the config is taken
 * as given. What a preview costs against it is the program's and the engine's own work, and the
 * gRPC round trips every plugin pays; the real plugin's time above it is its own.
 *
 * The bench writes a launcher for it into a stack's plugin cache in place of the real one
 * (`node dist/bench/noopPlugin.js <engine address>`); it resolves its modules from the repository.
 */

function answer<Req, Res>(respond: (request: Req) => Res): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => callback(null, respond(call.request));
}

const version = packageVersion();
const none = proto.DiffResponse.DiffChanges.DIFF_NONE;

const noopProvider = {
  getPluginInfo: answer(() => new pluginProto.PluginInfo().setVersion(version)),
  getSchema: (
    _call: grpc.ServerUnaryCall<proto.GetSchemaRequest, proto.GetSchemaResponse>,
    callback: grpc.sendUnaryData<proto.GetSchemaResponse>,
  ) => {
    packageSchema(version).then(
      (schema) => callback(null, new proto.GetSchemaResponse().setSchema(JSON.stringify(schema))),
      (error: Error) => callback({ code: grpc.status.UNKNOWN, details: error.message }, null),
    );
  },
  checkConfig: answer((request: proto.CheckRequest) => new proto.CheckResponse().setInputs(request.getNews())),
  diffConfig: answer(() => new proto.DiffResponse().setChanges(none)),
  configure: answer(() =>
    new proto.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true).setAcceptresources(false),
  ),
  attach: answer(() => new Empty()),
  cancel: answer(() => new Empty()),
  check: answer((request: proto.CheckRequest) => new proto.CheckResponse().setInputs(request.getNews())),
  diff: answer(() => new proto.DiffResponse().setChanges(none)),
};

const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
// What is not listed (create, read, update, delete, invoke) answers UNIMPLEMENTED: a preview of an
// up-to-date stack calls none of them.
server.addService(services.ResourceProviderService, noopProvider);
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    process.stderr.write(`noop plugin: cannot serve: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${port}\n`);
});
