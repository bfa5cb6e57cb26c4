/**
 * @module
 * Versions of files: O(1) to take whatever the file's size, and changed by every write.
 * docs/versions.md gives the whole argument; in short:
 *
 * - A **state version** is a digest of the file's state: inode, size, mtime and ctime in
 *   nanoseconds. Every write stamps a new ctime, and no user can set ctime (only the clock), so a
 *   same-size rewrite with its mtime put back still changes the state. The device number is left
 *   out: it differs between machines that mount one shared directory, while inode, size and
 *   timestamps are the server's own, so replicas serving one file agree on its version.
 * - Timestamps are coarse: a write in the same clock tick as the last one stamps the same ctime.
 *   So a state proves its bytes only once it is **settled**: its ctime is a racy window in the past
 *   (FINE_RACY_WINDOW_NS on a local file system with sub-second timestamps, RACY_WINDOW_NS
 *   otherwise), or it was seen unchanged across such a window. A state version is handed out only
 *   for a settled state (`settle` waits for one, briefly), and then any later write changes it.
 * - A **content version** is the SHA-256 of bytes read whole into memory: what a small file that
 *   is being written at the moment gets (sources snapshot it), so its page and version come from
 *   the same bytes without waiting. Content versions are cached under the file's state once that
 *   state is settled, for the continuations of their cursors.
 *
 * A cursor carries the version's digest and its `fingerprint` (the kind: empty for a state
 * version, CONTENT_VERSION_TAG for a content version), so a continuation re-checks the same kind.
 */

import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { PagewiseError } from "../errors.js";
import type { OpenFile } from "../io/byte-source.js";
import {
  FINE_RACY_WINDOW_NS,
  RACY_WINDOW_NS,
  SETTLE_ATTEMPTS,
  VERSION_CACHE_ENTRIES,
} from "../limits.js";

/** Bytes of the version digest kept in cursors (version equality check). */
export const VERSION_DIGEST_BYTES = 8;
/** What a cursor carries beside the digest of a content version (a state version carries none). */
export const CONTENT_VERSION_TAG: Uint8Array = Uint8Array.of(0x63);

export interface FileVersion {
  /** The opaque version string shown to callers. */
  readonly version: string;
  /** The version's digest, as cursors keep it. */
  readonly digest: Uint8Array;
  /** The version's kind, as cursors keep it: empty (state) or CONTENT_VERSION_TAG. */
  readonly fingerprint: Uint8Array;
  /**
   * Whether the whole file is valid UTF-8: known for a content version (its bytes were all read);
   * undefined for a state version, whose pages check the bytes they decode.
   */
  readonly utf8?: boolean;
  /** Byte offset of the first byte that is not valid UTF-8, when `utf8` is false. */
  readonly firstInvalidByte?: number;
  /** Size in bytes of the content the version describes. */
  readonly size: number;
}

/** What a cursor remembers about the version it was issued under. */
export interface VersionExpectation {
  digest: Uint8Array;
  fingerprint: Uint8Array;
}

/**
 * The state a version is taken from: inode, size, mtime and ctime in nanoseconds. Not the device
 * number, which differs between replicas mounting one shared directory.
 */
export function identityKey(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** Whether two stats of one file show the same state (see identityKey). */
export function sameState(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** The version of a settled state (see `settle`): O(1), and the same on every replica. */
export function stateVersion(st: BigIntStats): FileVersion {
  const digest = createHash("sha256")
    .update(`pagewise-state\0${identityKey(st)}`)
    .digest()
    .subarray(0, VERSION_DIGEST_BYTES);
  return {
    version: versionString(digest),
    digest,
    fingerprint: new Uint8Array(0),
    size: Number(st.size),
  };
}

/** Whether a cursor's expectation names a content version. */
export function isContentExpectation(expect: VersionExpectation): boolean {
  return sameBytes(expect.fingerprint, CONTENT_VERSION_TAG);
}

/**
 * The racy window of a file whose state is `st`: FINE_RACY_WINDOW_NS where its timestamps come
 * from this machine's clock (`localClock`: a local file system) and have sub-second precision,
 * RACY_WINDOW_NS otherwise (a ctime on a whole second says the file system keeps whole seconds).
 */
export function racyWindowNs(st: BigIntStats, localClock: boolean): bigint {
  const wholeSecond = st.ctimeNs % 1_000_000_000n === 0n;
  return localClock && !wholeSecond ? FINE_RACY_WINDOW_NS : RACY_WINDOW_NS;
}

/**
 * Nanoseconds until `st` is settled by the clock (its ctime a racy window in the past); 0 when it
 * is. A ctime in the future (a clock set back, or a server's clock ahead) is not settled.
 */
export function unsettledNs(st: BigIntStats, localClock: boolean, nowNs: bigint): bigint {
  const until = st.ctimeNs + racyWindowNs(st, localClock);
  return until > nowNs ? until - nowNs : 0n;
}

/** The wall clock and the timer `settle` waits with (tests give their own). */
export interface VersionClock {
  nowNs(): bigint;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: VersionClock = {
  nowNs: () => BigInt(Date.now()) * 1_000_000n,
  async sleep(ms, signal) {
    try {
      await sleep(ms, undefined, signal ? { signal } : undefined);
    } catch (e) {
      signal?.throwIfAborted();
      throw e;
    }
  },
};

export interface SettleOptions {
  /** The file's timestamps are stamped by this machine's clock (a local file system). */
  readonly localClock: boolean;
  readonly signal?: AbortSignal;
}

export class FileVersions {
  /** Content versions by the settled state they were read under (identityKey). */
  readonly #content = new Map<string, FileVersion>();
  readonly #capacity: number;
  readonly #clock: VersionClock;

  constructor(capacity = VERSION_CACHE_ENTRIES, clock: VersionClock = systemClock) {
    this.#capacity = capacity;
    this.#clock = clock;
  }

  /** Whether `st` is within its racy window now. */
  isRacy(st: BigIntStats, localClock: boolean): boolean {
    return unsettledNs(st, localClock, this.#clock.nowNs()) > 0n;
  }

  /**
   * A settled state of the file open on `fh`, starting from its stat `st`: `st` itself when its
   * ctime is a racy window in the past (no I/O); otherwise, after waiting out what is left of the
   * window (at most one window), the state seen then if it did not move meanwhile. A file that
   * keeps changing is waited for SETTLE_ATTEMPTS times, then CONTENT_CHANGED.
   *
   * Why a state seen unchanged across a window is settled, whatever the clocks say: a write after
   * the second look would stamp a ctime at least one tick later than the first look, so it would
   * change the state; writes before it are in the bytes a read makes from then on.
   */
  async settle(fh: OpenFile, st: BigIntStats, options: SettleOptions): Promise<BigIntStats> {
    for (let attempt = 0; ; attempt++) {
      const left = unsettledNs(st, options.localClock, this.#clock.nowNs());
      if (left === 0n) return st;
      if (attempt === SETTLE_ATTEMPTS) throw keptChanging(racyWindowNs(st, options.localClock));
      const window = racyWindowNs(st, options.localClock);
      const waitNs = left < window ? left : window;
      // A millisecond more: timers count whole milliseconds.
      await this.#clock.sleep(Math.ceil(Number(waitNs) / 1e6) + 1, options.signal);
      const after = await fh.stat({ bigint: true });
      if (sameState(after, st)) return st;
      st = after;
    }
  }

  /** The content version read under the settled state `st`, if one is remembered. */
  contentVersionAt(st: BigIntStats): FileVersion | undefined {
    const key = identityKey(st);
    const hit = this.#content.get(key);
    if (hit) {
      // Refresh its LRU position.
      this.#content.delete(key);
      this.#content.set(key, hit);
    }
    return hit;
  }

  /** Remembers the content version of bytes read whole under the settled state `st`. */
  rememberContentVersion(st: BigIntStats, version: FileVersion): void {
    this.#content.set(identityKey(st), version);
    if (this.#content.size > this.#capacity) {
      const oldest = this.#content.keys().next().value;
      if (oldest !== undefined) this.#content.delete(oldest);
    }
  }

  /** The content version of bytes already in memory (a snapshot). */
  static versionOfBytes(bytes: Uint8Array): FileVersion {
    const digest = createHash("sha256").update(bytes).digest().subarray(0, VERSION_DIGEST_BYTES);
    const firstInvalid = isUtf8(bytes) ? undefined : firstInvalidUtf8(bytes);
    return {
      version: versionString(digest),
      digest,
      fingerprint: CONTENT_VERSION_TAG,
      utf8: firstInvalid === undefined,
      size: bytes.length,
      ...(firstInvalid !== undefined ? { firstInvalidByte: firstInvalid } : {}),
    };
  }

  /** Throws CONTENT_CHANGED unless `current` is the version (digest and kind) a cursor expects. */
  static check(current: FileVersion, expect: VersionExpectation): void {
    if (
      !sameBytes(current.digest, expect.digest) ||
      !sameBytes(current.fingerprint, expect.fingerprint)
    ) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        "The file changed since this cursor was issued. Start again without a cursor to read the current version.",
        { hint: "Call again with the same arguments but no cursor." },
      );
    }
  }
}

function keptChanging(windowNs: bigint): PagewiseError {
  const ms = Number(windowNs / 1_000_000n);
  return new PagewiseError(
    "CONTENT_CHANGED",
    `The file is being written continuously: it was written again each of the ${SETTLE_ATTEMPTS} times it was given ${ms} ms to be still, so no page of one version could be read. Try again when it is no longer being written; a growing log reads best with tail.`,
    { hint: "Call again later, or read a growing log with tail." },
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The version string: base64url of the version digest (8 bytes). */
export function versionString(digest: Uint8Array): string {
  return Buffer.from(digest.subarray(0, VERSION_DIGEST_BYTES)).toString("base64url");
}

/**
 * Length of the prefix of `bytes[0..length)` that does not end inside a multi-byte UTF-8 sequence
 * (the tail may be the start of a character split across chunks).
 */
export function completeUtf8Length(bytes: Uint8Array, length: number): number {
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  let i = length - 1;
  let back = 0;
  while (i >= 0 && back < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return length;
  const lead = bytes[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length - i < need && lead >= 0xc0 ? i : length;
}

/**
 * Offset of the first byte of `bytes` that starts an invalid UTF-8 sequence (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF); `bytes.length` when all are valid. Only used
 * on the failure path, so it favours clarity over speed.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if ((c & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return n;
}
