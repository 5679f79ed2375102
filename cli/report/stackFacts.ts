import type { Deployment, Stack } from "@pulumi/pulumi/automation";
import { kindOfType } from "../../provider/kinds";
import type { ProxyClient } from "../../sdk";
import { coverageOf, type Walked, walkedFrom } from "../coverage/report";
import { detectDrift } from "../drift/detect";
import { describeFailure } from "../stack";
import { type AccountData, isReadable } from "./collect";
import type { StackFacts } from "./model";

/** When each object the stack rotates on a schedule (a key's `rotateAfterDays`) is due, by id, as its kind reads it. */
function rotationsOf(deployment: Deployment): Map<string, string> {
  const rotations = new Map<string, string>();
  const resources = (deployment.deployment?.resources ?? []) as {
    type: string;
    id?: string;
    outputs?: Record<string, unknown>;
  }[];
  for (const { type, id, outputs = {} } of resources) {
    const due = id
      ? kindOfType(type)
          ?.deadlines?.(outputs)
          .find((deadline) => deadline.event === "rotation")
      : undefined;
    if (id && due) rotations.set(id, due.at.toISOString());
  }
  return rotations;
}

/**
 * Coverage from the lists the report already read (no second walk), and drift from the engine's
 * `preview --refresh`. A drift check that cannot run is a note in the report, not a failed report.
 */
export async function stackFacts(
  name: string,
  stack: Stack,
  deployment: Deployment,
  client: ProxyClient,
  data: AccountData,
  credentialHint: string,
  checkDrift: boolean,
): Promise<StackFacts> {
  const listed = new Map<string, Walked>();
  const add = (kind: string, items: object[] | { unreadable: string } | undefined, requests = 0) => {
    if (items !== undefined && isReadable(items)) listed.set(kind, walkedFrom(items, requests));
  };
  add("ProxyUser", data.users, data.listRequests.proxyUsers);
  add("ApiKey", data.keys, data.listRequests.keys);
  add("IpAllocation", data.ips, data.listRequests.ips);
  const coverage = await coverageOf(name, client, deployment, credentialHint, listed);
  let drift: StackFacts["drift"] = { unreadable: "drift was not checked (pulumi-proxy report --stack checks it)" };
  if (checkDrift)
    try {
      drift = (await detectDrift(stack)).drifted;
    } catch (error) {
      drift = { unreadable: `the drift check failed: ${describeFailure(error, { stack: name, cwd: "" })}` };
    }
  return { name, coverage, drift, rotations: rotationsOf(deployment) };
}
