/**
 * A plain-text table, as every command prints one: each column but the last padded to its widest
 * cell, two spaces between columns, no trailing blanks. The last column is free text (a planned
 * step, an error) and is never padded.
 */
export function textTable(rows: readonly (readonly string[])[]): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? "").length)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) => (column < columns - 1 ? cell.padEnd(widths[column] ?? 0) : cell))
      .join("  ")
      .trimEnd(),
  );
}
