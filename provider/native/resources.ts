import * as pulumi from "@pulumi/pulumi";
import * as proto from "@pulumi/pulumi/proto/provider_pb";
import type { Struct } from "google-protobuf/google/protobuf/struct_pb";
import {
  detailedDiff,
  importedInputs,
  kindOf,
  missingSecrets,
  type NativeKind,
  partiallyCreated,
  withIdentity,
} from "./kinds";
import { fromStruct, type Properties, toStruct, UNKNOWN, type Unwrapped } from "./protocol";

/**
 * The resource operations of the protocol over the rules: each request's Structs become plain
 * values, the kind's handler runs (the same one the dynamic provider calls, so the same checks,
 * exactly-once keys, pacing and coalesced reads), and its answer goes back with the declared secret
 * outputs, and every property that came in secret, wrapped as secrets.
 */

type Request = { getType(): string; getUrn(): string };

function kindFor(request: Request): NativeKind {
  // Older engines send only the URN, whose third part ends with the type.
  return kindOf(request.getType() || (request.getUrn().split("::")[2]?.split("$").pop() ?? ""));
}

/** What to send back secret: the kind's secret outputs, and whatever arrived secret. */
function secretsOf(kind: NativeKind, ...inputs: Unwrapped[]): Set<string> {
  return new Set([...kind.declaration.secretOutputs, ...inputs.flatMap((input) => [...input.secrets])]);
}

/** The object exists but a later step failed: its id and state (secrets wrapped) for the engine to record. */
export class InitFailed extends Error {
  constructor(
    message: string,
    readonly id: string,
    readonly properties: Struct,
    readonly reasons: string[],
  ) {
    super(message);
  }
}

async function recordingPartial<T>(secrets: Set<string>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const partial = partiallyCreated(error);
    if (!partial) throw error;
    throw new InitFailed(partial.message, partial.id, toStruct(partial.properties, secrets), partial.reasons);
  }
}

export async function check(request: proto.CheckRequest): Promise<proto.CheckResponse> {
  const kind = kindFor(request);
  const olds = fromStruct(request.getOlds());
  const news = fromStruct(request.getNews());
  const checked = (await kind.handler.check(olds.values, news.values)) as {
    inputs?: Properties;
    failures?: { property: string; reason: string }[];
  };
  const response = new proto.CheckResponse();
  if (checked.inputs) response.setInputs(toStruct(checked.inputs, news.secrets));
  for (const failure of checked.failures ?? []) {
    response.addFailures(new proto.CheckFailure().setProperty(failure.property).setReason(failure.reason));
  }
  return response;
}

export async function diff(request: proto.DiffRequest): Promise<proto.DiffResponse> {
  const kind = kindFor(request);
  const { changes, replaces, properties } = await detailedDiff(
    kind,
    fromStruct(request.getOlds()).values,
    fromStruct(request.getNews()).values,
  );
  const response = new proto.DiffResponse()
    .setChanges(changes ? proto.DiffResponse.DiffChanges.DIFF_SOME : proto.DiffResponse.DiffChanges.DIFF_NONE)
    .setReplacesList(replaces)
    .setDiffsList(Object.keys(properties))
    .setDeletebeforereplace(false)
    .setHasdetaileddiff(Object.keys(properties).length > 0);
  for (const [key, change] of Object.entries(properties)) {
    const kindOfChange = change === "replace" ? proto.PropertyDiff.Kind.UPDATE_REPLACE : proto.PropertyDiff.Kind.UPDATE;
    // The rules compare the state (what the API last showed) with the new inputs, so the engine shows that.
    response.getDetaileddiffMap().set(key, new proto.PropertyDiff().setKind(kindOfChange).setInputdiff(false));
  }
  return response;
}

/** A preview's outputs: the inputs, and every other declared output unknown until the apply. */
function previewOutputs(kind: NativeKind, base: Properties, inputs: Properties): Properties {
  const unknown = Object.fromEntries(Object.keys(kind.declaration.outputs).map((key) => [key, UNKNOWN]));
  return { ...unknown, ...base, ...inputs };
}

export async function create(request: proto.CreateRequest): Promise<proto.CreateResponse> {
  const kind = kindFor(request);
  const inputs = fromStruct(request.getProperties());
  const response = new proto.CreateResponse();
  if (request.getPreview()) {
    return response.setProperties(toStruct(previewOutputs(kind, {}, inputs.values), secretsOf(kind, inputs)));
  }
  const secrets = secretsOf(kind, inputs);
  const created = await recordingPartial(secrets, () =>
    kind.handler.create(withIdentity(request.getUrn(), inputs.values)),
  );
  return response.setId(created.id).setProperties(toStruct(created.outs ?? {}, secrets));
}

/**
 * A refresh (the state given) reads the object and keeps the recorded inputs. An import (an id alone)
 * reads it and answers with the inputs the API reports, so that the program declaring them previews
 * with no change; a secret the API showed only at creation is missing, and the import says so. A
 * read-only resource (`get`) is read the same way, with no word of a secret it never had.
 */
export async function read(request: proto.ReadRequest): Promise<proto.ReadResponse> {
  const kind = kindFor(request);
  const state = fromStruct(request.getProperties());
  const inputs = fromStruct(request.getInputs());
  const found = await kind.handler.read(request.getId(), state.values);
  const response = new proto.ReadResponse();
  if (!found.id || !found.props) return response;
  const props = found.props as Properties;
  const importing = Object.keys(state.values).length === 0 && Object.keys(inputs.values).length === 0;
  const recorded = importing ? importedInputs(kind, props) : inputs.values;
  // An import sends no inputs at all; a read-only resource (`get`) sends its declared ones, even none,
  // and has no secret to keep nor replacement to make, so it is told nothing on each preview.
  if (importing && !request.hasInputs()) await warnMissingSecrets(kind, request.getId(), props);
  return response
    .setId(found.id)
    .setProperties(toStruct(props, secretsOf(kind, state, inputs)))
    .setInputs(toStruct(recorded, inputs.secrets));
}

async function warnMissingSecrets(kind: NativeKind, id: string, props: Properties): Promise<void> {
  const rotates = "rotationTrigger" in kind.declaration.inputs;
  for (const output of missingSecrets(kind, props)) {
    const until = rotates
      ? `created or rotated, so ${output} stays null until this stack rotates it: set rotationTrigger to rotate it.`
      : `created, so ${output} stays null in this stack unless it replaces the object (pulumi up --target-replace).`;
    await pulumi.log.warn(
      `${kind.name} ${id} was imported without its ${output}: the API shows it only when it is ${until}`,
    );
  }
}

export async function update(request: proto.UpdateRequest): Promise<proto.UpdateResponse> {
  const kind = kindFor(request);
  const olds = fromStruct(request.getOlds());
  const news = fromStruct(request.getNews());
  const secrets = secretsOf(kind, olds, news);
  const response = new proto.UpdateResponse();
  if (request.getPreview())
    return response.setProperties(toStruct(previewOutputs(kind, olds.values, news.values), secrets));
  const updated = await recordingPartial(secrets, () =>
    kind.handler.update(request.getId(), olds.values, withIdentity(request.getUrn(), news.values)),
  );
  return response.setProperties(toStruct(updated.outs ?? {}, secrets));
}

export async function remove(request: proto.DeleteRequest): Promise<void> {
  await kindFor(request).handler.delete(request.getId(), fromStruct(request.getProperties()).values);
}
