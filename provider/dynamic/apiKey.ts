import type * as d from "../core/descriptor";
import { apiKey } from "../kinds/apiKey/descriptor";
import { resourceClass } from "./resource";

export type ApiKeyArgs = d.ArgsOf<typeof apiKey>;
/** A scoped API key. `secret` is a secret output, shown once by the API and kept only in (encrypted) state. */
export const ApiKey = resourceClass(apiKey);
export type ApiKey = InstanceType<typeof ApiKey>;
