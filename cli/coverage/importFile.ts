import type { Deployment } from "@pulumi/pulumi/automation";
import { kindOfType } from "../../provider/kinds";
import { KINDS } from "../../provider/native/kinds";
import type { CoverageReport, ImportEntry } from "./report";

/** How the engine spells a dynamic resource's type: `pulumi-nodejs:dynamic/proxy:ProxyUser`. */
const DYNAMIC_PREFIX = "pulumi-nodejs:dynamic/";

/** What `pulumi import --file` reads: https://www.pulumi.com/docs/iac/adopting-pulumi/import/#bulk-import-operations */
export interface ImportFile {
  resources: ImportEntry[];
}

/**
 * A resource name a person can read and a program can use as is: the object's name in lower case,
 * each run of other characters than a-z and 0-9 one hyphen, starting with a letter (an address
 * becomes `ipallocation-203-0-113-7`).
 */
export function readableName(objectName: string, type: string): string {
  const base = objectName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return /^[a-z]/.test(base) ? base : [type.toLowerCase(), base].filter(Boolean).join("-");
}

/**
 * The import file for every unmanaged object of the report. Names are unique across the file and
 * never one the stack's state already uses (`taken`): a clash gets `-2`, `-3`… in the account's order.
 */
export function importFileOf(report: CoverageReport, taken: Iterable<string>): ImportFile {
  const used = new Set(taken);
  const resources = report.kinds.flatMap((kind) =>
    kind.unmanaged.map((object) => {
      const base = readableName(object.name, kind.type);
      let name = base;
      for (let suffix = 2; used.has(name); suffix += 1) name = `${base}-${suffix}`;
      used.add(name);
      return { type: kind.token, name, id: object.id };
    }),
  );
  return { resources };
}

/**
 * The import file that moves the stack's dynamic resources to the native provider: each under its
 * own name and id, as the native type. The dynamic resources stay until `pulumi state delete`.
 */
export function movingFileOf(deployment: Deployment): ImportFile {
  const resources = (deployment.deployment?.resources ?? []) as { type: string; urn: string; id?: string }[];
  return {
    resources: resources.flatMap((resource) => {
      const kind = resource.type.startsWith(DYNAMIC_PREFIX) ? kindOfType(resource.type) : undefined;
      const native = KINDS.find((candidate) => candidate.declaration === kind);
      if (!native || !resource.id) return [];
      return [{ type: native.token, name: resource.urn.split("::").pop() ?? "", id: resource.id }];
    }),
  };
}
