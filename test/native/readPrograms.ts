/**
 * One program per language that calls every function of the plugin, with the same flat outputs, so
 * test/native/functions.test.ts checks them alike. Each reads its config: `lookupName` (the user to
 * look up), `address` (the allocation to look up), `today` (`YYYY-MM-DD`), and declares a user of its
 * own, `fresh-<language>`, whose username is unknown at preview and feeds a lookup.
 */

export const YAML_PROGRAM = (name: string) => `name: ${name}
runtime: yaml
config:
  lookupName:
    type: string
  address:
    type: string
  today:
    type: string
resources:
  fresh:
    type: proxy:index:ProxyUser
    properties:
      name: fresh-yaml
variables:
  legacy:
    fn::invoke:
      function: proxy:index:lookupProxyUser
      arguments:
        name: \${lookupName}
  freshLookup:
    fn::invoke:
      function: proxy:index:lookupProxyUser
      arguments:
        name: \${fresh.username}
  usage:
    fn::invoke:
      function: proxy:index:getUsage
      arguments:
        from: \${today}
        to: \${today}
        proxyUserId: \${legacy.id}
  balance:
    fn::invoke:
      function: proxy:index:getBalance
      arguments: {}
  charges:
    fn::invoke:
      function: proxy:index:getCharges
      arguments:
        since: \${today}
  allocation:
    fn::invoke:
      function: proxy:index:lookupIpAllocation
      arguments:
        address: \${address}
  users:
    fn::invoke:
      function: proxy:index:getProxyUsers
      arguments:
        enabled: true
  allocations:
    fn::invoke:
      function: proxy:index:getIpAllocations
      arguments:
        product: isp
outputs:
  legacyId: \${legacy.id}
  freshId: \${fresh.proxyUserId}
  freshLookupId: \${freshLookup.id}
  usageBytes: \${usage.totals.bytes}
  usageRequests: \${usage.totals.requests}
  balanceCents: \${balance.balanceCents}
  chargesTotalCents: \${charges.totalCents}
  allocationId: \${allocation.id}
  users: \${users.proxyUsers}
  allocations: \${allocations.ipAllocations}
`;

/** Plain forms where the argument is known when the program runs, output forms where it is an output. */
export const PYTHON_PROGRAM = `import pulumi
import pulumi_proxy as proxy

config = pulumi.Config()
today = config.require("today")
legacy = proxy.lookup_proxy_user(name=config.require("lookupName"))
fresh = proxy.ProxyUser("fresh", name="fresh-python")
fresh_lookup = proxy.lookup_proxy_user_output(name=fresh.username)
usage = proxy.get_usage_output(from_=today, to=today, proxy_user_id=legacy.id)
balance = proxy.get_balance()
charges = proxy.get_charges_output(since=today)
allocation = proxy.lookup_ip_allocation(address=config.require("address"))
users = proxy.get_proxy_users(enabled=True)
allocations = proxy.get_ip_allocations_output(product="isp")

pulumi.export("legacyId", legacy.id)
pulumi.export("freshId", fresh.proxy_user_id)
pulumi.export("freshLookupId", fresh_lookup.id)
pulumi.export("usageBytes", usage.totals.bytes)
pulumi.export("usageRequests", usage.totals.requests)
pulumi.export("balanceCents", balance.balance_cents)
pulumi.export("chargesTotalCents", charges.total_cents)
pulumi.export("allocationId", allocation.id)
pulumi.export("users", [{"id": user.id, "name": user.name} for user in users.proxy_users])
pulumi.export("allocations", allocations.ip_allocations.apply(lambda found: [{"id": a.id} for a in found]))
`;

export const GO_PROGRAM = `package main

import (
\t"example.com/pulumi-proxy/sdk/go/proxy"
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
\tpulumi.Run(func(ctx *pulumi.Context) error {
\t\tcfg := config.New(ctx, "")
\t\ttoday := cfg.Require("today")
\t\tlegacy, err := proxy.LookupProxyUser(ctx, &proxy.LookupProxyUserArgs{Name: cfg.Require("lookupName")})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tfresh, err := proxy.NewProxyUser(ctx, "fresh", &proxy.ProxyUserArgs{Name: pulumi.String("fresh-go")})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tfreshLookup := proxy.LookupProxyUserOutput(ctx, proxy.LookupProxyUserOutputArgs{Name: fresh.Username})
\t\tusage := proxy.GetUsageOutput(ctx, proxy.GetUsageOutputArgs{
\t\t\tFrom: pulumi.String(today), To: pulumi.String(today), ProxyUserId: pulumi.String(legacy.Id),
\t\t})
\t\tbalance, err := proxy.GetBalance(ctx)
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tcharges, err := proxy.GetCharges(ctx, &proxy.GetChargesArgs{Since: pulumi.StringRef(today)})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tallocation, err := proxy.LookupIpAllocation(ctx, &proxy.LookupIpAllocationArgs{Address: cfg.Require("address")})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tusers, err := proxy.GetProxyUsers(ctx, &proxy.GetProxyUsersArgs{Enabled: pulumi.BoolRef(true)})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tallocations := proxy.GetIpAllocationsOutput(ctx, proxy.GetIpAllocationsOutputArgs{Product: proxy.ProductIsp})
\t\tnames := []map[string]string{}
\t\tfor _, user := range users.ProxyUsers {
\t\t\tnames = append(names, map[string]string{"id": user.Id, "name": user.Name})
\t\t}
\t\tctx.Export("legacyId", pulumi.String(legacy.Id))
\t\tctx.Export("freshId", fresh.ProxyUserId)
\t\tctx.Export("freshLookupId", freshLookup.Id())
\t\tctx.Export("usageBytes", usage.Totals().Bytes())
\t\tctx.Export("usageRequests", usage.Totals().Requests())
\t\tctx.Export("balanceCents", pulumi.Int(balance.BalanceCents))
\t\tctx.Export("chargesTotalCents", pulumi.Int(charges.TotalCents))
\t\tctx.Export("allocationId", pulumi.String(allocation.Id))
\t\tctx.Export("users", pulumi.ToMapArray(toAny(names)))
\t\tctx.Export("allocations", allocations.IpAllocations())
\t\treturn nil
\t})
}

func toAny(rows []map[string]string) []map[string]interface{} {
\tout := []map[string]interface{}{}
\tfor _, row := range rows {
\t\tconverted := map[string]interface{}{}
\t\tfor key, value := range row {
\t\t\tconverted[key] = value
\t\t}
\t\tout = append(out, converted)
\t}
\treturn out
}
`;

/** The native SDK as a Node program imports it: plain forms awaited, output forms on outputs. */
export const NODE_PROGRAM = `const pulumi = require("@pulumi/pulumi");
const proxy = require("pulumi-proxy/native");

async function main() {
  const config = new pulumi.Config();
  const today = config.require("today");
  const legacy = await proxy.lookupProxyUser({ name: config.require("lookupName") });
  const fresh = new proxy.ProxyUser("fresh", { name: "fresh-node" });
  const freshLookup = proxy.lookupProxyUserOutput({ name: fresh.username });
  const usage = proxy.getUsageOutput({ from: today, to: today, proxyUserId: legacy.id });
  const balance = await proxy.getBalance();
  const charges = proxy.getChargesOutput({ since: today });
  const allocation = await proxy.lookupIpAllocation({ address: config.require("address") });
  const users = await proxy.getProxyUsers({ enabled: true });
  const allocations = proxy.getIpAllocationsOutput({ product: "isp" });
  return {
    legacyId: legacy.id,
    freshId: fresh.proxyUserId,
    freshLookupId: freshLookup.id,
    usageBytes: usage.totals.bytes,
    usageRequests: usage.totals.requests,
    balanceCents: balance.balanceCents,
    chargesTotalCents: charges.totalCents,
    allocationId: allocation.id,
    users: users.proxyUsers.map((user) => ({ id: user.id, name: user.name })),
    allocations: allocations.ipAllocations.apply((found) => found.map((a) => ({ id: a.id }))),
  };
}

module.exports = main();
`;

/** Issue #32's program in Python: the failed lookup's only use is getUsage's argument. */
export const RUNAWAY_PYTHON = `import pulumi
import pulumi_proxy as proxy

missing = proxy.lookup_proxy_user_output(name="no-such-user-here")
pulumi.export("usage", proxy.get_usage_output(from_="2026-11-01", to="2026-11-02", proxy_user_id=missing.id))
`;
