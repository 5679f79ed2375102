import { describe, expect, it } from "vitest";
import { formatDollars, proratedCents, quoteReplacement, remainingTermDays } from "../../contract/pricing";

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2025, 2, 10, 12);

describe("pricing: the one copy of the API's charging rules", () => {
  it("counts the days left in a term in whole days, a part-day as a day, between 1 and 30", () => {
    expect(remainingTermDays(NOW + 18.5 * DAY_MS, NOW)).toBe(19);
    expect(remainingTermDays(NOW + 19 * DAY_MS, NOW)).toBe(19);
    expect(remainingTermDays(NOW + 1, NOW)).toBe(1);
    expect(remainingTermDays(NOW - DAY_MS, NOW)).toBe(1);
    expect(remainingTermDays(NOW + 45 * DAY_MS, NOW)).toBe(30);
  });

  it("prorates a term's price over the days left, rounded up to the cent", () => {
    expect(proratedCents("isp", 19)).toBe(190);
    expect(proratedCents("dedicated", 19)).toBe(317);
    expect(proratedCents("dedicated", 1)).toBe(17);
    expect(proratedCents("isp", 30)).toBe(300);
  });

  it("makes the first two replacements of a month free and charges the third", () => {
    const allocation = { product: "dedicated" as const, renewsAtMs: NOW + 18.5 * DAY_MS };
    expect(quoteReplacement({ ...allocation, replacementsThisMonth: 1 }, NOW)).toEqual({
      chargeCents: 0,
      free: true,
      remainingTermDays: 19,
    });
    expect(quoteReplacement({ ...allocation, replacementsThisMonth: 2 }, NOW)).toEqual({
      chargeCents: 317,
      free: false,
      remainingTermDays: 19,
    });
  });

  it("writes cents as dollars", () => {
    expect(formatDollars(617)).toBe("$6.17");
    expect(formatDollars(5)).toBe("$0.05");
    expect(formatDollars(0)).toBe("$0.00");
  });
});
