import { createHash, randomFillSync, randomInt } from "node:crypto";
import { TOKEN_ALPHABET } from "../contract/common";

/** Random bytes drawn in 4 KiB batches: one getrandom call per ~100 ids instead of one per id. */
const randomPool = Buffer.alloc(4096);
let randomPoolOffset = randomPool.length;

function nextRandomByte(): number {
  if (randomPoolOffset === randomPool.length) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  return randomPool[randomPoolOffset++]!;
}

/** Uniform base62 token; rejection sampling (bytes ≥ 248 are skipped) keeps every character equally likely. */
export function randomToken(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < 248) out += TOKEN_ALPHABET[byte % 62];
  }
  return out;
}

export function newId(prefix: "pu" | "key" | "alloc" | "ch"): string {
  return `${prefix}_${randomToken(16)}`;
}

/** 40 base62 characters: comfortably above the contract's minimum of 32. */
export function newSecret(): string {
  return `live_${randomToken(40)}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function secretHint(secret: string): string {
  return secret.slice(-4);
}

/** A cheap, unique request id: a random per-process prefix plus a counter. */
export function requestIdFactory(): () => string {
  const prefix = randomToken(8);
  let counter = randomInt(1_000_000);
  return () => `req_${prefix}${(++counter).toString(36).padStart(6, "0")}`;
}
