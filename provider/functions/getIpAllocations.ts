import { z } from "zod";
import { CityName, CountryCode } from "../../contract";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";
import { IpAllocationRecord, Product } from "./records";

export const getIpAllocations = describeFunction({
  name: "getIpAllocations",
  description: "Every allocated address the key can see, optionally of one product, country or city.",
  action: "list allocations",
  inputs: {
    product: Product.optional(),
    country: CountryCode.optional().describe("Only addresses in this country (two lowercase letters)."),
    city: CityName.optional().describe("Only addresses in this city (lowercase)."),
  },
  outputs: {
    ipAllocations: z.array(IpAllocationRecord).describe("The allocations, in the API's order."),
  },
  operations: ["listIps"],
  example: { product: "isp", country: "us" },
  async call(client, filters) {
    const ipAllocations: z.input<typeof IpAllocationRecord>[] = [];
    for await (const allocation of client.ips.list({ limit: 200, ...filters })) {
      ipAllocations.push(camelized(allocation));
    }
    return { ipAllocations };
  },
});
