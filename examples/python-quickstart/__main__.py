"""One of each resource, as examples/quickstart declares them in TypeScript, on the native provider."""

import pulumi
import pulumi_proxy as proxy

config = pulumi.Config()
# Names are unique per account, so a prefix keeps several stacks on one account apart.
prefix = config.get("prefix") or "quickstart"
# Allocating an address is charged; set `allocateIp: false` to try the rest for free.
allocate_ip = config.get_bool("allocateIp")
if allocate_ip is None:
    allocate_ip = True

scraper = proxy.ProxyUser(
    "scraper",
    name=f"{prefix}-scraper",
    limits=proxy.ProxyUserLimitsArgs(daily_gb=5, monthly_gb=100),
)

reporting = proxy.ApiKey(
    "reporting",
    name=f"{prefix}-reporting",
    scopes=["usage:read"],
)

address = (
    proxy.IpAllocation("us-isp", product="isp", country="us", city="new york")
    if allocate_ip
    else None
)

pulumi.export(
    "proxyUser",
    {
        "id": scraper.proxy_user_id,
        "username": scraper.username,
        "limits": scraper.limits,
        "enabled": scraper.enabled,
    },
)
# Secret: `pulumi stack output proxyUserPassword --show-secrets` reveals it.
pulumi.export("proxyUserPassword", scraper.password)
pulumi.export(
    "apiKey",
    {
        "id": reporting.key_id,
        "name": reporting.name,
        "scopes": reporting.scopes,
        "secretHint": reporting.secret_hint,
    },
)
# Secret, shown once by the API and kept only in the (encrypted) stack state.
pulumi.export("apiKeySecret", reporting.secret)
if address is not None:
    pulumi.export(
        "ip",
        {
            "id": address.allocation_id,
            "ip": address.ip,
            "city": address.city,
            "asn": address.asn,
            "health": address.health,
        },
    )
