import { z } from "zod";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";
import { ProxyUserRecord } from "./records";

export const getProxyUsers = describeFunction({
  name: "getProxyUsers",
  description: "Every proxy user the key can see, optionally only the enabled or the disabled ones.",
  action: "list proxy users",
  inputs: {
    enabled: z.boolean().optional().describe("Only users enabled (true) or disabled (false); default all."),
  },
  outputs: {
    proxyUsers: z.array(ProxyUserRecord).describe("The proxy users, in the API's order."),
  },
  operations: ["listProxyUsers"],
  example: { enabled: true },
  async call(client, { enabled }) {
    const proxyUsers: z.input<typeof ProxyUserRecord>[] = [];
    const query = enabled === undefined ? {} : { enabled: enabled ? ("true" as const) : ("false" as const) };
    for await (const user of client.proxyUsers.list({ limit: 200, ...query })) proxyUsers.push(camelized(user));
    return { proxyUsers };
  },
});
