import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type RawAnswer, rawRequest } from "./rawHttp";

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => server.close());

function post(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return rawRequest(
    server.url,
    "POST",
    path,
    {
      authorization: `Bearer ${server.rootKey}`,
      "content-type": "application/json",
      ...headers,
    },
    body,
  );
}

/** Bytes of a JSON body, with `raw` (bytes that need not be UTF-8) spliced in where `@` stands. */
function jsonWith(template: string, raw: number[]): Buffer {
  const [before = "", after = ""] = template.split("@");
  return Buffer.concat([Buffer.from(before), Buffer.from(raw), Buffer.from(after)]);
}

function expectInvalid(answer: RawAnswer, path: string, message: RegExp): void {
  expect({ status: answer.status, code: answer.json?.error?.code }, JSON.stringify(answer.json)).toEqual({
    status: 400,
    code: "invalid_request",
  });
  expect(answer.json.error.details.issues[0].path).toBe(path);
  expect(answer.json.error.details.issues[0].message).toMatch(message);
}

describe("a body nested thousands deep", () => {
  const deep = (levels: number) => Buffer.from(`${'{"name":'.repeat(levels)}"x"${"}".repeat(levels)}`);

  it("is a 400 naming the bound, with an idempotency key as without: nothing can succeed on a retry", async () => {
    const body = deep(5000);
    expect(body.length).toBeGreaterThan(10_000);
    for (const headers of [{ "idempotency-key": "deep-1" }, {}] as Record<string, string>[]) {
      const answer = await post("/v1/proxy-users", body, headers);
      expectInvalid(answer, "(body)", /deeper than 32 levels/);
    }
    // Arrays recurse the same way in the fingerprint.
    const arrays = Buffer.from(`${"[".repeat(5000)}${"]".repeat(5000)}`);
    expectInvalid(await post("/v1/keys", arrays, { "idempotency-key": "deep-2" }), "(body)", /deeper/);
  });

  it("leaves an ordinary body with an idempotency key alone", async () => {
    const body = Buffer.from(JSON.stringify({ name: "shallow", limits: { daily_gb: 1 } }));
    const first = await post("/v1/proxy-users", body, { "idempotency-key": "shallow-1" });
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    const again = await post("/v1/proxy-users", body, { "idempotency-key": "shallow-1" });
    expect(again.headers["idempotent-replayed"]).toBe("true");
  });
});

describe("a body that is not valid UTF-8", () => {
  const keysBefore = async () =>
    (await rawRequest(server.url, "GET", "/v1/keys?limit=200", { authorization: `Bearer ${server.rootKey}` })).json.keys
      .length;

  it("is a 400 naming the field that holds the bad bytes, and stores nothing", async () => {
    const count = await keysBefore();
    // A lone continuation byte, an overlong slash, an encoded surrogate, a sequence cut short.
    for (const bad of [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const answer = await post("/v1/keys", jsonWith('{"name":"ro@ot","scopes":["usage:read"]}', bad));
      expectInvalid(answer, "name", /not valid UTF-8/);
    }
    expectInvalid(
      await post("/v1/keys", jsonWith('{"name":"reader","scopes":["usage:read@"]}', [0xff])),
      "scopes.0",
      /not valid UTF-8/,
    );
    expectInvalid(
      await post("/v1/proxy-users", jsonWith('{"name":"crawler","limits":{"dai@ly_gb":1}}', [0xfe])),
      "limits",
      /field name that is not valid UTF-8/,
    );
    expectInvalid(
      await post("/v1/keys", jsonWith('{"name":"r@","scopes":["usage:read"]}', [0xf0, 0x9f]), {
        "idempotency-key": "utf8-1",
      }),
      "name",
      /not valid UTF-8/,
    );
    expect(await keysBefore()).toBe(count);
  });

  it("accepts a replacement character the client really sent, and multi-byte names as they are", async () => {
    const answer = await post(
      "/v1/keys",
      Buffer.from(JSON.stringify({ name: "ro\uFFFDot ключ 🔑", scopes: ["usage:read"] })),
    );
    expect(answer.status, JSON.stringify(answer.json)).toBe(201);
    expect(answer.json.name).toBe("ro\uFFFDot ключ 🔑");
  });
});
