// One of each resource, as examples/quickstart declares them in TypeScript, on the native provider.
package main

import (
	"example.com/pulumi-proxy/sdk/go/proxy"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		// Names are unique per account, so a prefix keeps several stacks on one account apart.
		prefix := cfg.Get("prefix")
		if prefix == "" {
			prefix = "quickstart"
		}
		scraper, err := proxy.NewProxyUser(ctx, "scraper", &proxy.ProxyUserArgs{
			Name:   pulumi.String(prefix + "-scraper"),
			Limits: &proxy.ProxyUserLimitsArgs{DailyGb: pulumi.Float64(5), MonthlyGb: pulumi.Float64(100)},
		})
		if err != nil {
			return err
		}
		reporting, err := proxy.NewApiKey(ctx, "reporting", &proxy.ApiKeyArgs{
			Name:   pulumi.String(prefix + "-reporting"),
			Scopes: proxy.ScopeArray{proxy.ScopeUsageRead},
		})
		if err != nil {
			return err
		}
		ctx.Export("proxyUserId", scraper.ProxyUserId)
		ctx.Export("username", scraper.Username)
		// Secret: `pulumi stack output proxyUserPassword --show-secrets` reveals it.
		ctx.Export("proxyUserPassword", scraper.Password)
		ctx.Export("apiKeyId", reporting.KeyId)
		// Secret, shown once by the API and kept only in the (encrypted) stack state.
		ctx.Export("apiKeySecret", reporting.Secret)
		// Allocating an address is charged; set `allocateIp: false` to try the rest for free.
		if cfg.Get("allocateIp") != "" && !cfg.RequireBool("allocateIp") {
			return nil
		}
		address, err := proxy.NewIpAllocation(ctx, "us-isp", &proxy.IpAllocationArgs{
			Product: proxy.ProductIsp, Country: pulumi.String("us"), City: pulumi.String("new york"),
		})
		if err != nil {
			return err
		}
		ctx.Export("ip", address.Ip)
		ctx.Export("ipHealth", address.Health)
		return nil
	})
}
