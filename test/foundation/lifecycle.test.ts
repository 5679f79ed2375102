import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestStack, type TestStack } from "../support/pulumi";

/** The smallest dynamic resource that still exercises create, diff, update and delete in the provider process. */
const echoProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: `echo-${inputs.label}`, outs: { label: inputs.label, version: 1 } };
  },
  async diff(_id, olds, news) {
    return { changes: olds.label !== news.label };
  },
  async update(_id, olds, news) {
    return { outs: { label: news.label, version: olds.version + 1 } };
  },
  async delete() {},
};

class Echo extends pulumi.dynamic.Resource {
  declare readonly version: pulumi.Output<number>;
  constructor(name: string, label: string) {
    super(echoProvider, name, { label, version: undefined }, {});
  }
}

describe("a dynamic resource through the real engine", () => {
  let label = "first";
  let harness: TestStack;

  beforeAll(async () => {
    harness = await createTestStack({
      program: async () => {
        const echo = new Echo("echo", label);
        return { version: echo.version };
      },
    });
  });
  afterAll(() => harness?.cleanup());

  it("creates, previews clean, updates in place, and destroys", async () => {
    const { stack } = harness;
    const created = await stack.up();
    expect(created.summary.resourceChanges).toMatchObject({ create: 2 });
    expect(created.outputs.version?.value).toBe(1);

    const clean = await stack.preview();
    expect(clean.changeSummary).toEqual({ same: 2 });

    label = "second";
    const updated = await stack.up();
    expect(updated.summary.resourceChanges).toMatchObject({ update: 1, same: 1 });
    expect(updated.outputs.version?.value).toBe(2);

    const destroyed = await stack.destroy();
    expect(destroyed.summary.resourceChanges).toMatchObject({ delete: 2 });
  });
});
