// @ts-check
/**
 * First step of every npm script: makes a fresh clone runnable. It checks Node and installs the
 * dependencies when they are missing or older than package-lock.json, so `npm test` and
 * `npm run demo` are the only commands a new machine needs.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const quiet = process.argv.includes("--quiet");
const MIN_NODE = [20, 18, 1];

const current = process.versions.node.split(".").map(Number);
const tooOld = MIN_NODE.some((part, i) => {
  const mine = current[i] ?? 0;
  return mine !== part && MIN_NODE.slice(0, i).every((p, j) => p === current[j]) && mine < part;
});
if (tooOld) {
  console.error(`pulumi-proxy needs Node ${MIN_NODE.join(".")} or newer; this is Node ${process.versions.node}.`);
  process.exit(1);
}

const lockFile = path.join(repoRoot, "package-lock.json");
const stampFile = path.join(repoRoot, "node_modules", ".pulumi-proxy-lock-hash");
const lockHash = createHash("sha256").update(fs.readFileSync(lockFile)).digest("hex");
const installed = fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === lockHash;

if (!installed) {
  if (!quiet) console.error("[setup] installing dependencies (npm ci)");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
  });
  fs.writeFileSync(stampFile, lockHash);
}

const { ensureSelfLink } = await import("./self-link.mjs");
ensureSelfLink();
