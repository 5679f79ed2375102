import { describe, expect, it } from "vitest";
import type { AccountData } from "../../cli/report/collect";
import { renderHtml } from "../../cli/report/html";
import { renderMarkdown } from "../../cli/report/markdown";
import { buildReport, type StackFacts } from "../../cli/report/model";

const KEY = {
  id: "key_abcdefgh",
  name: "deployer",
  scopes: ["keys:write"],
  created_at: "2030-01-01T00:00:00.000Z",
  expires_at: null,
  last_rotated_at: null,
  previous_secret_expires_at: null,
  secret_hint: "wxyz",
};

/** The --stack part of the pages: coverage per kind and drift, as pictures and as tables. */
describe("the report's stack section", () => {
  const data: AccountData = {
    asOf: "2030-03-20",
    users: [],
    keys: [KEY],
    charges: [],
    balance: { balance_cents: 1234, currency: "usd" },
    usage: { usage: [], totals: { bytes: 0, requests: 0 } },
    requests: 5,
    listRequests: { proxyUsers: 1, keys: 1, charges: 1 },
  };
  const stack: StackFacts = {
    name: "prod",
    coverage: {
      stack: "prod",
      percent: 50,
      kinds: [
        {
          type: "ProxyUser",
          token: "proxy:index:ProxyUser",
          total: 4,
          managed: 2,
          unmanaged: [],
          goneFromAccount: [],
          listRequests: 1,
        },
      ],
      findings: [{ id: KEY.id, name: KEY.name, scopes: KEY.scopes }],
    },
    drift: [
      {
        urn: "urn:pulumi:prod::p::proxy:index:ProxyUser::scraper",
        name: "scraper",
        type: "proxy:index:ProxyUser",
        kind: "changed",
        properties: [{ path: "limits.monthlyGb", recorded: 100, actual: 250 }],
      },
      {
        urn: "urn:pulumi:prod::p::proxy:index:ApiKey::ci",
        name: "ci",
        type: "proxy:index:ApiKey",
        kind: "deleted",
        properties: [],
      },
    ],
    rotations: new Map([[KEY.id, "2030-03-25T00:00:00.000Z"]]),
  };
  const report = buildReport(data, {
    apiUrl: "https://api.example.com",
    nowMs: Date.parse("2030-03-20T12:00:00Z"),
    rotateEveryDays: 90,
    stack,
  });

  it("draws coverage and drift and names the drifted properties", () => {
    const html = renderHtml(report);
    expect(html.match(/data-series="managed"/g)).toHaveLength(1);
    expect(html.match(/data-series="drift-changed"/g)).toHaveLength(1);
    expect(html.match(/data-series="drift-deleted"/g)).toHaveLength(1);
    expect(html).toContain("<td>scraper</td><td>limits.monthlyGb</td>");
    expect(html).toContain("Unmanaged keys that can spend or mint keys: deployer (key_abcdefgh)");
  });

  it("takes a managed key's rotation date from the stack, and says so", () => {
    expect(report.keys).toEqual([
      expect.objectContaining({
        rotationDueAt: "2030-03-25T00:00:00.000Z",
        rotationSchedule: "stack",
        status: "due-soon",
        powerful: true,
      }),
    ]);
    const markdown = renderMarkdown(report);
    expect(markdown).toContain("| scraper | limits.monthlyGb |");
    expect(markdown).toContain("| ci | deleted |");
    expect(markdown).toContain("2030-03-25 (stack)");
    expect(markdown).not.toContain("wxyz");
  });
});
