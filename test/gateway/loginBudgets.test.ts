import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { absoluteRequest, basic, firstAnswerLength, type GatewayFixture, gatewayFixture, statusOf } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** A raw keep-alive connection from a chosen loopback address: each request's status once its answer is in. */
async function keepAlive(gatewayUrl: string, localAddress: string) {
  const { hostname, port } = new URL(gatewayUrl);
  const socket: Socket = connect({ host: hostname, port: Number(port), localAddress });
  await new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.on("error", () => {});
  let received = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    waiting?.();
  });
  socket.on("close", () => waiting?.());
  return {
    async ask(request: string): Promise<number | "closed"> {
      socket.write(request);
      for (;;) {
        const length = firstAnswerLength(received);
        if (length !== undefined) {
          const status = statusOf(received);
          received = received.subarray(length);
          return status;
        }
        if (socket.destroyed) return "closed";
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
      }
    },
    close: () => socket.destroy(),
  };
}

/** One request on a new connection from `localAddress`; the status of its answer. */
async function once(gatewayUrl: string, localAddress: string, request: string): Promise<number | "closed"> {
  const connection = await keepAlive(gatewayUrl, localAddress);
  try {
    return await connection.ask(request);
  } finally {
    connection.close();
  }
}

describe("failed-login budgets under a flood", () => {
  it("keeps a username's budget for the whole minute, whatever flood of others' failures follows", async () => {
    // The username's budget at 20, as the probe found it.
    const clock = new ManualClock(Date.UTC(2025, 0, 1, 12));
    fixture = await gatewayFixture({ clock, gateway: { failedLogins: { perUsername: 20 } } });
    const { origin, user, server } = fixture;
    const target = `${origin.url}/hello`;
    const guess = (i: number) => absoluteRequest("GET", target, basic(user.username, `guess-${i}`));
    const statuses: (number | "closed")[] = [];
    for (let i = 0; i < 21; i++) statuses.push(await once(server.gatewayUrl, "127.0.1.1", guess(i)));
    expect(statuses).toEqual([...Array(20).fill(407), 429]);

    // 5 100 failures for other names, each from an address of its own (two new budgets each), 20 at a time.
    let next = 0;
    const flood = async () => {
      for (let i = next++; i < 5100; i = next++) {
        const address = `127.0.${10 + Math.floor(i / 250)}.${1 + (i % 250)}`;
        await once(server.gatewayUrl, address, absoluteRequest("GET", target, basic(`junk-${i}`, "x")));
      }
    };
    await Promise.all(Array.from({ length: 20 }, flood));

    // Still the same minute: the right password from a fresh address is refused, like every guess.
    const right = absoluteRequest("GET", target, basic(user.username, user.password));
    expect(await once(server.gatewayUrl, "127.0.3.1", right)).toBe(429);
    expect(await once(server.gatewayUrl, "127.0.3.2", guess(1000))).toBe(429);
    clock.advance(60_000);
    expect(await once(server.gatewayUrl, "127.0.3.1", right)).toBe(200);
  }, 60_000);
});

describe("lockout", () => {
  it("keeps a connection that proved the password usable, and charges a guesser's address before the username", async () => {
    fixture = await gatewayFixture({ clock: new ManualClock(Date.UTC(2025, 0, 1, 12)) });
    const { origin, user, server, api } = fixture;
    const request = (username: string, password: string) =>
      absoluteRequest("GET", `${origin.url}/hello`, basic(username, password));
    const right = request(user.username, user.password);
    const owner = await keepAlive(server.gatewayUrl, "127.0.0.1");
    expect(await owner.ask(right)).toBe(200);

    // One guesser at one address: 20 guesses, then its own pair budget refuses it.
    const guesses: (number | "closed")[] = [];
    for (let i = 0; i < 21; i++)
      guesses.push(await once(server.gatewayUrl, "127.0.5.1", request(user.username, `g${i}`)));
    expect(guesses).toEqual([...Array(20).fill(407), 429]);
    expect(await once(server.gatewayUrl, "127.0.5.1", right)).toBe(429);
    // The owner, elsewhere, is not locked out: neither its open connection nor a new one.
    expect(await owner.ask(right)).toBe(200);
    expect(await once(server.gatewayUrl, "127.0.0.1", right)).toBe(200);

    // Guessers at four more addresses use up the username's budget: new logins wait for the minute,
    // the connection that proved the password goes on.
    for (let address = 2; address <= 5; address++)
      for (let i = 0; i < 20; i++) await once(server.gatewayUrl, `127.0.5.${address}`, request(user.username, `h${i}`));
    expect(await once(server.gatewayUrl, "127.0.0.1", right)).toBe(429);
    expect(await owner.ask(right)).toBe(200);

    // 200 failures from an address shared with another user: new logins from it are refused, its
    // proven connection is not.
    const other = await api.proxyUsers.create({ name: "other" });
    const otherRight = request("other", other.password);
    const neighbour = await keepAlive(server.gatewayUrl, "127.0.6.1");
    expect(await neighbour.ask(otherRight)).toBe(200);
    for (let i = 0; i < 200; i++) await once(server.gatewayUrl, "127.0.6.1", request(`spray-${i}`, "x"));
    expect(await once(server.gatewayUrl, "127.0.6.1", otherRight)).toBe(429);
    expect(await neighbour.ask(otherRight)).toBe(200);
    owner.close();
    neighbour.close();
  }, 30_000);
});
