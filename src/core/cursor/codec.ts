/**
 * @module
 * The cursor codec: short, self-contained, MAC-signed continuation tokens.
 *
 * Layout (then base64url): `format(1) keyId(2) issuedHour(varint) payload(…) mac(10)`.
 * The MAC is HMAC-SHA256 over the tool name, the caller's identity and every byte before it, so a
 * cursor is bound to its tool and caller without spending bytes on them: a cursor replayed by
 * another identity or passed to another tool fails the MAC check. The payload is the source's own
 * (path, position, version, …), written with `ByteWriter`.
 *
 * A cursor that carries a page budget other than the default has it after a dot, in decimal:
 * `…mac.BBBBBCCCCC`, the budget zero-padded to BUDGET_DIGITS and CHECK_DIGITS of a second MAC
 * over the bytes and the budget. Why not inside the bytes: a page is charged for its cursor, and
 * random base64 of other bytes costs ±16 tokens from one budget to the next, so a budget could be
 * refused between two that work. Digits of a fixed width cost the same in every tokenizer pagewise
 * counts with (they cut digits into groups by length alone), so the cursors of a page differ in
 * cost by nothing from one budget to the next. The check digits make a changed budget fail the
 * check (a change that would only give the caller the page size it could pass anyway).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { PagewiseError } from "../errors.js";
import { DEFAULT_CURSOR_TTL_HOURS, MAX_CURSOR_CHARS, MIN_CURSOR_KEY_BYTES } from "../limits.js";
import { ByteReader } from "./bytes.js";

const FORMAT = 1;
const MAC_BYTES = 10;
/** A budget is written zero-padded to this many digits (wider only from 100,000 on). */
const BUDGET_DIGITS = 5;
/** Decimal digits of the budget's check. */
const CHECK_DIGITS = 5;
const SHAPE = /^([A-Za-z0-9_-]+)(?:\.([0-9]+))?$/;
const HOUR_MS = 3_600_000;

export interface CursorKey {
  /** 32 bytes of HMAC key. */
  readonly secret: Buffer;
  /** A 16-bit id of the key, stored in cursors to tell "signed with another key" from "tampered". */
  readonly id: number;
  /** True when the key was generated for this process: its cursors die with the process. */
  readonly ephemeral: boolean;
}

/** A key from configured secret material (a key file's contents or an environment variable). */
export function cursorKeyFromSecret(material: string | Uint8Array): CursorKey {
  const bytes =
    typeof material === "string" ? Buffer.from(material.trim(), "utf8") : Buffer.from(material);
  if (bytes.length < MIN_CURSOR_KEY_BYTES) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `The cursor key must be at least ${MIN_CURSOR_KEY_BYTES} bytes long.`,
    );
  }
  const secret = createHash("sha256").update("pagewise cursor key\0").update(bytes).digest();
  return { secret, id: secret.readUInt16BE(30), ephemeral: false };
}

/** A random key for this process only. */
export function ephemeralCursorKey(): CursorKey {
  const secret = randomBytes(32);
  return { secret, id: secret.readUInt16BE(30), ephemeral: true };
}

export interface CursorCodecOptions {
  key: CursorKey;
  /** Cursors older than this are rejected. Default: 7 days. */
  ttlHours?: number;
  /** Clock, injectable for tests. */
  now?: () => number;
}

export class CursorCodec {
  readonly #key: CursorKey;
  readonly #ttlHours: number;
  readonly #now: () => number;

  constructor(options: CursorCodecOptions) {
    this.#key = options.key;
    this.#ttlHours = options.ttlHours ?? DEFAULT_CURSOR_TTL_HOURS;
    this.#now = options.now ?? Date.now;
  }

  /** Signs `payload` and the page `budget` (if not the default) for `tool` and `identity`. */
  encode(tool: string, identity: string, payload: Uint8Array, budget?: number): string {
    const hour = Math.floor(this.#now() / HOUR_MS);
    const head = [FORMAT, this.#key.id >> 8, this.#key.id & 0xff];
    let v = hour;
    while (v >= 0x80) {
      head.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    head.push(v);
    const body = Buffer.concat([Uint8Array.from(head), payload]);
    const mac = this.#mac(tool, identity, body);
    const signed = Buffer.concat([body, mac]).toString("base64url");
    const budgetText = budget === undefined ? undefined : budgetDigits(budget);
    const cursor =
      budgetText === undefined
        ? signed
        : `${signed}.${budgetText}${this.#budgetCheck(tool, identity, body, budgetText)}`;
    // Never hand out a cursor that decode would refuse: the call fails now, naming the limit.
    if (cursor.length > MAX_CURSOR_CHARS) throw cursorTooLong(cursor.length);
    return cursor;
  }

  /** Verifies a cursor and returns a reader positioned at its payload. Throws INVALID_CURSOR. */
  decode(tool: string, identity: string, cursor: string): ByteReader {
    return this.decodeWithBudget(tool, identity, cursor).reader;
  }

  /**
   * Verifies a cursor and returns a reader positioned at its payload, and the budget it carries
   * (undefined: the default). Throws INVALID_CURSOR.
   */
  decodeWithBudget(
    tool: string,
    identity: string,
    cursor: string,
  ): { reader: ByteReader; budget: number | undefined } {
    const shape =
      typeof cursor === "string" && cursor.length <= MAX_CURSOR_CHARS ? SHAPE.exec(cursor) : null;
    if (!shape) throw invalid("The cursor is not a pagewise cursor.");
    const text = shape[1]!;
    const digits = shape[2];
    const raw = Buffer.from(text, "base64url");
    // One spelling per cursor: Node's decoder ignores a dangling character and the unused low
    // bits of the last one, so several strings decode to these bytes; only the canonical one is
    // accepted. So is one spelling of the budget.
    const budgetText = digits?.slice(0, -CHECK_DIGITS);
    const budget = budgetText === undefined ? undefined : Number(budgetText);
    if (
      raw.toString("base64url") !== text ||
      raw.length < 4 + MAC_BYTES ||
      raw[0] !== FORMAT ||
      (budget !== undefined &&
        (!Number.isSafeInteger(budget) || budgetText !== budgetDigits(budget)))
    ) {
      throw invalid("The cursor is not a pagewise cursor.");
    }
    const keyId = (raw[1]! << 8) | raw[2]!;
    if (keyId !== this.#key.id) {
      throw invalid(
        this.#key.ephemeral
          ? "The cursor was made by another server process. This server signs cursors with a random per-process key, so cursors do not survive a restart; configure --cursor-key-file or PAGEWISE_CURSOR_KEY to keep them valid."
          : "The cursor was signed with a different key than this server's.",
      );
    }
    const body = raw.subarray(0, raw.length - MAC_BYTES);
    const mac = raw.subarray(raw.length - MAC_BYTES);
    if (!timingSafeEqual(mac, this.#mac(tool, identity, body))) {
      throw invalid(
        "The cursor was modified, belongs to another tool, or was issued to another caller.",
      );
    }
    if (
      budgetText !== undefined &&
      !timingSafeEqual(
        Buffer.from(digits!.slice(-CHECK_DIGITS)),
        Buffer.from(this.#budgetCheck(tool, identity, body, budgetText)),
      )
    ) {
      throw invalid("The cursor was modified: its max_tokens does not match its signature.");
    }
    const reader = new ByteReader(body);
    reader.raw(3);
    const hour = reader.uint();
    const nowHour = Math.floor(this.#now() / HOUR_MS);
    if (nowHour - hour > this.#ttlHours || hour > nowHour + 1) {
      throw invalid("The cursor has expired.");
    }
    return { reader, budget };
  }

  /** CHECK_DIGITS decimal digits of a MAC over the signed bytes and the budget's digits. */
  #budgetCheck(tool: string, identity: string, body: Uint8Array, budgetText: string): string {
    const mac = createHmac("sha256", this.#key.secret)
      .update(`pagewise-cursor-budget\0${tool}\0${identity}\0${budgetText}\0`)
      .update(body)
      .digest();
    return String(mac.readUInt32BE(0) % 10 ** CHECK_DIGITS).padStart(CHECK_DIGITS, "0");
  }

  #mac(tool: string, identity: string, body: Uint8Array): Buffer {
    return createHmac("sha256", this.#key.secret)
      .update(`pagewise-cursor\0${tool}\0${identity}\0`)
      .update(body)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}

/** A budget's one spelling: zero-padded to BUDGET_DIGITS, so that every budget costs the same. */
function budgetDigits(budget: number): string {
  if (!Number.isSafeInteger(budget) || budget < 0) throw new RangeError(`not a budget: ${budget}`);
  return String(budget).padStart(BUDGET_DIGITS, "0");
}

function invalid(message: string): PagewiseError {
  return new PagewiseError("INVALID_CURSOR", message, {
    hint: "Start again without a cursor to get a fresh one.",
  });
}

function cursorTooLong(length: number): PagewiseError {
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The next page's cursor would be ${length} characters long, more than the ${MAX_CURSOR_CHARS} a cursor may have: it carries the call's path and arguments.`,
    {
      limit: { name: "max_cursor_chars", limit: MAX_CURSOR_CHARS, value: length },
      hint: "Use a shorter path or pattern, or a budget that holds the whole answer.",
    },
  );
}
