import { once } from "node:events";
import { Worker } from "node:worker_threads";

/**
 * HashiCorp Vault's transit engine as a Pulumi stack whose secrets provider is `hashivault://<key>`
 * uses it (through gocloud.dev's keeper): `encrypt` and `decrypt` of the stack's one data key, over
 * loopback, with the token in X-Vault-Token. The engine encrypts every secret of the state and config
 * with that data key, exactly as with the passphrase provider; only the key's wrapping differs.
 *
 * Why: with the passphrase provider each CLI call that opens the stack first derives the key from the
 * passphrase, PBKDF2-SHA256 at 1,000,000 rounds: 240 ms of the 260 ms of CPU the CLI process spends
 * in a `pulumi preview` of three resources (`pulumi preview --profiling`), in each of some 650 calls of
 * a suite run. The stacks the tests open for themselves use this provider; everything a user types
 * (README and docs blocks, the examples' own commands, the release) keeps the passphrase.
 *
 * The server runs on a thread of its own: the harness reads outputs with synchronous CLI calls
 * (stackReads.ts), which would otherwise wait on a server their own thread cannot run. One per
 * process, started at first use, not keeping the process alive.
 */
export interface VaultTransit {
  /** The `--secrets-provider` URL. */
  url: string;
  /** What the CLI needs to reach it: VAULT_SERVER_URL and VAULT_SERVER_TOKEN. */
  env: Record<string, string>;
}

const KEY_NAME = "pulumi-proxy-tests";

let running: Promise<VaultTransit> | undefined;

export function vaultTransit(): Promise<VaultTransit> {
  running ??= start();
  return running;
}

async function start(): Promise<VaultTransit> {
  const worker = new Worker(`(${serve.toString()})(${JSON.stringify(KEY_NAME)})`, { eval: true });
  worker.unref();
  const [{ port, token }] = (await once(worker, "message")) as [{ port: number; token: string }];
  return {
    url: `hashivault://${KEY_NAME}`,
    env: { VAULT_SERVER_URL: `http://127.0.0.1:${port}`, VAULT_SERVER_TOKEN: token },
  };
}

/**
 * The server, run by the worker from its source text: it uses nothing but its argument and Node's
 * modules. The data key is wrapped with AES-256-GCM under a key of this worker's own, so nothing
 * outside the process can unwrap it; requests are bounded in size and time.
 */
function serve(keyName: string): void {
  const { createCipheriv, createDecipheriv, randomBytes } = require("node:crypto") as typeof import("node:crypto");
  const http = require("node:http") as typeof import("node:http");
  const { parentPort } = require("node:worker_threads") as typeof import("node:worker_threads");
  const key = randomBytes(32);
  const token = randomBytes(16).toString("hex");
  const maxBodyBytes = 64 * 1024;

  const wrap = (plaintext: Buffer): string => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return `vault:v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
  };
  const unwrap = (ciphertext: string): Buffer => {
    const raw = Buffer.from(ciphertext.replace(/^vault:v1:/, ""), "base64");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
  };
  const answer = (operation: string, body: { plaintext?: unknown; ciphertext?: unknown }) => {
    if (operation === "encrypt" && typeof body.plaintext === "string") {
      return { ciphertext: wrap(Buffer.from(body.plaintext, "base64")) };
    }
    if (operation === "decrypt" && typeof body.ciphertext === "string") {
      return { plaintext: unwrap(body.ciphertext).toString("base64") };
    }
    return undefined;
  };

  const server = http.createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (request, response) => {
    const reply = (status: number, payload: object) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
    const route = /^\/v1\/transit\/(encrypt|decrypt)\/([^/?]+)$/.exec(request.url ?? "");
    if (request.headers["x-vault-token"] !== token) return void reply(403, { errors: ["permission denied"] });
    if (!route || route[2] !== keyName || !["PUT", "POST"].includes(request.method ?? "")) {
      return void reply(404, { errors: [] });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) request.destroy();
      else chunks.push(chunk);
    });
    request.on("end", () => {
      try {
        const data = answer(route[1] ?? "", JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
        if (data) reply(200, { data });
        else reply(400, { errors: ["missing plaintext or ciphertext"] });
      } catch {
        reply(400, { errors: ["invalid ciphertext"] });
      }
    });
  });
  server.keepAliveTimeout = 1_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    parentPort?.postMessage({ port: typeof address === "object" && address ? address.port : 0, token });
  });
}
