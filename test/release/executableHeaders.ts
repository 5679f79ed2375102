import { createHash } from "node:crypto";

/**
 * What an executable's own headers say it is, for the platforms this machine cannot run: the format
 * (ELF, Mach-O, PE) and the machine it is for, and for Mach-O whether its code signature holds.
 */
export interface ExecutableHeader {
  format: "elf" | "macho" | "pe" | "unknown";
  arch: "amd64" | "arm64" | "other";
}

const ELF_MACHINE: Record<number, ExecutableHeader["arch"]> = { 62: "amd64", 183: "arm64" };
const MACHO_CPU: Record<number, ExecutableHeader["arch"]> = { 16777223: "amd64", 16777228: "arm64" };
const PE_MACHINE: Record<number, ExecutableHeader["arch"]> = { 34404: "amd64", 43620: "arm64" };

export function readHeader(file: Buffer): ExecutableHeader {
  if (file.readUInt32BE(0) === 0x7f454c46) {
    // ELFCLASS64, little-endian; e_machine at 18.
    return { format: "elf", arch: ELF_MACHINE[file.readUInt16LE(18)] ?? "other" };
  }
  if (file.readUInt32LE(0) === 0xfeedfacf) {
    return { format: "macho", arch: MACHO_CPU[file.readUInt32LE(4)] ?? "other" };
  }
  if (file.toString("latin1", 0, 2) === "MZ") {
    const pe = file.readUInt32LE(0x3c);
    if (file.toString("latin1", pe, pe + 4) === "PE\0\0") {
      return { format: "pe", arch: PE_MACHINE[file.readUInt16LE(pe + 4)] ?? "other" };
    }
  }
  return { format: "unknown", arch: "other" };
}

export interface MachoSignature {
  /** The CodeDirectory's flags: 0x2 is ad hoc. */
  flags: number;
  /** Pages whose SHA-256 differs from the CodeDirectory's: the kernel kills the process on any. */
  mismatchedPages: number;
  pages: number;
  /** Whether the signature covers the file up to its own start, as an embedded signature must. */
  coversWholeImage: boolean;
}

const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_HASHTYPE_SHA256 = 2;

/** The embedded signature of a 64-bit Mach-O executable, checked page by page, or undefined if it has none. */
export function machoSignature(file: Buffer): MachoSignature | undefined {
  let at = 32;
  let signature: { offset: number; size: number } | undefined;
  for (let i = 0; i < file.readUInt32LE(16); i++) {
    if (file.readUInt32LE(at) === LC_CODE_SIGNATURE) {
      signature = { offset: file.readUInt32LE(at + 8), size: file.readUInt32LE(at + 12) };
    }
    at += file.readUInt32LE(at + 4);
  }
  if (!signature) return undefined;
  const blobs = file.readUInt32BE(signature.offset + 8);
  for (let blob = 0; blob < blobs; blob++) {
    const directory = signature.offset + file.readUInt32BE(signature.offset + 12 + blob * 8 + 4);
    if (file.readUInt32BE(directory) !== CSMAGIC_CODEDIRECTORY) continue;
    const flags = file.readUInt32BE(directory + 12);
    const hashOffset = file.readUInt32BE(directory + 16);
    const pages = file.readUInt32BE(directory + 28);
    const codeLimit = file.readUInt32BE(directory + 32);
    const hashSize = file.readUInt8(directory + 36);
    const hashType = file.readUInt8(directory + 37);
    const pageSize = 2 ** file.readUInt8(directory + 39);
    if (hashType !== CS_HASHTYPE_SHA256) throw new Error(`a CodeDirectory hashed with type ${hashType}, not SHA-256`);
    let mismatchedPages = 0;
    for (let page = 0; page < pages; page++) {
      const expected = file.subarray(
        directory + hashOffset + page * hashSize,
        directory + hashOffset + (page + 1) * hashSize,
      );
      const actual = createHash("sha256")
        .update(file.subarray(page * pageSize, Math.min((page + 1) * pageSize, codeLimit)))
        .digest()
        .subarray(0, hashSize);
      if (!actual.equals(expected)) mismatchedPages++;
    }
    return { flags, mismatchedPages, pages, coversWholeImage: codeLimit === signature.offset };
  }
  return undefined;
}
