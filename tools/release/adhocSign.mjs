// @ts-check
/**
 * An ad-hoc code signature for a 64-bit Mach-O executable that already carries one (valid or not):
 * the signature is rewritten as a lone CodeDirectory of SHA-256 page hashes, flagged ad hoc and
 * linker-signed. macOS on Apple silicon kills an executable whose pages do not match its signature,
 * and Bun's darwin-x64 output keeps the Developer ID signature of Bun's own binary (hardened runtime)
 * over pages it has since changed.
 *
 * The layout and every field are those Go's linker writes when it re-signs an executable
 * (cmd/internal/codesign and machoCodeSign in cmd/link, BSD licence): what Bun's darwin-arm64
 * output carries too, byte for byte. No registry package signs ad hoc in JavaScript, and the Rust
 * signer (apple-codesign) takes minutes to build, longer than the whole release.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_ADHOC_LINKER_SIGNED = 0x20002;
const CS_HASHTYPE_SHA256 = 2;
const CS_EXECSEG_MAIN_BINARY = 1;
const PAGE_BITS = 12;
const PAGE = 1 << PAGE_BITS;
const HASH_SIZE = 32;
const CPU_TYPE_ARM64 = 0x0100000c;
const SUPERBLOB_AND_INDEX = 12 + 8;
const CODE_DIRECTORY_HEADER = 13 * 4 + 4 + 4 * 8;
const IDENTIFIER = "a.out";

/**
 * The load commands this needs: the signature's, and the segments it spans or names.
 * @param {Buffer} file
 */
function loadCommands(file) {
  if (file.readUInt32LE(0) !== MH_MAGIC_64) throw new Error("not a 64-bit little-endian Mach-O executable");
  const count = file.readUInt32LE(16);
  /** @type {{ signature?: { at: number, dataOffset: number, dataSize: number }, segments: Map<string, { at: number, fileOffset: number, fileSize: number }> }} */
  const found = { segments: new Map() };
  let at = 32;
  for (let i = 0; i < count; i++) {
    const command = file.readUInt32LE(at);
    if (command === LC_CODE_SIGNATURE) {
      found.signature = { at, dataOffset: file.readUInt32LE(at + 8), dataSize: file.readUInt32LE(at + 12) };
    } else if (command === LC_SEGMENT_64) {
      const name = file.toString("latin1", at + 8, at + 24).replace(/\0+$/, "");
      found.segments.set(name, {
        at,
        fileOffset: Number(file.readBigUInt64LE(at + 40)),
        fileSize: Number(file.readBigUInt64LE(at + 48)),
      });
    }
    at += file.readUInt32LE(at + 4);
  }
  return found;
}

/**
 * Replaces the signature of the Mach-O executable at `executable` with an ad-hoc one, in place.
 * @param {string} executable
 */
export function signAdHoc(executable) {
  const original = fs.readFileSync(executable);
  const { signature, segments } = loadCommands(original);
  const text = segments.get("__TEXT");
  const linkedit = segments.get("__LINKEDIT");
  if (!signature || !text || !linkedit) {
    throw new Error(`${executable}: no code signature, __TEXT or __LINKEDIT to re-sign in place`);
  }
  // The signature is the file's last bytes: anything after it would be outside every hash.
  if (signature.dataOffset + signature.dataSize !== original.length) {
    throw new Error(`${executable}: content follows the code signature`);
  }
  const codeLimit = signature.dataOffset;
  const slots = Math.ceil(codeLimit / PAGE);
  const hashOffset = CODE_DIRECTORY_HEADER + IDENTIFIER.length + 1;
  const size = SUPERBLOB_AND_INDEX + hashOffset + slots * HASH_SIZE;

  const file = Buffer.alloc(codeLimit + size);
  original.copy(file, 0, 0, codeLimit);
  // The load commands first: the page hashes cover them.
  file.writeUInt32LE(size, signature.at + 12);
  const linkeditSize = codeLimit + size - linkedit.fileOffset;
  // In memory the segment spans whole pages of the architecture (16 KB on arm64), as Apple's linker sizes it.
  const vmPage = original.readUInt32LE(4) === CPU_TYPE_ARM64 ? 0x4000 : 0x1000;
  file.writeBigUInt64LE(BigInt(Math.ceil(linkeditSize / vmPage) * vmPage), linkedit.at + 32); // vmsize
  file.writeBigUInt64LE(BigInt(linkeditSize), linkedit.at + 48); // filesize

  let at = codeLimit;
  const put32 = (/** @type {number} */ value) => {
    at = file.writeUInt32BE(value, at);
  };
  const put64 = (/** @type {number} */ value) => {
    at = file.writeBigUInt64BE(BigInt(value), at);
  };
  put32(CSMAGIC_EMBEDDED_SIGNATURE);
  put32(size);
  put32(1); // blobs: the CodeDirectory alone
  put32(0); // its slot
  put32(SUPERBLOB_AND_INDEX); // its offset
  put32(CSMAGIC_CODEDIRECTORY);
  put32(size - SUPERBLOB_AND_INDEX);
  put32(0x20400); // version: the first with the executable segment's fields
  put32(CS_ADHOC_LINKER_SIGNED);
  put32(hashOffset);
  put32(CODE_DIRECTORY_HEADER); // identifier's offset
  put32(0); // special slots
  put32(slots);
  put32(codeLimit);
  at = file.writeUInt8(HASH_SIZE, at);
  at = file.writeUInt8(CS_HASHTYPE_SHA256, at);
  at = file.writeUInt8(0, at); // platform
  at = file.writeUInt8(PAGE_BITS, at);
  put32(0); // spare
  put32(0); // scatter offset
  put32(0); // team offset
  put32(0); // spare
  put64(0); // 64-bit code limit: unused below 4 GB
  put64(text.fileOffset);
  put64(text.fileSize);
  put64(CS_EXECSEG_MAIN_BINARY);
  at += file.write(`${IDENTIFIER}\0`, at, "latin1");
  for (let page = 0; page < slots; page++) {
    const end = Math.min((page + 1) * PAGE, codeLimit);
    at += createHash("sha256")
      .update(file.subarray(page * PAGE, end))
      .digest()
      .copy(file, at);
  }
  fs.writeFileSync(executable, file);
}
