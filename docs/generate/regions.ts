/**
 * The parts of the hand-written docs that restate a fact kept elsewhere, generated from it so they
 * cannot drift: the config table from the schema's config, the resources and functions from the
 * schema, the commands and each command page's synopsis from the CLI's table of commands, the
 * examples from their READMEs, the registry page's install blocks from the README's. A region
 * is the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`; `npm run gen-docs`
 * rewrites every region of every file of `regionFiles`, and test/docs/referenceDocs.test.ts fails when
 * one differs from what this module makes.
 */
import fs from "node:fs";
import path from "node:path";
import { COMMANDS } from "../../cli/commands";

/** The files that hold regions, relative to the repository root: the README, the registry page, each command's page. */
export function regionFiles(repoRoot: string): string[] {
  const commands = path.join("docs", "commands");
  return [
    "README.md",
    path.join("docs", "installation-configuration.md"),
    ...fs
      .readdirSync(path.join(repoRoot, commands))
      .sort()
      .map((page) => path.join(commands, page)),
  ];
}

interface ConfigVariable {
  description?: string;
  secret?: boolean;
  defaultInfo?: { environment?: string[] };
}

interface Described {
  description?: string;
}

/** Text as one Markdown table cell: its pipes escaped, its lines joined. */
export const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The first sentence of a description: what a list shows of it. */
function firstSentence(text: string | undefined): string {
  const flat = (text ?? "").replaceAll("\n", " ").trim();
  return /^.*?\.(?=\s|$)/.exec(flat)?.[0] ?? flat;
}

/** A resource's or function's page under docs/reference/: `ProxyUser` → `proxy-user.md`. */
export const referencePage = (type: string) => `${type.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()}.md`;

function configTable(schema: Record<string, unknown>): string {
  const variables = ((schema.config as { variables?: Record<string, ConfigVariable> } | undefined)?.variables ??
    {}) as Record<string, ConfigVariable>;
  const rows = Object.entries(variables).map(([key, variable]) => {
    const environment = variable.defaultInfo?.environment?.map((name) => `\`${name}\``).join(", ") || "—";
    const name = `\`proxy:${key}\`${variable.secret ? " (secret)" : ""}`;
    return `| ${name} | ${environment} | ${cell(variable.description ?? "")} |`;
  });
  // No column of defaults: the schema carries none (provider/core/settings.ts says why), and each
  // setting's description names its own.
  return ["| Stack config | Environment | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}

/** Every resource and function of the schema, linked to its page under docs/reference/. */
function resourcesList(schema: Record<string, unknown>, referenceDir: string): string {
  const entries = (kind: "resources" | "functions") =>
    Object.entries((schema[kind] ?? {}) as Record<string, Described>).map(([token, item]) => {
      const name = token.split(":").pop() ?? token;
      return `| [${name}](${referenceDir}/${referencePage(name)}) | \`${token}\` | ${cell(firstSentence(item.description))} |`;
    });
  const resources = entries("resources");
  const functions = entries("functions");
  return [
    "| Resource | Token | What it is |",
    "| --- | --- | --- |",
    ...resources,
    ...(functions.length > 0 ? ["", "| Function | Token | What it reads |", "| --- | --- | --- |", ...functions] : []),
  ].join("\n");
}

/** A Markdown page's title and its first paragraph's first sentence. */
function pageSummary(file: string): { title: string; summary: string } {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const title = (lines.find((line) => line.startsWith("# ")) ?? "").slice(2).trim();
  const start = lines.findIndex((line, i) => i > 0 && line.trim() !== "" && !line.startsWith("#"));
  const paragraph: string[] = [];
  for (let i = start; i >= 0 && i < lines.length && lines[i]?.trim() && !lines[i]?.startsWith("<!--"); i++)
    paragraph.push(lines[i] ?? "");
  return { title, summary: firstSentence(paragraph.join(" ")) };
}

/** Every command of the tool, from the CLI's own table, linked to its page in docs/commands/. */
function commandsList(): string {
  const rows = COMMANDS.map(
    (command) => `| [\`${command.name}\`](docs/commands/${command.name}.md) | ${cell(command.summary)} |`,
  );
  return ["| `pulumi-proxy …` | What it is for |", "| --- | --- |", ...rows].join("\n");
}

/** A command page's synopsis: the command's own usage lines, as its --help starts. */
function synopsis(name: string): string | undefined {
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) return undefined;
  return [
    "<!-- readme:skip a synopsis ([…] marks options, not a command): generated from the command's usage -->",
    "```sh",
    ...command.usage,
    "```",
  ].join("\n");
}

function examplesList(repoRoot: string): string {
  const dir = path.join(repoRoot, "examples");
  return fs
    .readdirSync(dir)
    .filter((name) => fs.existsSync(path.join(dir, name, "README.md")))
    .sort()
    .map((name) => {
      // The summary's own links are relative to the example's folder.
      const summary = pageSummary(path.join(dir, name, "README.md")).summary.replaceAll("](../", "](examples/");
      return `- [\`${name}\`](examples/${name}): ${summary}`;
    })
    .join("\n");
}

const LANGUAGE_NAMES: Record<string, string> = {
  plugin: "The plugin",
  python: "Python",
  go: "Go",
  yaml: "YAML",
  nodejs: "Node.js",
};

/**
 * The README's install blocks (each `<!-- readme:release <language> -->` fence, which the release
 * test runs as written), copied with their markers: one statement of how to install, in two places.
 */
function installBlocks(repoRoot: string): string {
  const lines = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8").split("\n");
  const sections: string[] = [];
  lines.forEach((line, i) => {
    const language = /^<!--\s*readme:release\s+(\S+)\s*-->\s*$/.exec(line)?.[1];
    if (!language || !lines[i + 1]?.startsWith("```")) return;
    const end = lines.findIndex((next, j) => j > i + 1 && next.startsWith("```"));
    sections.push(`**${LANGUAGE_NAMES[language] ?? language}**:\n\n${lines.slice(i, end + 1).join("\n")}`);
  });
  return sections.join("\n\n");
}

/** Region name → its text, for one file (links are relative to that file's folder). */
export function docRegions(schema: Record<string, unknown>, repoRoot: string, file: string): Record<string, string> {
  const toReference = path.relative(path.dirname(file), path.join("docs", "reference")).split(path.sep).join("/");
  return {
    config: configTable(schema),
    resources: resourcesList(schema, toReference || "."),
    commands: commandsList(),
    examples: examplesList(repoRoot),
    install: installBlocks(repoRoot),
    ...(path.dirname(file) === path.join("docs", "commands")
      ? { synopsis: synopsis(path.basename(file, ".md")) ?? "" }
      : {}),
  };
}

/** The text with each of its regions replaced by the generated one; a region without a generator is an error. */
export function fillRegions(text: string, regions: Record<string, string>, file: string): string {
  return text.replaceAll(/<!-- generated:([a-z]+) -->\n[\s\S]*?<!-- \/generated:\1 -->/g, (_whole, name: string) => {
    const body = regions[name];
    if (body === undefined) throw new Error(`${file}: no generator for the region "${name}"`);
    return `<!-- generated:${name} -->\n${body}\n<!-- /generated:${name} -->`;
  });
}

/** Each file of REGION_FILES → its text with its regions generated. */
export function generatedRegionFiles(schema: Record<string, unknown>, repoRoot: string): Map<string, string> {
  return new Map(
    regionFiles(repoRoot).map((file) => {
      const text = fs.readFileSync(path.join(repoRoot, file), "utf8");
      return [file, fillRegions(text, docRegions(schema, repoRoot, file), file)];
    }),
  );
}
