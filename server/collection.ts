import { invalidRequest } from "./errors";

export interface Sequenced {
  readonly id: string;
  /** Creation order, never reused. Cursors point at it, which is what keeps walks stable. */
  readonly seq: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Records in creation order with O(1) lookup by id. A cursor is the seq of the last item returned, so
 * a walk never repeats an item, never skips one that lived for the whole walk, and picks up items
 * created during the walk when they sort after the cursor.
 */
export class OrderedCollection<T extends Sequenced> {
  private readonly byId = new Map<string, T>();
  /** Ascending seq. Deleted records linger until the next compaction; byId says which are live. */
  private ordered: T[] = [];
  private deletedSinceCompaction = 0;

  constructor(private readonly cursorTag: string) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  add(record: T): void {
    const last = this.ordered[this.ordered.length - 1];
    if (last && last.seq >= record.seq) throw new Error(`seq ${record.seq} is not after ${last.seq}`);
    this.byId.set(record.id, record);
    this.ordered.push(record);
  }

  delete(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    this.deletedSinceCompaction++;
    if (this.deletedSinceCompaction > 64 && this.deletedSinceCompaction * 2 > this.ordered.length) {
      this.ordered = this.ordered.filter((record) => this.isLive(record));
      this.deletedSinceCompaction = 0;
    }
    return true;
  }

  /** Live records, oldest first. */
  *values(): IterableIterator<T> {
    for (const record of this.ordered) if (this.isLive(record)) yield record;
  }

  page(options: {
    cursor?: string | undefined;
    limit: number;
    newestFirst?: boolean;
    filter?: (record: T) => boolean;
  }): Page<T> {
    const { limit, filter } = options;
    const after = options.cursor === undefined ? undefined : this.decodeCursor(options.cursor);
    const items: T[] = [];
    let more = false;
    const take = (record: T): boolean => {
      if (!this.isLive(record) || (filter && !filter(record))) return true;
      if (items.length === limit) {
        more = true;
        return false;
      }
      items.push(record);
      return true;
    };
    if (options.newestFirst) {
      const end = after === undefined ? this.ordered.length : this.firstIndexWithSeqAtLeast(after);
      for (let i = end - 1; i >= 0; i--) if (!take(this.ordered[i]!)) break;
    } else {
      const start = after === undefined ? 0 : this.firstIndexWithSeqAtLeast(after + 1);
      for (let i = start; i < this.ordered.length; i++) if (!take(this.ordered[i]!)) break;
    }
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? this.encodeCursor(last.seq) : null };
  }

  private isLive(record: T): boolean {
    return this.byId.get(record.id) === record;
  }

  private firstIndexWithSeqAtLeast(seq: number): number {
    let low = 0;
    let high = this.ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ordered[mid]!.seq < seq) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private encodeCursor(seq: number): string {
    return Buffer.from(`${this.cursorTag}:${seq}`, "utf8").toString("base64url");
  }

  private decodeCursor(cursor: string): number {
    const match = /^([a-z]+):(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!match || match[1] !== this.cursorTag) {
      throw invalidRequest([{ path: "cursor", message: "is not a cursor issued by this list" }]);
    }
    return Number(match[2]);
  }
}
