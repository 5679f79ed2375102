import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { REPO_ROOT } from "../support/pulumi";

declare module "vitest" {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>`: serves every shared release build (sharedRelease.ts). */
    releaseServer: string;
  }
}

/** Where the shared release builds live, one folder per key (sharedRelease.ts). */
export const RELEASES_DIR = path.join(REPO_ROOT, ".pulumi-proxy", "releases");
/** The port the last run served on: a build names it in its download URL, so the next run tries it first. */
const PORT_FILE = path.join(RELEASES_DIR, "port");

/**
 * The release download server, for the whole run of the soak tier: a build names its plugin download
 * URL, port included, in every SDK, so the files that share one build (sharedRelease.ts) must reach it
 * at one address that outlives each of them. A build is served at `/<key>/releases/v<version>/<file>`;
 * `GET /<key>/requests` lists the paths requested under it so far, for the tests that check the engine
 * fetched the plugin by the SDK's URL.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const requests = new Map<string, string[]>();
  const server = http.createServer((request, response) => {
    const { pathname } = new URL(request.url ?? "/", "http://127.0.0.1");
    const [, key = "", ...rest] = pathname.split("/");
    if (rest.join("/") === "requests") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(requests.get(key) ?? []));
      return;
    }
    requests.set(key, [...(requests.get(key) ?? []), `/${rest.join("/")}`]);
    const [releases, version, name, ...more] = rest;
    const file = path.join(RELEASES_DIR, key, name ?? "");
    const served = releases === "releases" && /^v[^/]+$/.test(version ?? "") && name && more.length === 0;
    if (!served || !/^[0-9a-f]{16}$/.test(key) || !fs.existsSync(file)) {
      response.writeHead(404).end("not found\n");
      return;
    }
    response.writeHead(200, { "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(response);
  });
  const port = await listen(server, previousPort());
  fs.mkdirSync(RELEASES_DIR, { recursive: true });
  fs.writeFileSync(PORT_FILE, `${port}\n`);
  project.provide("releaseServer", `http://127.0.0.1:${port}`);
  return () => new Promise((resolve) => server.close(() => resolve()));
}

function previousPort(): number {
  const recorded = Number(fs.existsSync(PORT_FILE) ? fs.readFileSync(PORT_FILE, "utf8").trim() : "");
  return Number.isInteger(recorded) && recorded > 0 ? recorded : 0;
}

/** Listens on `port`, or on any free port when that one is taken. */
function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (port === 0 || error.code !== "EADDRINUSE") return reject(error);
      server.off("error", onError);
      listen(server, 0).then(resolve, reject);
    };
    server.once("error", onError);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
