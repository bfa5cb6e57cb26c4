/**
 * @module
 * RFC 6901 reference tokens: escaping a member name or index into a pointer.
 */

/** One reference token: `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointerToken(token: string): string {
  if (token.indexOf("~") < 0 && token.indexOf("/") < 0) return token;
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The pointer of a path of member names and array indexes (`[]` is the root, `""`). */
export function pointerOf(path: readonly (string | number)[]): string {
  let out = "";
  for (const step of path)
    out += "/" + (typeof step === "number" ? String(step) : escapePointerToken(step));
  return out;
}
