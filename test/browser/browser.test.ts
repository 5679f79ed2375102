import fs from "node:fs";
import { connect, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchBrowser } from "../../harness/browser";
import { ProxyClient } from "../../sdk";
import { ManualClock, type ReferenceServer, startReferenceServer } from "../../server";
import { seedReportAccount } from "../cli/reportSeed";
import { basic, type Origin, startOrigin } from "../gateway/harness";
import { runCli } from "../support/cli";

/** One chromium for every browser test: launching it is the expensive part. */
let browser: Browser;
let shots: string;

beforeAll(async () => {
  browser = await launchBrowser();
  shots = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-shots-"));
});
afterAll(async () => {
  await browser?.close();
  if (shots) fs.rmSync(shots, { recursive: true, force: true });
});

/** A CONNECT tunnel through the gateway that stays open until the test closes it. */
async function openTunnel(gatewayUrl: string, origin: Origin, auth: string): Promise<Socket> {
  const { hostname, port } = new URL(gatewayUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  const until = async (text: string) => {
    for (let i = 0; i < 100 && !received.includes(text); i++) await new Promise((r) => setTimeout(r, 20));
    if (!received.includes(text)) throw new Error(`tunnel: no "${text}" in ${JSON.stringify(received.slice(0, 200))}`);
  };
  socket.write(
    `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
  );
  await until(" 200 ");
  socket.write(`GET /bytes/300000 HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n\r\n`);
  await until("content-length: 300000");
  return socket;
}

describe("the reference server's console in chromium", () => {
  let server: ReferenceServer;
  let api: ProxyClient;
  let clock: ManualClock;
  let origin: Origin;
  let page: Page;

  beforeAll(async () => {
    clock = new ManualClock(Date.parse("2030-05-10T10:00:30Z"));
    server = await startReferenceServer({ clock, rateLimitPerMinute: 50, gateway: { propagationDelayMs: 0 } });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxRetries: 0 });
    origin = await startOrigin();
    page = await browser.context.newPage();
    expect(server.consoleUrl).toBe(`${server.url}/`);
    await page.goto(server.consoleUrl ?? "");
    await page.locator("#status", { hasText: "live" }).waitFor();
  });
  afterAll(async () => {
    await page?.close();
    await origin?.close();
    await server?.close();
  });

  // The page is pushed the change (its event stream); no clock is read: on a loaded machine a duration
  // says more about the load than about the console.
  it("shows a proxy user created through the API without a reload, and holds no credential", async () => {
    let loads = 0;
    page.on("load", () => {
      loads += 1;
    });
    const created = await api.proxyUsers.create({ name: "console-user", limits: { daily_gb: 1, monthly_gb: 20 } });
    await page.locator(`[data-object-id="${created.id}"]`).waitFor();
    expect(loads, "the page was not reloaded to show it").toBe(0);
    // The request log shows the create, by key id and path, never a secret.
    await page.locator("#log tr", { hasText: "POST" }).first().waitFor();
    const html = await page.content();
    for (const secret of [server.rootKey, created.password]) expect(html).not.toContain(secret);
    expect(await page.evaluate("document.cookie")).toBe("");
  });

  it("fills a key's rate-limit window and shows it reset when the window ends", async () => {
    const keys = await api.keys.list();
    const root = keys.items.find((key) => key.name === "root");
    for (let i = 0; i < 5; i++) await api.proxyUsers.list();
    const gauge = page.locator(`[data-window-key="${root?.id}"]`);
    await expect.poll(async () => Number(await gauge.getAttribute("data-used")), { timeout: 3000 }).toBeGreaterThan(5);
    clock.advance(60_000);
    await expect.poll(async () => gauge.getAttribute("data-used"), { timeout: 3000 }).toBe("0");
  });

  it("shows a proxy user's gateway bytes while its tunnel is still open", async () => {
    const user = await api.proxyUsers.create({ name: "tunnel-user", limits: { daily_gb: 0.01, monthly_gb: null } });
    const tunnel = await openTunnel(server.gatewayUrl, origin, basic(user.username, user.password));
    try {
      const row = page.locator(`[data-gateway-user="${user.id}"]`);
      await expect
        .poll(async () => Number(await row.getAttribute("data-today-bytes")), { timeout: 4000 })
        .toBeGreaterThan(300_000);
      expect(tunnel.destroyed).toBe(false);
      await page.screenshot({ path: path.join(shots, "console.png"), fullPage: true });
      expect(fs.statSync(path.join(shots, "console.png")).size).toBeGreaterThan(10_000);
    } finally {
      tunnel.destroy();
    }
  });

  it("applies changes where they stand: a user disabled, then deleted; a look-alike key written out", async () => {
    const user = await api.proxyUsers.create({ name: "short-lived" });
    const row = page.locator(`[data-object-id="${user.id}"]`);
    await row.waitFor({ timeout: 3000 });
    await api.proxyUsers.update(user.id, { enabled: false });
    await expect.poll(() => row.locator("td").nth(2).textContent(), { timeout: 3000 }).toBe("no");
    await api.proxyUsers.delete(user.id);
    await row.waitFor({ state: "detached", timeout: 3000 });
    const key = await api.keys.create({ name: "ro\u200Bot", scopes: ["usage:read"] });
    await page.locator("[data-tab=keys]").click();
    const keyRow = page.locator(`[data-object-id="${key.id}"]`);
    await keyRow.waitFor({ timeout: 3000 });
    expect(await keyRow.locator("td").first().textContent()).toBe("ro\\u200Bot");
    await page.locator("[data-tab=proxyUsers]").click();
  });
});

describe("the report in chromium", () => {
  it("draws every user's series and lists the projected crossings of a seeded history", async () => {
    const clock = new ManualClock(Date.parse("2030-02-15T09:00:00Z"));
    const server = await startReferenceServer({ clock, rateLimitPerMinute: 100_000, console: false });
    const page = await browser.context.newPage();
    try {
      const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
      await seedReportAccount(server, api, clock, { fillers: 0 });
      clock.set(Date.parse("2030-03-20T12:00:00Z"));
      const file = path.join(shots, "report.html");
      const env = { ...process.env, PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey } as Record<
        string,
        string
      >;
      const run = await runCli(["report", "--as-of", "2030-03-20", "--out", file], env);
      expect(run.stderr).toBe("");
      // Offline: a page that fetched anything would fail here.
      await page.route("**/*", (route) =>
        route.request().url().startsWith("file:") ? route.continue() : route.abort(),
      );
      await page.goto(`file://${file}`);
      const count = (series: string) => page.locator(`svg [data-series="${series}"]`).count();
      // Five users: a daily and a cumulative chart each; a projection each (the month is not over);
      // a ceiling line where the user has that ceiling; one spend bar (IP allocations).
      expect(await count("daily")).toBe(5);
      expect(await count("cumulative")).toBe(5);
      expect(await count("projection")).toBe(5);
      expect(await count("daily-ceiling")).toBe(1);
      expect(await count("monthly-ceiling")).toBe(4);
      expect(await count("spend")).toBe(1);
      const bars = await page.locator('svg [data-series="daily"]').first().boundingBox();
      expect(bars?.height).toBeGreaterThan(10);
      const risk = await page.locator("#at-risk tr[data-user]").allInnerTexts();
      expect(risk.map((row) => row.split("\t").slice(0, 3))).toEqual([
        ["capped", "monthly", "2030-03-10"],
        ["burst", "daily", "2030-03-20"],
        ["steady", "monthly", "2030-03-25"],
      ]);
      await page.screenshot({ path: path.join(shots, "report.png"), fullPage: false });
      expect(fs.statSync(path.join(shots, "report.png")).size).toBeGreaterThan(10_000);
    } finally {
      await page.close();
      await server.close();
    }
  });
});
