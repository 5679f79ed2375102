import { specialSigKey } from "@pulumi/pulumi/runtime/rpc";

/**
 * How Pulumi marks a secret value in a stack's state and its exports (sdk/go/common/resource/sig):
 * an object with this key, and `ciphertext` (or, exported with --show-secrets, `plaintext`: the
 * value's JSON) beside it.
 */
export const SECRET_SIGNATURE = specialSigKey;
