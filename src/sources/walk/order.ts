/**
 * @module
 * Code-point order of strings. JavaScript's `<` compares UTF-16 code units, which puts U+10000…
 * (surrogate pairs, D800–DFFF) before U+E000–U+FFFF; code-point order (the order of the UTF-8
 * bytes) puts them after. Listings and search results are ordered by code point, so paths sort the
 * same way here as in `LC_ALL=C sort`, ripgrep's `--sort path` and any byte-wise tool.
 */

/** Maps a UTF-16 code unit so that numeric order of the mapped units is code-point order. */
function fixup(unit: number): number {
  // Perf: one branch per differing unit only; equal prefixes are compared as raw units.
  if (unit >= 0xd800) return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
  return unit;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` in code-point order. */
export function compareCodePoints(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixup(x) - fixup(y);
  }
  return a.length - b.length;
}
