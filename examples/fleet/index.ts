import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { customerUsers, ProxyUser } from "pulumi-proxy";

/**
 * One customer's proxy users, read from the fleet's users file. `pulumi-proxy fleet up` sets both
 * values in each stack's config, in the namespace `fleet` whatever the project's name (so a copy of
 * this program in a project of another name still reads them); a stack run by hand
 * (`pulumi up --stack <customer>`) reads the same.
 */
const config = new pulumi.Config("fleet");
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
