/**
 * `npm run screenshots`: the README's two pictures, the report and the live console, taken in
 * Debian's chromium from a scene this script builds on an embedded reference server. The PNGs are
 * committed; run this again after changing either page, never edit them by hand.
 */
import fs from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { reportOf } from "../cli/report/command";
import { renderHtml } from "../cli/report/html";
import { launchBrowser } from "../harness/browser";
import { ProxyClient } from "../sdk";
import { type ReferenceServer, startReferenceServer } from "../server";
import { findRepoRoot } from "./support";

/** The scene is always 2030-03-20, 14:00 UTC, with the seconds ticking: the same pictures every run. */
const SCENE_START = Date.parse("2030-03-20T14:00:00Z");
const AS_OF = "2030-03-20";
const GB = 1e9;

interface SceneUser {
  name: string;
  daily: number | null;
  monthly: number | null;
  /** GB on day `d` of March (1-based), for d up to 20. */
  traffic: (day: number) => number;
  enabled?: boolean;
}

const USERS: SceneUser[] = [
  { name: "price-monitor", daily: 2, monthly: 30, traffic: (d) => 0.6 + d * 0.07 },
  { name: "seo-crawler", daily: 1.5, monthly: 40, traffic: (d) => (d < 12 ? 0.5 : 1.6) },
  { name: "ads-verify", daily: null, monthly: 12, traffic: (d) => (d <= 14 ? 0.86 : 0) },
  { name: "web-scraper", daily: 3, monthly: 80, traffic: (d) => 1.1 + 0.4 * Math.sin(d / 2) },
  { name: "social-listen", daily: 1, monthly: 25, traffic: (d) => 0.3 + (d % 7 === 0 ? 0.5 : 0.1) },
  { name: "qa-bots", daily: 0.5, monthly: 10, traffic: () => 0.12 },
  { name: "backup-sync", daily: null, monthly: 5, traffic: (d) => (d <= 6 ? 0.4 : 0), enabled: false },
];

async function startOrigin(): Promise<Server> {
  const origin = createServer((req, res) => {
    const size = Number((req.url ?? "").split("/").pop()) || 1000;
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
    res.end(Buffer.alloc(size, 120));
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  return origin;
}

/** One absolute-form request through the gateway, as a proxy client sends it. */
function viaGateway(gatewayUrl: string, target: string, auth: string): Promise<void> {
  const gateway = new URL(gatewayUrl);
  return new Promise((resolve) => {
    const req = request(
      { host: gateway.hostname, port: gateway.port, path: target, headers: { "proxy-authorization": auth } },
      (res) => {
        res.resume();
        res.on("end", resolve);
      },
    );
    req.on("error", () => resolve());
    req.end();
  });
}

async function buildScene(server: ReferenceServer, api: ProxyClient): Promise<{ id: string; auth: string }[]> {
  const live: { id: string; auth: string }[] = [];
  for (const user of USERS) {
    const created = await api.proxyUsers.create({
      name: user.name,
      limits: { daily_gb: user.daily, monthly_gb: user.monthly },
      enabled: user.enabled ?? true,
    });
    for (let day = 1; day <= 20; day++) {
      const at = Date.parse(`2030-03-${String(day).padStart(2, "0")}T10:00:00Z`);
      const bytes = Math.round(user.traffic(day) * (day === 20 ? 0.55 : 1) * GB);
      if (bytes > 0) server.control.recordTraffic(created.id, bytes, Math.round(bytes / 80_000), at);
    }
    if (user.enabled !== false)
      live.push({
        id: created.id,
        auth: `Basic ${Buffer.from(`${created.username}:${created.password}`).toString("base64")}`,
      });
  }
  await api.keys.create({ name: "ci-deploy", scopes: ["proxy-users:write", "limits:write", "proxy-users:read"] });
  await api.keys.create({ name: "billing-bot", scopes: ["billing:read", "billing:write"] });
  await api.keys.create({ name: "dashboards", scopes: ["usage:read"], expires_at: "2030-03-29T00:00:00Z" });
  for (const country of ["us", "de"]) await api.ips.allocate({ product: "isp", country });
  await api.ips.allocate({ product: "dedicated", country: "us" });
  return live;
}

/** API requests from two keys and gateway traffic for a few users, for as long as the console is watched. */
function keepBusy(server: ReferenceServer, api: ProxyClient, live: { auth: string }[], originPort: number) {
  const reader = server.control.createKey({ name: "grafana", scopes: ["usage:read", "proxy-users:read"] });
  const readerApi = new ProxyClient({ baseUrl: server.url, apiKey: reader.secret });
  let running = true;
  const loops = [
    (async () => {
      while (running) {
        await Promise.all([api.proxyUsers.list(), readerApi.usage.get({ from: "2030-03-01", to: AS_OF })]);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
    })(),
    (async () => {
      for (let i = 0; running; i++) {
        const user = live[i % 4];
        if (user)
          await viaGateway(
            server.gatewayUrl,
            `http://127.0.0.1:${originPort}/${150_000 + (i % 5) * 90_000}`,
            user.auth,
          );
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    })(),
  ];
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

async function main(): Promise<void> {
  const out = path.join(findRepoRoot(), "docs", "images");
  fs.mkdirSync(out, { recursive: true });
  const offset = SCENE_START - Date.now();
  const server = await startReferenceServer({
    clock: { now: () => Date.now() + offset },
    balanceCents: 25_000,
    gateway: { propagationDelayMs: 0 },
  });
  const origin = await startOrigin();
  const browser = await launchBrowser();
  try {
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    const live = await buildScene(server, api);

    const report = await reportOf(api, AS_OF);
    const reportFile = path.join(out, "report.html");
    fs.writeFileSync(reportFile, renderHtml(report));
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1150, height: 1000 });
    await page.goto(`file://${reportFile}`);
    await page.screenshot({ path: path.join(out, "report.png") });
    fs.rmSync(reportFile);

    const stop = keepBusy(server, api, live, (origin.address() as AddressInfo).port);
    await page.setViewportSize({ width: 1280, height: 980 });
    await page.goto(server.consoleUrl ?? "");
    await new Promise((resolve) => setTimeout(resolve, 6000));
    await page.screenshot({ path: path.join(out, "console.png"), fullPage: true });
    await stop();
    process.stdout.write(`wrote ${path.join(out, "report.png")}\nwrote ${path.join(out, "console.png")}\n`);
  } finally {
    await browser.close();
    origin.close();
    await server.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `screenshots failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
