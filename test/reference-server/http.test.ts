import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES } from "../../server";
import { type Api, expectError, startApi } from "./harness";

describe("HTTP framing", () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ rateLimitPerMinute: 10_000 });
  });
  afterAll(() => api.server.close());

  it("answers unknown routes with a JSON 404 and wrong methods with a JSON 405 and allow", async () => {
    expectError(await api.get("/v1/nothing-here"), 404, "not_found");
    expectError(await api.get("/v1/proxy-users/"), 404, "not_found");
    expectError(await api.get("/index.html"), 404, "not_found");
    const wrong = await api.call("PUT", "/v1/proxy-users");
    expectError(wrong, 405, "method_not_allowed");
    expect(wrong.headers.allow).toBe("GET, POST");
    expect(wrong.json.error.details.allowed_methods).toEqual(["GET", "POST"]);
    const wrongWithId = await api.call("POST", "/v1/keys/key_abcdefgh");
    expectError(wrongWithId, 405, "method_not_allowed");
    expect(wrongWithId.headers.allow).toBe("GET, DELETE");
  });

  it("refuses bodies over 64 KiB with 413, whether declared up front or not", async () => {
    const tooBig = JSON.stringify({ name: "x", pad: "y".repeat(BODY_LIMIT_BYTES) });
    expectError(await api.call("POST", "/v1/proxy-users", { rawBody: tooBig }), 413, "payload_too_large");
    const response = await request(`${api.server.url}/v1/proxy-users`, {
      method: "POST",
      headers: { authorization: `Bearer ${api.server.rootKey}`, "content-type": "application/json" },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 20; i++) yield Buffer.alloc(8192, 0x20);
        })(),
      ),
    });
    expect(response.statusCode).toBe(413);
    expect(((await response.body.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const justUnder = JSON.stringify({ name: "fits" }).padEnd(BODY_LIMIT_BYTES, " ");
    expect((await api.call("POST", "/v1/proxy-users", { rawBody: justUnder })).status).toBe(201);
  });

  it("refuses a non-JSON content type with 415 and malformed JSON with 400", async () => {
    expectError(
      await api.call("POST", "/v1/proxy-users", {
        rawBody: "name=x",
        contentType: "application/x-www-form-urlencoded",
      }),
      415,
      "unsupported_media_type",
    );
    expectError(
      await api.call("POST", "/v1/proxy-users", { rawBody: '{"name":"x"}', contentType: "text/plain" }),
      415,
      "unsupported_media_type",
    );
    expect(
      (
        await api.call("POST", "/v1/proxy-users", {
          rawBody: '{"name":"charset"}',
          contentType: "application/json; charset=utf-8",
        })
      ).status,
    ).toBe(201);
    const malformed = await api.call("POST", "/v1/proxy-users", { rawBody: '{"name": ' });
    expectError(malformed, 400, "invalid_request");
    expect(malformed.json.error.details.issues).toEqual([{ path: "(body)", message: "is not valid JSON" }]);
  });

  it("puts a unique x-request-id on every answer, matching the error body", async () => {
    const answers = await Promise.all([
      api.get("/v1/proxy-users"),
      api.get("/v1/nope"),
      api.get("/v1/proxy-users", { key: null }),
    ]);
    const ids = answers.map((answer) => answer.headers["x-request-id"]);
    expect(new Set(ids).size).toBe(3);
  });

  it("counts requests by status and route, and can start the count again", async () => {
    api.server.resetStats();
    await api.get("/v1/proxy-users");
    await api.get("/v1/proxy-users", { key: null });
    await api.get("/v1/nope");
    expect(api.server.stats()).toEqual({
      requests: 3,
      byStatus: { "200": 1, "401": 1, "404": 1 },
      rateLimited: 0,
      byRoute: { "GET /v1/proxy-users": 2, unmatched: 1 },
    });
  });
});

describe("request log", () => {
  it("logs one line per request without any secret", async () => {
    const lines: string[] = [];
    const api = await startApi({ log: (line) => lines.push(line) });
    try {
      const key = await api.post("/v1/keys", { name: "k", scopes: ["usage:read"] });
      await api.get(`/v1/keys/${key.json.secret}`);
      await api.get("/v1/proxy-users", { key: key.json.secret });
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^req_\S+ POST \/v1\/keys 201 [\d.]+ms key_/);
      for (const line of lines) {
        expect(line).not.toContain(key.json.secret);
        expect(line).not.toContain(api.server.rootKey);
      }
    } finally {
      await api.server.close();
    }
  });
});
