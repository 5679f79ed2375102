import { isDeepStrictEqual } from "node:util";
import { request } from "undici";
import { expect } from "vitest";
import { ErrorBody } from "../../contract/common";
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "../../server";
import { Router } from "../../server/routes";

export interface CallOptions {
  /** A secret, `null` for no authorization header, or a raw header value via `authorization`. */
  key?: string | null;
  authorization?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  json: any;
}

const router = new Router();

/**
 * Every answer is checked against the shared wire schemas: successes against the endpoint's response
 * schema (with no field beyond it), errors against the error body. A test cannot pass on a shape
 * the SDK would not parse.
 */
function checkWireShape(method: string, path: string, result: CallResult): void {
  expect(result.headers["x-request-id"]).toMatch(/^req_/);
  if (result.status >= 400) {
    expect(ErrorBody.safeParse(result.json).success, JSON.stringify(result.json)).toBe(true);
    expect(result.json.error.request_id).toBe(result.headers["x-request-id"]);
    return;
  }
  const match = router.find(method, path);
  if (!match) return;
  const endpoint = match.route.endpoint;
  expect(result.status).toBe(endpoint.status);
  if (endpoint.response) {
    const parsed = endpoint.response.safeParse(result.json);
    expect(parsed.success, `${method} ${path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    expect(isDeepStrictEqual(parsed.data, result.json), `${method} ${path} sent fields beyond its schema`).toBe(true);
  }
}

export class Api {
  constructor(readonly server: ReferenceServer) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.server.rootKey : options.key;
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    const response = await request(`${this.server.url}${path}`, { method: method as "GET", headers, body });
    const text = await response.body.text();
    const result: CallResult = {
      status: response.statusCode,
      headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
      json: text.length > 0 ? JSON.parse(text) : undefined,
    };
    checkWireShape(method, path, result);
    return result;
  }

  get(path: string, options?: CallOptions) {
    return this.call("GET", path, options);
  }
  post(path: string, body?: unknown, options?: CallOptions) {
    return this.call("POST", path, { ...options, body });
  }
  patch(path: string, body: unknown, options?: CallOptions) {
    return this.call("PATCH", path, { ...options, body });
  }
  delete(path: string, options?: CallOptions) {
    return this.call("DELETE", path, options);
  }

  /** A key with exactly these scopes, made the dashboard way. */
  key(scopes: string[], name = "test"): string {
    return this.server.control.createKey({ name, scopes }).secret;
  }

  async createUser(name: string, extra: Record<string, unknown> = {}): Promise<any> {
    const created = await this.post("/v1/proxy-users", { name, ...extra });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    return created.json;
  }

  async allocate(body: Record<string, unknown> = { product: "isp", country: "us" }): Promise<any> {
    const allocated = await this.post("/v1/ips", body);
    expect(allocated.status, JSON.stringify(allocated.json)).toBe(201);
    return allocated.json;
  }
}

export async function startApi(options: ReferenceServerOptions = {}): Promise<Api> {
  return new Api(await startReferenceServer(options));
}

export function expectError(result: CallResult, status: number, code: string): void {
  expect({ status: result.status, code: result.json?.error?.code }, JSON.stringify(result.json)).toEqual({
    status,
    code,
  });
}

/** 2025-03-10T12:00:00Z: mid-month, so tests can cross a month boundary on purpose. */
export const T0 = Date.UTC(2025, 2, 10, 12, 0, 0);
