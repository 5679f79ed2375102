import fs from "node:fs";

/**
 * The shell blocks of a README, as the convention in the root README's "Contributing" section marks
 * them: an HTML comment on the line before the fence, `<!-- readme:run -->` (optionally with
 * `cwd=repo`, `background` and/or `release`) to run it, `<!-- readme:skip <why> -->` to leave it out, or
 * `<!-- readme:release <language> -->` for an install from a release, which the release test runs.
 */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  script: string;
  marker: "run" | "skip" | "release" | "none";
  /** What follows the marker: a skipped block's reason (a test that runs it names its file first), a run's options. */
  reason: string;
  /** Run in the repository instead of the README's temp folder (building, the demo). */
  inRepo: boolean;
  /** Long-running (a server): started, checked to stay up, stopped after the README's other blocks. */
  background: boolean;
  /**
   * A user's path without Node.js: its release URLs name a release the suite builds and serves, and
   * it runs with no node on PATH.
   */
  release: boolean;
}

const FENCE = /^```(sh|bash|shell)\s*$/;
const MARKER = /^<!--\s*readme:(run|skip|release)\b(.*?)-->\s*$/;

export function shellBlocks(file: string): ShellBlock[] {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i] ?? "")) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    const marker = MARKER.exec(lines[i - 1] ?? "");
    const reason = (marker?.[2] ?? "").trim();
    const options = reason.split(/\s+/);
    blocks.push({
      file,
      line: i + 1,
      script: lines.slice(i + 1, end).join("\n"),
      marker: (marker?.[1] as ShellBlock["marker"] | undefined) ?? "none",
      reason,
      inRepo: options.includes("cwd=repo"),
      background: options.includes("background"),
      release: options.includes("release"),
    });
    i = end;
  }
  return blocks;
}

/**
 * The one shell block of `file` whose text holds `words` (or whose first line starts with them, with
 * `{ firstLine: true }`): how a test that runs a README's block word for word finds it. Throws, naming
 * the file and the words, unless exactly one does.
 */
export function blockWith(file: string, words: string, options: { firstLine?: boolean } = {}): ShellBlock {
  const matches = (block: ShellBlock) =>
    options.firstLine ? (block.script.split("\n")[0] ?? "").startsWith(words) : block.script.includes(words);
  const found = shellBlocks(file).filter(matches);
  if (found.length !== 1 || !found[0])
    throw new Error(`${file}: ${found.length} shell blocks hold "${words}", not one`);
  return found[0];
}

/**
 * The blocks of any fence (a shell block, or a whole YAML program) marked `<!-- readme:release
 * <language> -->`, by language: what a user installs from a release, run by the release test.
 */
export function releaseBlocks(file: string): Map<string, string> {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const blocks = new Map<string, string>();
  lines.forEach((line, i) => {
    const language = /^<!--\s*readme:release\s+(\S+)\s*-->\s*$/.exec(line)?.[1];
    if (!language || !lines[i + 1]?.startsWith("```")) return;
    const end = lines.findIndex((next, j) => j > i + 1 && next.startsWith("```"));
    blocks.set(language, lines.slice(i + 2, end).join("\n"));
  });
  return blocks;
}

/** A README's release URL, `https://downloads.example.com/pulumi-proxy/v<version>/`, pointed at `base`. */
export function atRelease(script: string, base: string): string {
  return script.replaceAll(/https:\/\/downloads\.example\.com\/pulumi-proxy\/v[\d.]+\/?/g, base);
}

/**
 * The placeholders READMEs use for a real API, replaced by the reference server's URL and root key,
 * and `npm test` removed: it is the suite itself.
 */
export function substitute(script: string, api: { url: string; key: string }): string {
  return script
    .split("\n")
    .filter((line) => line.replace(/#.*$/, "").trim() !== "npm test")
    .join("\n")
    .replaceAll(/live_(\.\.\.|…)/g, api.key)
    .replaceAll(/https:\/\/api\.example\.com|http:\/\/127\.0\.0\.1:8787/g, api.url)
    .replaceAll("--port 8787", "--port 0")
    .replaceAll("path/to/program", ".");
}
