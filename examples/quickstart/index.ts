import * as pulumi from "@pulumi/pulumi";
import { ApiKey, IpAllocation, ProxyUser } from "pulumi-proxy";

const config = new pulumi.Config();
// Names are unique per account, so a prefix keeps several stacks on one account apart.
const prefix = config.get("prefix") ?? "quickstart";
// Allocating an address is charged; set `allocateIp: false` to try the rest for free.
const allocateIp = config.getBoolean("allocateIp") ?? true;

const scraper = new ProxyUser("scraper", {
  name: `${prefix}-scraper`,
  limits: { dailyGb: 5, monthlyGb: 100 },
});

const reporting = new ApiKey("reporting", {
  name: `${prefix}-reporting`,
  scopes: ["usage:read"],
});

const address = allocateIp
  ? new IpAllocation("us-isp", { product: "isp", country: "us", city: "new york" })
  : undefined;

export const proxyUser = {
  id: scraper.proxyUserId,
  username: scraper.username,
  limits: scraper.limits,
  enabled: scraper.enabled,
};
/** Secret: `pulumi stack output proxyUserPassword --show-secrets` reveals it. */
export const proxyUserPassword = scraper.password;
export const apiKey = {
  id: reporting.keyId,
  name: reporting.name,
  scopes: reporting.scopes,
  secretHint: reporting.secretHint,
};
/** Secret, shown once by the API and kept only in the (encrypted) stack state. */
export const apiKeySecret = reporting.secret;
export const ip = address
  ? { id: address.allocationId, ip: address.ip, city: address.city, asn: address.asn, health: address.health }
  : undefined;
