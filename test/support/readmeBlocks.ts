import fs from "node:fs";

/**
 * The shell blocks of a README, as the convention in the root README's "Contributing" section marks
 * them: an HTML comment on the line before the fence, `<!-- readme:run -->` (optionally with
 * `cwd=repo` and/or `background`) to run it, or `<!-- readme:skip <why> -->` to leave it out.
 */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  script: string;
  marker: "run" | "skip" | "none";
  /** Run in the repository instead of the README's temp folder (building, the demo). */
  inRepo: boolean;
  /** Long-running (a server): started, checked to stay up, stopped after the README's other blocks. */
  background: boolean;
}

const FENCE = /^```(sh|bash|shell)\s*$/;
const MARKER = /^<!--\s*readme:(run|skip)\b(.*?)-->\s*$/;

export function shellBlocks(file: string): ShellBlock[] {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i] ?? "")) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    const marker = MARKER.exec(lines[i - 1] ?? "");
    const options = (marker?.[2] ?? "").trim().split(/\s+/);
    blocks.push({
      file,
      line: i + 1,
      script: lines.slice(i + 1, end).join("\n"),
      marker: (marker?.[1] as "run" | "skip" | undefined) ?? "none",
      inRepo: options.includes("cwd=repo"),
      background: options.includes("background"),
    });
    i = end;
  }
  return blocks;
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
