import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../support/pulumi";

const exec = promisify(execFile);

/** Named in the schema only: nothing fetches it. */
const RELEASE_REPOSITORY = "https://github.com/example/pulumi-proxy";

/** The release folder served over loopback HTTP, as a release page serves it, with what was fetched. */
export interface ServedRelease {
  dir: string;
  version: string;
  /** The plugin download URL given to the release, as the README gives it: with `${VERSION}`. */
  requestedDownloadURL: string;
  /** The URL the SDKs carry: the release fills in `${VERSION}`, so that `pulumi import` can write code. */
  pluginDownloadURL: string;
  /** Where the folder's files are served: the download URL with the version filled in. */
  baseUrl: string;
  /** The repository the release names (`--repository`). */
  repository: string;
  /** Paths requested so far, in order. */
  requests: string[];
  file(suffix: string): string;
  close(): Promise<void>;
}

/**
 * `npm run release` as a maintainer runs it, with its plugin download URL on a loopback server that
 * is listening before the build (the URL names its port), then serves the folder the build printed.
 */
export async function buildAndServeRelease(outDir: string): Promise<ServedRelease> {
  const requests: string[] = [];
  let dir = "";
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    requests.push(url.pathname);
    const prefix = `/releases/v${version}/`;
    const name = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : "";
    const file = path.join(dir, name);
    if (!name || name.includes("/") || !dir || !fs.existsSync(file)) {
      response.writeHead(404).end("not found\n");
      return;
    }
    response.writeHead(200, { "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const version = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version as string;
  const requestedDownloadURL = `http://127.0.0.1:${port}/releases/v\${VERSION}/`;
  const built = await exec(
    "npm",
    [
      "run",
      "--silent",
      "release",
      "--",
      "--plugin-download-url",
      requestedDownloadURL,
      "--repository",
      RELEASE_REPOSITORY,
      "--out",
      outDir,
    ],
    {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  dir = built.stdout.trim().split("\n").at(-1) ?? "";
  return {
    dir,
    version,
    requestedDownloadURL,
    pluginDownloadURL: `http://127.0.0.1:${port}/releases/v${version}/`,
    repository: RELEASE_REPOSITORY,
    baseUrl: `http://127.0.0.1:${port}/releases/v${version}/`,
    requests,
    file(suffix) {
      const name = fs.readdirSync(dir).find((entry) => entry.endsWith(suffix));
      if (!name) throw new Error(`the release folder ${dir} holds no *${suffix}: ${fs.readdirSync(dir).join(", ")}`);
      return path.join(dir, name);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
