import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/commands";
import { REFERENCE_DIR, referenceDocs } from "../../docs/generate/reference";
import { generatedRegionFiles } from "../../docs/generate/regions";
import { packageSchema } from "../../provider/native/schema";
import { packageVersion } from "../../provider/native/version";
import { REPO_ROOT } from "../support/pulumi";

const DOCS = path.join(REPO_ROOT, "docs");

describe("the registry docs (docs/)", () => {
  it("hold the reference page of each resource exactly as the schema generates it (`npm run gen-docs`)", async () => {
    const generated = referenceDocs(await packageSchema(packageVersion()));
    const committed = fs.readdirSync(path.join(REPO_ROOT, REFERENCE_DIR)).sort();
    expect(committed).toEqual([...generated.keys()].sort());
    for (const [file, text] of generated) {
      expect(fs.readFileSync(path.join(REPO_ROOT, REFERENCE_DIR, file), "utf8"), `${file}: run npm run gen-docs`).toBe(
        text,
      );
    }
  });

  it("hold the regions generated from the schema, the README's install blocks, the command pages and the examples", async () => {
    for (const [file, text] of generatedRegionFiles(await packageSchema(packageVersion()), REPO_ROOT)) {
      expect(fs.readFileSync(path.join(REPO_ROOT, file), "utf8"), `${file}: run npm run gen-docs`).toBe(text);
      expect(text, file).not.toMatch(/<!-- generated:(\w+) -->\n<!-- \/generated:\1 -->/);
    }
  });

  it("name every top-level folder of the repository in CONTRIBUTING.md's layout", () => {
    const contributing = fs.readFileSync(path.join(REPO_ROOT, "CONTRIBUTING.md"), "utf8");
    const layout = contributing.split("## Repository layout")[1] ?? "";
    const folders = fs
      .readdirSync(REPO_ROOT, { withFileTypes: true })
      .filter(
        (entry) =>
          entry.isDirectory() &&
          !entry.name.startsWith(".") &&
          !["dist", "node_modules", "release"].includes(entry.name),
      )
      .map((entry) => entry.name);
    expect(folders.filter((folder) => !layout.includes(`| \`${folder}/\` |`))).toEqual([]);
  });

  it("have one page per command of the tool, and none for a command it lacks", () => {
    const pages = fs.readdirSync(path.join(DOCS, "commands")).map((page) => page.replace(/\.md$/, ""));
    expect(pages.sort()).toEqual(COMMANDS.map((command) => command.name).sort());
  });

  it("give each page an Import section with the exact command and what an import cannot recover", async () => {
    const schema = await packageSchema(packageVersion());
    const pages = referenceDocs(schema);
    for (const token of Object.keys(schema.resources as object)) {
      const page = [...pages.values()].find((text) => text.includes(`\`${token}\``)) ?? "";
      expect(page, token).toMatch(
        new RegExp(`## Import\\n\\n<!-- readme:skip [^\\n]+ -->\\n\`\`\`sh\\npulumi import ${token} [a-z-]+ \\w+_… `),
      );
    }
    expect(pages.get("api-key.md")).toMatch(/but `secret`, which the API shows only when the object is created/);
    expect(pages.get("proxy-user.md")).toMatch(/but `password`/);
  });

  it("lay out _index.md and installation-configuration.md as the Pulumi registry does, linking every page", () => {
    for (const file of ["_index.md", "installation-configuration.md"]) {
      expect(fs.readFileSync(path.join(DOCS, file), "utf8"), file).toMatch(
        /^---\ntitle: .+\nmeta_desc: .+\nlayout: package\n---\n/,
      );
    }
    const index = fs.readFileSync(path.join(DOCS, "_index.md"), "utf8");
    for (const file of fs.readdirSync(path.join(REPO_ROOT, REFERENCE_DIR)))
      expect(index).toContain(`(reference/${file})`);
  });
});
