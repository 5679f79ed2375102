// Written by `pulumi-proxy policy init`: the rules and their defaults live in pulumi-proxy/policy.
require("pulumi-proxy/policy").proxyPolicyPack();
