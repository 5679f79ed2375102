import { connect } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { parseCli } from "../../server/cli";
import { isLoopbackAddress, isLoopbackHost } from "../../server/console/access";

/** The console's doors, without a browser (test/browser covers what the page shows). */
describe("the reference server's console", () => {
  let server: ReferenceServer;
  let quiet: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer();
    quiet = await startReferenceServer({ console: false });
  });
  afterAll(async () => {
    await server?.close();
    await quiet?.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) => request(url, { headers });

  it("serves its page at / with an HttpOnly console cookie and a strict content policy", async () => {
    const page = await get(`${server.url}/`);
    expect(page.statusCode).toBe(200);
    expect(page.headers["set-cookie"]).toMatch(/^proxy_console=[\w-]{20,}; HttpOnly; SameSite=Strict; Path=\/console$/);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    const html = await page.body.text();
    expect(html).not.toContain(server.rootKey);
  });

  it("streams only with its cookie, only to a loopback Host, and the cookie opens no API route", async () => {
    const cookie = String((await get(`${server.url}/`)).headers["set-cookie"]).split(";")[0] ?? "";
    const refused = await get(`${server.url}/console/events`);
    expect(refused.statusCode).toBe(403);
    expect(await refused.body.text()).toContain("no console token");
    const rebound = await get(`${server.url}/console/events`, { cookie, host: "evil.example" });
    expect(rebound.statusCode).toBe(403);
    const api = await get(`${server.url}/v1/proxy-users`, { cookie });
    expect(api.statusCode).toBe(401);

    const events = await get(`${server.url}/console/events`, { cookie });
    expect(events.statusCode).toBe(200);
    expect(events.headers["content-type"]).toBe("text/event-stream");
    const reader = events.body[Symbol.asyncIterator]();
    let text = "";
    while (!text.includes("event: state")) text += String((await reader.next()).value);
    expect(text).toContain("event: objects");
    expect(text).not.toContain(server.rootKey);
    await events.body.destroy();
  });

  it("is off with console: false or --no-console, and / is the API's 404 again", async () => {
    expect(quiet.consoleUrl).toBeUndefined();
    const answer = await get(`${quiet.url}/`, { authorization: `Bearer ${quiet.rootKey}` });
    expect(answer.statusCode).toBe(404);
    expect(((await answer.body.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect(parseCli(["--no-console"])).toMatchObject({ console: false });
  });

  it("knows loopback addresses and host names", () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
      expect(isLoopbackAddress(address)).toBe(true);
    for (const address of ["10.0.0.1", "::ffff:192.168.1.2", "0.0.0.0", undefined])
      expect(isLoopbackAddress(address)).toBe(false);
    for (const host of ["127.0.0.1:8787", "localhost:1", "[::1]:8787", "[::1]", "LocalHost", "[::ffff:127.0.0.1]:1"])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["evil.example", "127.0.0.1.evil.example:80", undefined])
      expect(isLoopbackHost(host)).toBe(false);
  });

  it("refuses a Host that only starts with a loopback name, over a raw socket", async () => {
    const cookie = String((await get(`${server.url}/`)).headers["set-cookie"]).split(";")[0] ?? "";
    const { hostname, port } = new URL(server.url);
    const raw = (host: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port) });
        let answer = "";
        socket.setEncoding("latin1");
        socket.on("data", (chunk: string) => {
          answer += chunk;
          // The status line and the first line of the body are enough.
          if (/\r\n\r\n.+\n/s.test(answer)) socket.destroy();
        });
        socket.on("close", () => resolve(answer));
        socket.on("error", reject);
        socket.write(`GET /console/events HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\n\r\n`);
      });
    const hostile = [
      "[::1].attacker.example",
      "[::1]@attacker.example",
      "[::1]x",
      "[::1]:80.attacker.example",
      "[127.0.0.1]",
      "localhost:80@attacker.example",
      "127.0.0.1:8080:80",
    ];
    for (const host of hostile) {
      const answer = await raw(host);
      expect(answer, host).toMatch(/^HTTP\/1\.1 403 /);
      expect(answer, host).toContain("the console answers only to a loopback host name");
    }
    expect(await raw(`${hostname}:${port}`)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw(`localhost:${port}`)).toMatch(/^HTTP\/1\.1 200 /);
  });
});
