import { describe, expect, it, vi } from "vitest";
import { type CoalescerOptions, ReadCoalescer } from "../../provider/core/coalescer";
import type { Page } from "../../sdk";
import { errorFromResponse } from "../../sdk/core/errors";

interface Item {
  id: string;
  version: number;
}

/**
 * A list endpoint as the API has it: creation order, 200 per page, cursors that point after an item.
 * A page is "sent" when `send` lets it: the coalescer hears of it through `onSend`, as the SDK calls it, and
 * the page shows the objects as they are at that moment.
 */
class FakeCollection {
  readonly records = new Map<string, { seq: number; version: number }>();
  readonly calls = { pages: 0, gets: 0 };
  /** Every page answers this status instead, as the SDK throws it once its retries are spent. */
  failPages: 400 | 503 | undefined;
  /** Cursors carry the epoch they were issued in; `expireCursors` makes every earlier one unusable. */
  #epoch = 0;
  readonly failGets = new Set<string>();
  #seq = 0;
  #held: (() => void)[] = [];
  holdPages = false;
  /** Writes the provider process has finished; `create` stands for its creates. */
  writes = 0;
  readonly coalescer: ReadCoalescer<Item>;

  constructor(options: CoalescerOptions = {}) {
    this.coalescer = new ReadCoalescer<Item>(
      { page: (cursor, onSend) => this.#page(cursor, onSend), get: (id) => this.#get(id) },
      () => this.writes,
      options,
    );
  }

  create(count: number): string[] {
    return Array.from({ length: count }, () => {
      const id = `pu_${String(++this.#seq).padStart(6, "0")}`;
      this.records.set(id, { seq: this.#seq, version: 1 });
      this.writes += 1;
      return id;
    });
  }

  expireCursors(): void {
    this.#epoch += 1;
  }

  /** Sends the pages held so far. */
  send(): void {
    for (const release of this.#held.splice(0)) release();
  }

  get waitingPages(): number {
    return this.#held.length;
  }

  async #page(cursor: string | undefined, onSend: () => void): Promise<Page<Item>> {
    this.calls.pages += 1;
    if (this.holdPages) await new Promise<void>((resolve) => this.#held.push(resolve));
    onSend();
    if (this.failPages) throw listError(this.failPages, "the list failed");
    const [seq, epoch] = (cursor ?? `0.${this.#epoch}`).split(".").map(Number);
    if (epoch !== this.#epoch) throw listError(400, "cursor has expired");
    const after = seq!;
    const live = [...this.records.entries()].filter(([, record]) => record.seq > after);
    const items = live.slice(0, 200).map(([id, record]) => ({ id, version: record.version }));
    const more = live.length > 200;
    return { items, nextCursor: more ? `${this.records.get(items[items.length - 1]!.id)!.seq}.${this.#epoch}` : null };
  }

  async #get(id: string): Promise<Item> {
    this.calls.gets += 1;
    if (this.failGets.has(id)) throw new Error(`connection reset reading ${id}`);
    const record = this.records.get(id);
    if (!record) {
      const text = JSON.stringify({
        error: { code: "not_found", message: "No such proxy user.", request_id: "req_1" },
      });
      throw errorFromResponse({
        method: "GET",
        path: `/v1/proxy-users/${id}`,
        status: 404,
        text,
        requestId: "req_1",
        retryAfterSeconds: undefined,
      });
    }
    return { id, version: record.version };
  }
}

function listError(status: number, message: string) {
  const text = JSON.stringify({ error: { code: status === 400 ? "invalid_request" : "internal", message } });
  return errorFromResponse({
    method: "GET",
    path: "/v1/proxy-users",
    status,
    text,
    requestId: "req_2",
    retryAfterSeconds: undefined,
  });
}

describe("coalesced reads", () => {
  it("answer a burst of reads with one walk of the list", async () => {
    const api = new FakeCollection();
    const ids = api.create(450);
    const found = await Promise.all(ids.map((id) => api.coalescer.read(id)));
    expect(found.map((item) => item?.id)).toEqual(ids);
    expect(api.calls).toEqual({ pages: 3, gets: 0 });
  });

  it("make a lone read one GET", async () => {
    const api = new FakeCollection();
    const [id] = api.create(300);
    expect(await api.coalescer.read(id!)).toEqual({ id, version: 1 });
    expect(api.calls).toEqual({ pages: 0, gets: 1 });
  });

  it("never answer a read made after one of the process's writes from a page sent before that write", async () => {
    const api = new FakeCollection();
    const [first, second, changed] = api.create(3);
    api.holdPages = true;
    const early = Promise.all([api.coalescer.read(first!), api.coalescer.read(second!)]);
    await vi.waitFor(() => expect(api.waitingPages).toBe(1));
    api.send();
    await early;
    // The page has gone out. The process then updates `changed`: its read needs a newer page.
    api.records.get(changed!)!.version = 2;
    api.writes += 1;
    api.holdPages = false;
    expect(await api.coalescer.read(changed!)).toEqual({ id: changed, version: 2 });
    expect(api.calls).toEqual({ pages: 2, gets: 0 });
  });

  it("answer a refresh's reads, arriving eight at a time, with one walk, and a second pass from memory", async () => {
    const api = new FakeCollection();
    const ids = api.create(450);
    const readInEights = async () => {
      const found: (Item | undefined)[] = [];
      for (let i = 0; i < ids.length; i += 8) {
        found.push(...(await Promise.all(ids.slice(i, i + 8).map((id) => api.coalescer.read(id)))));
      }
      return found.map((item) => item?.id);
    };
    expect(await readInEights()).toEqual(ids);
    expect(api.calls).toEqual({ pages: 3, gets: 0 });
    expect(await readInEights()).toEqual(ids);
    expect(api.calls).toEqual({ pages: 3, gets: 0 });
    expect(api.coalescer.stats.remembered).toBe(2 * 450 - 3 * 8);
  });

  it("let a read requested while the page still waits to be sent ride on it", async () => {
    const api = new FakeCollection();
    const ids = api.create(5);
    api.holdPages = true;
    const early = Promise.all(ids.slice(0, 2).map((id) => api.coalescer.read(id)));
    await vi.waitFor(() => expect(api.waitingPages).toBe(1));
    api.records.get(ids[4]!)!.version = 7;
    const late = api.coalescer.read(ids[4]!);
    api.send();
    expect(await late).toEqual({ id: ids[4], version: 7 });
    await early;
    expect(api.calls).toEqual({ pages: 1, gets: 0 });
  });

  it("report an object deleted out of band as gone, after a GET confirms what the walk did not show", async () => {
    const api = new FakeCollection();
    const ids = api.create(20);
    api.records.delete(ids[3]!);
    api.records.delete(ids[17]!);
    const found = await Promise.all(ids.map((id) => api.coalescer.read(id)));
    expect(found.filter((item) => item === undefined)).toHaveLength(2);
    expect(found[3]).toBeUndefined();
    expect(found[17]).toBeUndefined();
    expect(api.calls).toEqual({ pages: 1, gets: 2 });
  });

  it("find objects created after a walk on the tail of the list, the way create re-reads them", async () => {
    const api = new FakeCollection();
    await Promise.all(api.create(450).map((id) => api.coalescer.read(id)));
    const created = api.create(30);
    const found = await Promise.all(created.map((id) => api.coalescer.read(id)));
    expect(found.map((item) => item?.id)).toEqual(created);
    expect(api.calls).toEqual({ pages: 4, gets: 0 });
  });

  it("fall back to one GET per read when a page is refused, each read failing on its own", async () => {
    const api = new FakeCollection();
    const ids = api.create(10);
    api.records.delete(ids[0]!);
    api.failPages = 400;
    api.failGets.add(ids[1]!);
    const found = await Promise.allSettled(ids.map((id) => api.coalescer.read(id)));
    expect(found[0]).toEqual({ status: "fulfilled", value: undefined });
    expect(found[1]).toMatchObject({ status: "rejected", reason: { message: `connection reset reading ${ids[1]}` } });
    expect(found.slice(2).map((result) => result.status === "fulfilled" && result.value?.id)).toEqual(ids.slice(2));
    expect(api.calls).toEqual({ pages: 1, gets: 10 });
  });

  it("fail every open read with a page that got no usable answer, rather than wait out the retries again per GET", async () => {
    const api = new FakeCollection();
    const ids = api.create(10);
    api.failPages = 503;
    const found = await Promise.allSettled(ids.map((id) => api.coalescer.read(id)));
    for (const result of found) expect(result).toMatchObject({ status: "rejected", reason: { status: 503 } });
    expect(api.calls).toEqual({ pages: 1, gets: 0 });
    // The API back, the next reads walk again from the top.
    api.failPages = undefined;
    expect((await Promise.all(ids.map((id) => api.coalescer.read(id)))).map((item) => item?.id)).toEqual(ids);
    expect(api.calls).toEqual({ pages: 2, gets: 0 });
  });

  it("drop a tail cursor the API no longer honours, answering by GETs and then by walks from the start", async () => {
    const api = new FakeCollection();
    await Promise.all(api.create(450).map((id) => api.coalescer.read(id)));
    api.expireCursors();
    const first = api.create(5);
    expect((await Promise.all(first.map((id) => api.coalescer.read(id)))).map((item) => item?.id)).toEqual(first);
    expect(api.calls).toEqual({ pages: 4, gets: 5 });
    const second = api.create(5);
    expect((await Promise.all(second.map((id) => api.coalescer.read(id)))).map((item) => item?.id)).toEqual(second);
    expect(api.calls).toEqual({ pages: 7, gets: 5 });
  });

  it("walk a tail that grew past a page to its end, so later re-reads cost one page, not a page and a GET", async () => {
    const api = new FakeCollection();
    await Promise.all(api.create(450).map((id) => api.coalescer.read(id)));
    // Creates re-read one at a time, as at low engine parallelism.
    for (let created = 0; created < 160; created++) {
      const [id] = api.create(1);
      expect((await api.coalescer.read(id!))?.id).toBe(id);
    }
    // The first re-read walks the tail (items 401-600, then 601-610); every later one reads from 601.
    expect(api.calls).toEqual({ pages: 3 + 2 + 159, gets: 0 });
  });

  it("gather reads that arrive within the quiet period into one page, and no longer", async () => {
    vi.useFakeTimers();
    try {
      for (const apartMs of [10, 30]) {
        const api = new FakeCollection();
        const first = Promise.all(api.create(450).map((id) => api.coalescer.read(id)));
        await vi.advanceTimersByTimeAsync(2_000);
        await first;
        const before = api.calls.pages;
        const reads: Promise<unknown>[] = [];
        // Five replayed creates finish apart: closer than the 20 ms quiet period, or further.
        for (let created = 0; created < 5; created++) {
          const [id] = api.create(1);
          reads.push(api.coalescer.read(id!));
          await vi.advanceTimersByTimeAsync(apartMs);
        }
        await vi.advanceTimersByTimeAsync(2_000);
        await Promise.all(reads);
        expect(api.calls.pages - before).toBe(apartMs < 20 ? 1 : 5);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
