import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { customerUsers, ProxyUser } from "pulumi-proxy";

/**
 * One customer's proxy users, read from the fleet's users file. `pulumi-proxy fleet up` sets both
 * values in each stack's config; a stack run by hand (`pulumi up --stack <customer>`) reads the same.
 */
const config = new pulumi.Config();
const customer = config.get("customer") ?? pulumi.getStack();
const usersFile = path.resolve(config.get("usersFile") ?? "users.csv");

const users = customerUsers(usersFile, customer);
for (const user of users) {
  new ProxyUser(user.name, {
    name: user.name,
    limits: { dailyGb: user.dailyGb ?? null, monthlyGb: user.monthlyGb ?? null },
    enabled: user.enabled ?? true,
  });
}

export const userCount = users.length;
