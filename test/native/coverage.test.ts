import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CoverageJson } from "../../cli/coverage/command";
import type { ImportFile } from "../../cli/coverage/importFile";
import type { Report } from "../../cli/report/model";
import { LIST_LIMIT_MAX } from "../../contract/common";
import { type ProviderFixture, providerFixture } from "../support/fixture";
import { stackCommands } from "./commands";
import { runGenerated } from "./generated";

type Commands = ReturnType<typeof stackCommands>;

/** The program `pulumi import` generated: what the stack's program runs once it is there. */
let generatedProgram = "";

const COUNTS = { users: 200, keys: 90, allocations: 10 };

/** Runs `make(i)` for i < count, `width` at a time. */
async function inBatches<T>(count: number, width: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, offset) => make(start + offset));
    made.push(...(await Promise.all(batch)));
  }
  return made;
}

/** Each kind's `managed/total` as the text prints it. */
const countsInText = (text: string) =>
  [...text.matchAll(/^ {2}(\w+) +(\d+\/\d+) managed,/gm)].map((line) => [line[1], line[2]]);
/** The same counts from the JSON: one count, one rule. */
const countsInJson = (report: CoverageJson) => report.kinds.map((kind) => [kind.type, `${kind.managed}/${kind.total}`]);

describe("pulumi-proxy coverage, then pulumi import --file, on an account of 300 objects", () => {
  let fixture: ProviderFixture;
  let powerfulKeyId = "";
  let pulumiCli: Commands["pulumi"];
  let coverage: Commands["coverage"];

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      if (generatedProgram) runGenerated(generatedProgram);
    });
    ({ pulumi: pulumiCli, coverage } = stackCommands(fixture));
    await stackCommands(fixture).installPlugin();

    // Names that need cleaning and clash once cleaned: "Team A" and "team-a" both read as team-a.
    await inBatches(COUNTS.users, 25, (i) => fixture.api.proxyUsers.create({ name: i === 1 ? "team-a" : `user-${i}` }));
    const keys = await inBatches(COUNTS.keys, 25, (i) => {
      const scopes = i === 0 ? ["keys:write" as const] : ["usage:read" as const];
      return fixture.api.keys.create({ name: i === 1 ? "Team A" : `key ${i}`, scopes });
    });
    powerfulKeyId = keys[0]?.id ?? "";
    await inBatches(COUNTS.allocations, 10, () => fixture.api.ips.allocate({ product: "isp", country: "us" }));
  });
  afterAll(() => fixture?.cleanup());

  it("lists the unmanaged objects, the powerful key first, with a bounded number of list requests", async () => {
    fixture.server.resetStats();
    const file = path.join(fixture.tempDir, "import.json");
    const { code, stdout } = await coverage(["--import-file", file, "--json"]);
    const report = JSON.parse(stdout) as CoverageJson;
    expect(code).toBe(2);
    expect(report).toMatchObject({ version: 1, covered: false, percent: 0, credential: { name: "root" } });
    expect(report.findings.map((key) => key.id)).toEqual([powerfulKeyId]);
    expect(report.kinds.map((kind) => [kind.type, kind.total, kind.managed])).toEqual([
      ["ProxyUser", COUNTS.users, 0],
      ["ApiKey", COUNTS.keys, 0],
      ["IpAllocation", COUNTS.allocations, 0],
    ]);

    // ⌈n/200⌉ + 1 list requests per collection at most, and nothing else.
    const stats = fixture.server.stats();
    const bound = (n: number) => Math.ceil(n / LIST_LIMIT_MAX) + 1;
    expect(stats.byRoute["GET /v1/proxy-users"]).toBeLessThanOrEqual(bound(COUNTS.users));
    expect(stats.byRoute["GET /v1/keys"]).toBeLessThanOrEqual(bound(COUNTS.keys + 1));
    expect(stats.byRoute["GET /v1/ips"]).toBeLessThanOrEqual(bound(COUNTS.allocations));
    const listRequests = report.kinds.reduce((sum, kind) => sum + kind.listRequests, 0);
    expect(stats.requests).toBe(listRequests);

    const imports = JSON.parse(fs.readFileSync(file, "utf8")) as ImportFile;
    expect(imports.resources).toHaveLength(COUNTS.users + COUNTS.keys + COUNTS.allocations);
    const names = imports.resources.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(names).toEqual(expect.arrayContaining(["user-7", "team-a", "team-a-2", "key-5"]));
    expect(names.filter((name) => name.startsWith("ipallocation-"))).toHaveLength(COUNTS.allocations);
    expect(stdout).not.toContain(fixture.server.rootKey);
    // The stack's own key (the root key here) is in neither count, in the JSON as in the text.
    expect(countsInText((await coverage([])).stdout)).toEqual(countsInJson(report));

    // The report's --stack section counts the same, from the lists it read anyway: no second walk.
    fixture.server.resetStats();
    const reportText = await stackCommands(fixture).report(["--json"]);
    const withStack = JSON.parse(reportText) as Report;
    expect(withStack.stack).toMatchObject({ percent: 0, drift: [], findings: [{ id: powerfulKeyId }] });
    expect(withStack.stack?.kinds.map((kind) => [kind.type, kind.managed, kind.unmanaged])).toEqual([
      ["ProxyUser", 0, COUNTS.users],
      ["ApiKey", 0, COUNTS.keys],
      ["IpAllocation", 0, COUNTS.allocations],
    ]);
    const reportStats = fixture.server.stats();
    expect(reportStats.byRoute["GET /v1/proxy-users"]).toBeLessThanOrEqual(bound(COUNTS.users));
    expect(reportStats.byRoute["GET /v1/keys"]).toBeLessThanOrEqual(bound(COUNTS.keys + 1));
    expect(reportStats.byRoute["GET /v1/ips"]).toBeLessThanOrEqual(bound(COUNTS.allocations));
    expect(reportText).not.toContain(fixture.server.rootKey);
  });

  it("imports the file with code generation; the generated program previews no changes and coverage is 100 %", async () => {
    const file = path.join(fixture.tempDir, "import.json");
    const code = path.join(fixture.tempDir, "imported.ts");
    await pulumiCli(["import", "--file", file, "--skip-preview", "--yes", "--protect=false", "--out", code]);
    // The generated program declares every object with the inputs the import recorded.
    generatedProgram = fs.readFileSync(code, "utf8");
    expect(generatedProgram.match(/new proxy\.ProxyUser\(/g)).toHaveLength(COUNTS.users);
    expect(generatedProgram.match(/new proxy\.ApiKey\(/g)).toHaveLength(COUNTS.keys);
    expect(generatedProgram.match(/new proxy\.IpAllocation\(/g)).toHaveLength(COUNTS.allocations);
    // An allocation is imported with what it was made with, not left for the program to guess.
    expect(generatedProgram).toMatch(
      /new proxy\.IpAllocation\("ipallocation-[\d-]+", \{\s*city: "[a-z ]+",\s*country: "us",\s*product: proxy\.Product\.Isp,\s*\}\)/,
    );

    const imports = JSON.parse(fs.readFileSync(file, "utf8")) as ImportFile;
    const preview = await fixture.stack.preview({ expectNoChanges: true });
    expect(preview.changeSummary).toEqual({ same: imports.resources.length + 1 });

    const after = await coverage(["--json"]);
    const report = JSON.parse(after.stdout) as CoverageJson;
    expect(after.code).toBe(0);
    expect(report).toMatchObject({ covered: true, percent: 100, findings: [] });
    const text = (await coverage([])).stdout;
    expect(text).toMatch(/100 % of the account's objects are managed/);
    // The stack's own credential is neither managed nor counted: every count reads n/n.
    expect(text).toContain(`ApiKey        ${COUNTS.keys}/${COUNTS.keys} managed, 0 unmanaged`);
    expect(countsInText(text)).toEqual(countsInJson(report));
  });
});
