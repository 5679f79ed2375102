import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/**
 * The browser the tests and the screenshots use: Debian's chromium, driven by playwright-core. No
 * browser is ever downloaded; a machine without one gets the Debian package (as root, or via sudo).
 */
export const CHROMIUM = "/usr/bin/chromium";

/** Quiet and self-contained: no GPU, no QUIC, no first-run, update, sync or background traffic. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The chromium executable, installed with apt-get first when it is missing. */
export function ensureChromium(): string {
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  const asRoot = process.getuid?.() === 0;
  const aptGet = (args: string[]) =>
    execFileSync(asRoot ? "apt-get" : "sudo", asRoot ? args : ["-n", "apt-get", ...args], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  console.error(`[setup] ${CHROMIUM} is missing: installing Debian's chromium (apt-get install chromium)`);
  try {
    aptGet(["update"]);
    aptGet(["install", "-y", "--no-install-recommends", "chromium"]);
  } catch (error) {
    throw new Error(
      `the browser tests need Debian's chromium at ${CHROMIUM}, and installing it failed (${error instanceof Error ? error.message : String(error)}). Run \`sudo apt-get install -y chromium\`.`,
    );
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but not at ${CHROMIUM}`);
  return CHROMIUM;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** One headless chromium with a fresh profile folder, removed again on close. */
export async function launchBrowser(): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: ensureChromium(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
