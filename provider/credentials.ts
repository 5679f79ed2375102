import * as pulumi from "@pulumi/pulumi";
import { PermissionDeniedError } from "../sdk";
import { type ApiSettings, apiSettings, clientFor, providerSettings, settingsIdentity } from "./settings";
import { explain } from "./shared";

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

/** The hidden input that carries `apiProblemOnUp`'s answer from the program to `check`. */
export const API_PROBLEM_INPUT = "__apiProblem";

let reachable: { identity: string; answered: Promise<string | undefined> } | undefined;

/**
 * An `up` records the stack's proxy:apiUrl and proxy:apiKey for every later refresh and destroy; one
 * pointed at nothing would deploy "unchanged" and fail only at the next drift check. So an `up` (not
 * a preview, which costs no request) first asks the API one cheap question with the stack's settings,
 * bounded by proxy:retryWindowSeconds. Any answer but a refused key will do: a 403 means the key is
 * valid but lacks proxy-users:read. It resolves to why the API cannot be used, for `check` to refuse
 * the resource with (a rejected input would leave an inline program waiting forever), or to
 * undefined. Undefined at once in a preview, or when no credential is set (the first method that
 * needs one says so).
 */
export function apiProblemOnUp(): Promise<string | undefined> | undefined {
  if (pulumi.runtime.isDryRun()) return undefined;
  let settings: ApiSettings;
  try {
    settings = apiSettings((key) => pulumi.runtime.getConfig(key));
  } catch {
    return undefined;
  }
  // Once per program run and settings (an inline program may run many times in one process).
  const identity = [settingsIdentity(settings), pulumi.getStack()].join("\u0000");
  if (reachable?.identity !== identity) reachable = { identity, answered: askOnce(settings) };
  return reachable.answered;
}

async function askOnce(settings: ApiSettings): Promise<string | undefined> {
  try {
    await clientFor(settings, "pulumi-proxy-program").proxyUsers.list({ limit: 1 });
    return undefined;
  } catch (error) {
    if (error instanceof PermissionDeniedError) return undefined;
    const where = `the API at ${settings.apiUrl} (proxy:apiUrl)`;
    return explain("pulumi-proxy", `reach ${where} before recording it`, error).message;
  }
}
