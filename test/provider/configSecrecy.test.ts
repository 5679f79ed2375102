import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { configSecrecy } from "../../provider/core/credentials";

/**
 * The plaintext-key refusal asks @pulumi/pulumi's runtime whether proxy:apiKey is a secret, through an
 * export its typings leave out. Without it the refusal must fail, never let every key through.
 */
describe("the plaintext-key refusal's dependency on @pulumi/pulumi", () => {
  it("finds isConfigSecret in the pinned @pulumi/pulumi", () => {
    expect(() => configSecrecy()).not.toThrow();
    expect(typeof (pulumi.runtime as unknown as Record<string, unknown>).isConfigSecret).toBe("function");
  });

  it("fails loudly, naming what is missing, on a runtime without it", () => {
    const { isConfigSecret: _dropped, ...withoutIt } = pulumi.runtime as unknown as Record<string, unknown>;
    expect(() => configSecrecy(withoutIt)).toThrow(
      /no runtime\.isConfigSecret, which the refusal of a plaintext proxy:apiKey needs/,
    );
  });
});
