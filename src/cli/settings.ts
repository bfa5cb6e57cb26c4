/**
 * @module
 * Turning command-line options into validated server settings, once, at start.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import {
  type CursorKey,
  cursorKeyFromSecret,
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOKENS_CAP,
  ephemeralCursorKey,
} from "../core/index.js";
import type { ToolSettings } from "../tools/index.js";

export class UsageError extends Error {}

export function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} takes a whole number ≥ 1 (got "${value}")`);
  return n;
}

export function settingsFrom(values: Record<string, unknown>): ToolSettings {
  const defaultMaxTokens = positiveInt(
    "default-max-tokens",
    values["default-max-tokens"] as string | undefined,
    DEFAULT_MAX_TOKENS,
  );
  const maxTokensCap = positiveInt(
    "max-tokens-cap",
    values["max-tokens-cap"] as string | undefined,
    DEFAULT_MAX_TOKENS_CAP,
  );
  const maxReadTokens = positiveInt(
    "max-read-tokens",
    values["max-read-tokens"] as string | undefined,
    DEFAULT_MAX_READ_TOKENS,
  );
  if (defaultMaxTokens > maxTokensCap) {
    throw new UsageError(
      `--default-max-tokens (${defaultMaxTokens}) is above --max-tokens-cap (${maxTokensCap})`,
    );
  }
  return { defaultMaxTokens, maxTokensCap, maxReadTokens };
}

/**
 * The cursor key: `--cursor-key-file`, else `PAGEWISE_CURSOR_KEY`, else (for `serve`) a random
 * per-process key, or (for one-shot terminal commands, which must accept the cursor the previous
 * command printed) a key kept in the user's config directory.
 */
export function loadCursorKey(keyFile: string | undefined, persistentFallback: boolean): CursorKey {
  if (keyFile !== undefined) {
    let material: Buffer;
    try {
      material = readFileSync(keyFile);
    } catch (err) {
      throw new UsageError(`cannot read --cursor-key-file ${keyFile}: ${(err as Error).message}`);
    }
    return cursorKeyFromSecret(material.toString("utf8"));
  }
  const env = process.env.PAGEWISE_CURSOR_KEY;
  if (env !== undefined && env !== "") return cursorKeyFromSecret(env);
  if (!persistentFallback) return ephemeralCursorKey();
  const dir = path.join(process.env.XDG_CONFIG_HOME ?? path.join(homedir(), ".config"), "pagewise");
  const file = path.join(dir, "cursor.key");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const key = ephemeralCursorKey();
    writeFileSync(file, key.secret.toString("base64"), { mode: 0o600, flag: "wx" });
  }
  return cursorKeyFromSecret(readFileSync(file, "utf8"));
}
