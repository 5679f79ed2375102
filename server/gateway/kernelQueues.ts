import { readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { endianness } from "node:os";
import { Worker } from "node:worker_threads";

/** What the kernel holds for one TCP connection: bytes not yet acknowledged by the peer, bytes not yet read. */
export interface KernelQueues {
  tx: number;
  rx: number;
}

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];

/**
 * 32 hex digits of an address as IPv6 (an IPv4 one as `::ffff:a.b.c.d`, which is how a dual-stack
 * socket reports it), whatever spelling Node gave it; undefined for anything else.
 */
export function addressHex(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const quad = (dotted: string) =>
    dotted
      .split(".")
      .map((byte) => Number(byte).toString(16).padStart(2, "0"))
      .join("");
  if (isIPv4(address)) return `00000000000000000000ffff${quad(address)}`;
  if (!isIPv6(address)) return undefined;
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted !== undefined) {
    const hex = quad(dotted);
    text = `${text.slice(0, -dotted.length)}${hex.slice(0, 4)}:${hex.slice(4)}`;
  }
  const [head = "", tail] = text.split("::");
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"));
  const known = [...groupsOf(head), ...groupsOf(tail ?? "")];
  const groups =
    tail === undefined ? known : [...groupsOf(head), ...Array<string>(8 - known.length).fill("0"), ...groupsOf(tail)];
  return groups.map((group) => group.padStart(4, "0")).join("");
}

/**
 * The key of one connection in a {@link readKernelQueues} answer: its local and remote address and
 * port, so connections that share port numbers on different addresses (IPv4 and IPv6, two loopback
 * addresses) are told apart. Undefined when the socket has no address yet (or any more).
 */
export function queueKey(
  localAddress: string | undefined,
  localPort: number | undefined,
  remoteAddress: string | undefined,
  remotePort: number | undefined,
): string | undefined {
  const local = addressHex(localAddress);
  const remote = addressHex(remoteAddress);
  if (local === undefined || remote === undefined || localPort === undefined || remotePort === undefined)
    return undefined;
  return `${local}:${localPort} ${remote}:${remotePort}`;
}

/**
 * The rows of /proc/net/tcp and tcp6 whose local port is one of `localPorts`, by {@link queueKey};
 * only the `wanted` keys when given. Every other row is skipped after a look at its local port, so
 * the cost of the rows that matter does not grow with the machine's other sockets.
 *
 * This function also runs in the reader's worker thread, from its source text: it must use nothing
 * but its arguments (no imports, no helpers outside it).
 */
export function parseKernelTables(
  tables: readonly string[],
  localPorts: readonly number[],
  wanted: readonly string[] | null,
  littleEndian: boolean,
): [string, KernelQueues][] {
  const ports = new Set(localPorts.map((port) => port.toString(16).toUpperCase().padStart(4, "0")));
  const keys = wanted === null ? null : new Set(wanted);
  const found: [string, KernelQueues][] = [];
  for (const table of tables) {
    let start = table.indexOf("\n") + 1;
    while (start > 0 && start < table.length) {
      const end = table.indexOf("\n", start);
      const line = table.slice(start, end === -1 ? table.length : end);
      start = end + 1;
      // "  sl: LOCAL:PORT REMOTE:PORT ST TX:RX ...", addresses 8 hex digits (tcp) or 32 (tcp6).
      const local = line.indexOf(": ") + 2;
      const localColon = line.indexOf(":", local);
      if (local < 2 || localColon < 0 || !ports.has(line.slice(localColon + 1, localColon + 5))) continue;
      const fields = line.slice(local).split(/\s+/);
      const [localText, remoteText, , queues] = fields;
      if (localText === undefined || remoteText === undefined || queues === undefined) continue;
      const endpoint = (text: string): string => {
        const [hex = "", port = ""] = text.split(":");
        // Each 32-bit word as the kernel holds it: in host byte order.
        let bytes = "";
        for (let word = 0; word < hex.length; word += 8) {
          const digits = hex.slice(word, word + 8);
          bytes += littleEndian ? (digits.match(/../g) ?? []).reverse().join("") : digits;
        }
        const address = bytes.length === 8 ? `00000000000000000000ffff${bytes}` : bytes;
        return `${address.toLowerCase()}:${Number.parseInt(port, 16)}`;
      };
      const key = `${endpoint(localText)} ${endpoint(remoteText)}`;
      if (keys !== null && !keys.has(key)) continue;
      const [tx = "", rx = ""] = queues.split(":");
      found.push([key, { tx: Number.parseInt(tx, 16), rx: Number.parseInt(rx, 16) }]);
    }
  }
  return found;
}

function readTables(): string[] {
  return TABLES.map((file) => {
    try {
      return readFileSync(file, "latin1");
    } catch {
      return "";
    }
  });
}

/**
 * The queues of the connections on `localPorts` (only the `wanted` keys when given), read in the
 * calling thread; empty where Linux gives no such report. For tests and tools: the gateway reads
 * through a {@link KernelQueueReader}.
 */
export function readKernelQueues(localPorts: readonly number[], wanted?: readonly string[]): Map<string, KernelQueues> {
  return new Map(parseKernelTables(readTables(), localPorts, wanted ?? null, endianness() === "LE"));
}

/** One answer of the reader: the queues, and the thread that read the tables (never the caller's). */
export interface KernelQueueRead {
  queues: Map<string, KernelQueues>;
  threadId: number;
}

interface Answer {
  id: number;
  threadId: number;
  entries: [string, KernelQueues][];
}

/**
 * Reads the kernel's queues in a worker thread of its own: the tables list every socket of the
 * machine (31,897 lines and 124 ms with 3,000 slow tunnels open), which must not stall the thread
 * that serves the connections. The worker starts on the first read and never keeps the process alive.
 */
export class KernelQueueReader {
  private worker: Worker | undefined;
  private closed = false;
  private nextId = 0;
  private readonly waiting = new Map<number, (answer: Answer) => void>();

  read(localPorts: readonly number[], wanted: readonly string[]): Promise<KernelQueueRead> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (answer) => resolve({ queues: new Map(answer.entries), threadId: answer.threadId }));
      worker.postMessage({ id, localPorts, wanted });
    });
  }

  /** Starts the thread ahead of its first read (a worker takes tens of milliseconds to start, more on a busy machine). */
  warm(): void {
    if (!this.closed) this.start();
  }

  close(): void {
    this.closed = true;
    void this.worker?.terminate();
    this.worker = undefined;
    for (const resolve of this.waiting.values()) resolve({ id: -1, threadId: -1, entries: [] });
    this.waiting.clear();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const source = `
      const { parentPort, threadId } = require("node:worker_threads");
      const { readFileSync } = require("node:fs");
      const littleEndian = require("node:os").endianness() === "LE";
      const parseKernelTables = ${parseKernelTables.toString()};
      const read = (file) => { try { return readFileSync(file, "latin1"); } catch { return ""; } };
      parentPort.on("message", ({ id, localPorts, wanted }) => {
        const entries = parseKernelTables(${JSON.stringify(TABLES)}.map(read), localPorts, wanted, littleEndian);
        parentPort.postMessage({ id, threadId, entries });
      });`;
    const worker = new Worker(source, { eval: true });
    worker.unref();
    worker.on("message", (answer: Answer) => {
      const resolve = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      resolve?.(answer);
    });
    // A worker that fails leaves the bill as it would be without /proc: what the gateway handed over.
    worker.on("error", () => this.close());
    this.worker = worker;
    return worker;
  }
}
