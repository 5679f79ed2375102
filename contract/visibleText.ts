/**
 * Characters a reader cannot see, or that reorder what they see: controls (a carriage return splits a
 * table row), format characters (zero-width spaces and joiners, the bidirectional embeddings,
 * overrides and isolates), code points ignored by default (variation selectors, fillers), separators
 * other than the plain space, and lone surrogates. A key named `ro\u200Bot` would show as a second
 * `root`, and `admin\u202Egnp.exe` as "adminexe.png". The backslash is in the set so that a name
 * that spells `\u200B` out cannot pass for one that holds it.
 */
const HIDDEN = /(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Zs}\\]/gu;

function escaped(character: string): string {
  if (character === "\\") return "\\\\";
  const code = character.codePointAt(0) ?? 0;
  const hex = code.toString(16).toUpperCase();
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
}

/**
 * A name as a person should read it, for every place that shows names (the reference server's
 * console, the report's HTML and Markdown): each hidden character written out as `\u200B`, a backslash
 * as `\\`, everything else as it is. Escaping for the format (HTML, Markdown) comes after this.
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, escaped);
}
