/**
 * The demo's last act: the credentials the stack created carry traffic through the reference
 * server's gateway, the API reports what they used, and an emergency disable stops new requests
 * once it has propagated (2 s), as the real gateways do.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "undici";
import type { ProxyClient } from "../sdk";
import type { ReferenceServer } from "../server";
import { DemoError, mask, say, seconds, step } from "./support";

const REQUESTS = 3;

/** A stand-in for the sites a scraper visits: the reference gateway forwards only to loopback. */
async function startOrigin(): Promise<{ url: string; close(): void }> {
  const origin = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("hello from the origin\n");
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/`, close: () => origin.close() };
}

/**
 * One proxied GET, written out as a proxy client sends it (absolute URL, Proxy-Authorization), so the
 * gateway's refusal header is visible; undici's ProxyAgent would turn a 407 into a bare error.
 */
async function send(gateway: Client, url: string, token: string): Promise<{ status: number; line: string }> {
  const answer = await gateway.request({
    method: "GET",
    path: url,
    headers: { host: new URL(url).host, "proxy-authorization": token },
  });
  const body = await answer.body.text();
  const reason = answer.headers["x-proxy-error"];
  return {
    status: answer.statusCode,
    line: reason
      ? `${answer.statusCode} (x-proxy-error: ${String(reason)})`
      : `${answer.statusCode} (${body.length} bytes of body)`,
  };
}

export async function gatewayStory(
  server: ReferenceServer,
  client: ProxyClient,
  user: { id: string; username: string },
  password: string,
): Promise<void> {
  step(`traffic through the gateway (${server.gatewayUrl}) with the stack's credentials`);
  const origin = await startOrigin();
  const token = `Basic ${Buffer.from(`${user.username}:${password}`).toString("base64")}`;
  const gateway = new Client(server.gatewayUrl);
  try {
    say(`      proxy user ${user.username}, password ${mask(password)} (the stack's proxyUserPassword output)`);
    for (let i = 0; i < REQUESTS; i++)
      say(`      GET ${origin.url} via the gateway → ${(await send(gateway, origin.url, token)).line}`);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await client.usage.get({ from: today, to: today, proxy_user_id: user.id });
    say(
      `      GET /v1/usage: ${usage.totals.requests} requests, ${usage.totals.bytes} bytes today (headers and bodies, both ways)`,
    );
    if (usage.totals.requests !== REQUESTS)
      throw new DemoError(`expected ${REQUESTS} requests in the usage, the API reports ${usage.totals.requests}`);

    const started = step("emergency disable through the API, then a new request every 250 ms");
    await client.proxyUsers.disable(user.id);
    say(`      POST /v1/proxy-users/${user.id}/disable → enabled: false`);
    let verdict = await send(gateway, origin.url, token);
    say(
      `      right after: ${verdict.line}${verdict.status === 200 ? ", the disable has not reached the gateway yet" : ""}`,
    );
    while (verdict.status !== 407) {
      if (Date.now() - started > 15_000) throw new DemoError("the gateway still forwards 15 s after the disable");
      await new Promise((resolve) => setTimeout(resolve, 250));
      verdict = await send(gateway, origin.url, token);
    }
    say(`      after ${seconds(started)}: ${verdict.line}: new requests are refused`);
  } finally {
    await gateway.close();
    origin.close();
  }
}
