import * as proto from "@pulumi/pulumi/proto/provider_pb";
import { type FunctionDescriptor, invokeFunction } from "../functions/descriptor";
import { FUNCTIONS as DESCRIPTORS } from "../kinds";
import { front, PACKAGE } from "./kinds";
import { fromStruct, toStruct } from "./protocol";

/** The native provider's view of the functions: each descriptor of provider/kinds/index.ts under its token. */
export interface NativeFunction {
  /** `proxy:index:getUsage` */
  token: string;
  declaration: FunctionDescriptor;
}

export const FUNCTIONS: readonly NativeFunction[] = DESCRIPTORS.map((descriptor: FunctionDescriptor) => ({
  token: `${PACKAGE}:index:${descriptor.name}`,
  declaration: descriptor,
}));

function functionOf(token: string): NativeFunction {
  const found = FUNCTIONS.find((candidate) => candidate.token === token);
  if (!found) {
    throw new Error(
      `pulumi-proxy: ${token} is not a function of this provider; use one of ${FUNCTIONS.map((f) => f.token).join(", ")}.`,
    );
  }
  return found;
}

/**
 * `Invoke`: the function's descriptor over the plugin's configured client. The engine calls it only
 * with known arguments (the SDKs wait for unknown ones), at preview as at up; a failure is the
 * descriptor's one-line message. The result is as secret as the arguments were.
 */
export async function invoke(request: proto.InvokeRequest): Promise<proto.InvokeResponse> {
  const { declaration } = functionOf(request.getTok());
  const args = fromStruct(request.getArgs());
  const result = await invokeFunction(declaration, front.session, args.values);
  const secrets = args.secrets.size > 0 ? Object.keys(result) : [];
  return new proto.InvokeResponse().setReturn(toStruct(result, secrets));
}
