/**
 * @module
 * Listen addresses for `--http`: parsing `[HOST:]PORT` and telling loopback hosts. Kept apart from
 * the HTTP server so that the CLI can check its options without loading the HTTP stack.
 */
import { isIP } from "node:net";
import { DEFAULT_HTTP_HOST } from "./limits.js";

/** `[HOST:]PORT` → host and port; HOST may be `[v6]`. Throws with a plain message. */
export function parseListenAddress(spec: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:[\]]+|)(?::))?(\d{1,5})$/.exec(spec.trim());
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || !Number.isInteger(port) || port > 65535)
    throw new Error(`--http takes [HOST:]PORT, e.g. 8080 or 127.0.0.1:8080 (got "${spec}")`);
  let host = match[1] || DEFAULT_HTTP_HOST;
  if (host.startsWith("[")) host = host.slice(1, -1);
  return { host, port };
}

/** True for addresses only this machine can reach: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^::ffff:127\./.test(h) || h === "0:0:0:0:0:0:0:1";
  return false;
}
