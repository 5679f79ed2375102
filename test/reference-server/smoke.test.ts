import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api, startApi } from "./harness";

describe("smoke", () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.server.close());

  it("creates and reads a proxy user", async () => {
    const user = await api.createUser("alpha");
    const got = await api.get(`/v1/proxy-users/${user.id}`);
    expect(got.status).toBe(200);
    expect(got.json.name).toBe("alpha");
    expect(got.headers["x-ratelimit-limit"]).toBe("600");
  });
});
