import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { ensureDebianFile } from "./debian";

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
  return ensureDebianFile(CHROMIUM, ["chromium"], "the browser tests");
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
