import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENDPOINTS } from "../../contract/endpoints";
import { buildOpenApiDocument, renderOpenApiJson } from "../../docs/generate/openapi";

const committedPath = resolve(__dirname, "..", "..", "openapi.json");

function collectRefs(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, into);
  } else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") into.push(value);
      else collectRefs(value, into);
    }
  }
  return into;
}

describe("openapi.json", () => {
  it("is exactly what `npm run openapi` would generate now", () => {
    expect(readFileSync(committedPath, "utf8")).toBe(renderOpenApiJson());
  });

  it("describes every endpoint of the table, with its scopes, bearer security and resolvable refs", () => {
    const document = buildOpenApiDocument() as any;
    expect(document.openapi).toBe("3.1.0");
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    for (const endpoint of ENDPOINTS) {
      const operation = document.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
      expect(operation?.operationId, `${endpoint.method} ${endpoint.path}`).toBe(endpoint.operationId);
      expect(operation["x-required-scopes"]).toEqual(endpoint.scopes);
      expect(Object.keys(operation.responses)).toContain(String(endpoint.status));
      expect(operation.responses["429"]).toEqual({ $ref: "#/components/responses/Error429" });
    }
    expect(document.components.responses.Error429.headers["retry-after"]).toBeDefined();
    for (const ref of collectRefs(document)) {
      const target = ref
        .replace(/^#\//, "")
        .split("/")
        .reduce((node: any, part) => node?.[part], document);
      expect(target, ref).toBeDefined();
    }
  });

  it("takes request schemas as input (strict) and response schemas as output (open to new fields)", () => {
    const { components } = buildOpenApiDocument() as any;
    expect(components.schemas.CreateProxyUserBody.additionalProperties).toBe(false);
    expect(components.schemas.ProxyUser.additionalProperties).toBeUndefined();
    expect(components.schemas.ProxyUser.required).toContain("limits");
  });
});
