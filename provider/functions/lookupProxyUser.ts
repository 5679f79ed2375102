import { ProxyUserName } from "../../contract";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";
import { ProxyUserRecord } from "./records";

export const lookupProxyUser = describeFunction({
  name: "lookupProxyUser",
  description: "An existing proxy user by its name, for example to adopt it (`adoptId` takes its `id`).",
  action: "look up a proxy user",
  inputs: { name: ProxyUserName.describe("The proxy user's name.") },
  outputs: ProxyUserRecord.shape,
  operations: ["listProxyUsers"],
  example: { name: "scraper" },
  async call(client, { name }, account) {
    for await (const user of client.proxyUsers.list({ limit: 200 })) {
      if (user.name === name) return camelized(user);
    }
    throw new Error(
      `no proxy user is named ${JSON.stringify(name)} on ${account.description}. Check the name, or create it with a ProxyUser resource.`,
    );
  },
});
