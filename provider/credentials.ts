import * as pulumi from "@pulumi/pulumi";
import { providerSettings } from "./settings";

/**
 * Pulumi records the stack configuration, `proxy:apiKey` included, as the inputs of the stack's
 * default provider, in the state: encrypted when the value was set with `--secret`, in plain text
 * otherwise. A plaintext key is therefore refused in the program process, at preview, before the
 * engine could record it; the message gives the command that encrypts the value in place and never
 * shows the value. `PROXY_API_KEY` in the environment is not stack configuration and stays allowed.
 */
export const PLAINTEXT_API_KEY_FIX = 'pulumi config set --secret proxy:apiKey "$(pulumi config get proxy:apiKey)"';

type ConfigSecrecy = { isConfigSecret?: (key: string) => boolean };

export function refusePlaintextApiKey(): void {
  const isSecret = (pulumi.runtime as unknown as ConfigSecrecy).isConfigSecret;
  if (isSecret === undefined || pulumi.runtime.getConfig("proxy:apiKey") === undefined) return;
  if (isSecret("proxy:apiKey")) return;
  throw new pulumi.RunError(
    `proxy:apiKey is stored in plain text in the stack configuration, and Pulumi would also record it in the state. Encrypt it in place: ${PLAINTEXT_API_KEY_FIX}`,
  );
}

/** A provider setting the provider process would refuse, refused at preview instead, before any request. */
export function refuseBadSettings(): void {
  try {
    providerSettings((key) => pulumi.runtime.getConfig(key));
  } catch (error) {
    throw new pulumi.RunError((error as Error).message);
  }
}
