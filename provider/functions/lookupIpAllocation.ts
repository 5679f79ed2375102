import { IpPathSegment } from "../../contract";
import { isNotFound } from "../../sdk";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";
import { IpAllocationRecord } from "./records";

export const lookupIpAllocation = describeFunction({
  name: "lookupIpAllocation",
  description: "An allocation by its current address or its allocation id, for example to adopt it.",
  action: "look up an allocation",
  inputs: { address: IpPathSegment.describe("The current IPv4 address, or the allocation id (alloc_…).") },
  outputs: IpAllocationRecord.shape,
  operations: ["getIp"],
  example: { address: "203.0.113.7" },
  async call(client, { address }, account) {
    try {
      return camelized(await client.ips.get(address));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      throw new Error(
        `${account.description} holds no allocation at ${address}. Check the address, or allocate one with an IpAllocation resource.`,
      );
    }
  },
});
