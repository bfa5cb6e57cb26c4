/**
 * @module
 * Content versions of files, cheap on the common path.
 *
 * A version is content-derived (SHA-256 of the bytes, so the same bytes give the same version on any
 * machine). Hashing a large file on every page would make a continuation cost O(file), so the hash is
 * cached under the file's identity `(dev, ino, size, mtime ns, ctime ns)` and trusted while that
 * identity is unchanged. ctime cannot be set by user space, so a same-size rewrite with mtime put back
 * still changes the identity. Timestamps are coarse (a kernel tick), so a write in the same tick as an
 * earlier one may leave them unchanged: an identity whose mtime or ctime is within `RACY_WINDOW_NS` of
 * the moment hashing began is "racily clean" and never trusted; such files are re-hashed on every
 * call until they have been quiet for that long.
 *
 * A cursor carries a short fingerprint of the trusted identity it was issued under, so a
 * continuation after a restart, or on another replica seeing the same file system, also skips the
 * hash when the identity matches.
 */

import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { PagewiseError } from "../errors.js";
import type { OpenFile } from "../io/byte-source.js";
import { RACY_WINDOW_NS, STREAM_CHUNK_BYTES, VERSION_CACHE_ENTRIES } from "../limits.js";

/** Bytes of the content hash kept in cursors (version equality check). */
export const VERSION_DIGEST_BYTES = 8;
/** Bytes of the identity fingerprint kept in cursors. */
export const FINGERPRINT_BYTES = 6;

export interface FileVersion {
  /** The opaque version string shown to callers. */
  readonly version: string;
  /** First bytes of the content hash, for cursors. */
  readonly digest: Uint8Array;
  /** Fingerprint of the identity this version was computed under; empty when not trusted. */
  readonly fingerprint: Uint8Array;
  /** Whether the whole file is valid UTF-8. */
  readonly utf8: boolean;
  /** Byte offset of the first byte that is not valid UTF-8, when `utf8` is false. */
  readonly firstInvalidByte?: number;
  /** Size in bytes of the content the version describes. */
  readonly size: number;
}

interface CacheEntry {
  readonly info: FileVersion;
  readonly key: string;
}

export function identityKey(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function fingerprintOf(st: BigIntStats): Uint8Array {
  return createHash("sha256").update(identityKey(st)).digest().subarray(0, FINGERPRINT_BYTES);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function wallClockNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** What a cursor remembers about the version it was issued under. */
export interface VersionExpectation {
  digest: Uint8Array;
  fingerprint: Uint8Array;
}

export class FileVersions {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #capacity: number;

  constructor(capacity = VERSION_CACHE_ENTRIES) {
    this.#capacity = capacity;
  }

  /**
   * The version of the file open on `fh`, whose current stat is `st`. With `expect` (from a cursor)
   * a matching trusted fingerprint short-cuts the hash entirely.
   */
  async versionOf(
    fh: OpenFile,
    st: BigIntStats,
    expect?: VersionExpectation,
    signal?: AbortSignal,
  ): Promise<FileVersion> {
    return (await this.versionAndStat(fh, st, expect, signal)).version;
  }

  /**
   * `versionOf`, plus the stat the version describes: `st` itself when the version is known by
   * identity (no I/O), else the stat taken after hashing (the file may have been hashed again
   * under a new identity). Callers need no second fstat to know what the version covers.
   */
  async versionAndStat(
    fh: OpenFile,
    st: BigIntStats,
    expect?: VersionExpectation,
    signal?: AbortSignal,
  ): Promise<{ version: FileVersion; stat: BigIntStats }> {
    if (expect && expect.fingerprint.length > 0) {
      const fp = fingerprintOf(st);
      if (sameBytes(fp, expect.fingerprint)) {
        const digest = expect.digest;
        const version = {
          version: versionString(digest),
          digest,
          fingerprint: fp,
          utf8: true,
          size: Number(st.size),
        };
        return { version, stat: st };
      }
    }
    const key = identityKey(st);
    const hit = this.#cache.get(key);
    if (hit) {
      // Refresh LRU position.
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      return { version: hit.info, stat: st };
    }
    return this.#hash(fh, st, signal);
  }

  async #hash(
    fh: OpenFile,
    st: BigIntStats,
    signal: AbortSignal | undefined,
  ): Promise<{ version: FileVersion; stat: BigIntStats }> {
    let key = identityKey(st);
    for (let attempt = 0; attempt < 3; attempt++) {
      const startedNs = wallClockNs();
      const hashed = await hashFile(fh, signal);
      const after = await fh.stat({ bigint: true });
      if (identityKey(after) !== key && attempt < 2) {
        // The file changed while it was hashed: hash again under its new identity.
        st = after;
        key = identityKey(st);
        continue;
      }
      if (identityKey(after) !== key) {
        throw new PagewiseError(
          "CONTENT_CHANGED",
          "The file kept changing while it was read; try again when it is no longer being written.",
        );
      }
      const newest = st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs;
      const trusted = newest + RACY_WINDOW_NS < startedNs;
      const info: FileVersion = {
        version: versionString(hashed.digest),
        digest: hashed.digest.subarray(0, VERSION_DIGEST_BYTES),
        fingerprint: trusted ? fingerprintOf(st) : new Uint8Array(0),
        utf8: hashed.firstInvalidByte === undefined,
        size: hashed.size,
        ...(hashed.firstInvalidByte !== undefined
          ? { firstInvalidByte: hashed.firstInvalidByte }
          : {}),
      };
      if (trusted) this.#remember(key, info);
      return { version: info, stat: after };
    }
    throw new PagewiseError("INTERNAL_ERROR", "unreachable");
  }

  /**
   * True when `st` was modified so recently that an unchanged identity would not prove unchanged
   * bytes (see RACY_WINDOW_NS). Callers may then snapshot small files whole.
   */
  static isRacy(st: BigIntStats): boolean {
    const newest = st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs;
    return newest + RACY_WINDOW_NS >= wallClockNs();
  }

  /** The version of bytes already in memory (a snapshot); never trusted by identity. */
  static versionOfBytes(bytes: Uint8Array): FileVersion {
    const digest = createHash("sha256").update(bytes).digest();
    const firstInvalid = isUtf8(bytes) ? undefined : firstInvalidUtf8(bytes);
    return {
      version: versionString(digest),
      digest: digest.subarray(0, VERSION_DIGEST_BYTES),
      fingerprint: new Uint8Array(0),
      utf8: firstInvalid === undefined,
      size: bytes.length,
      ...(firstInvalid !== undefined ? { firstInvalidByte: firstInvalid } : {}),
    };
  }

  /** Throws CONTENT_CHANGED unless `current` is the version a cursor expects. */
  static check(current: FileVersion, expect: VersionExpectation): void {
    if (!sameBytes(current.digest.subarray(0, expect.digest.length), expect.digest)) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        "The file changed since this cursor was issued. Start again without a cursor to read the current version.",
        { hint: "Call again with the same arguments but no cursor." },
      );
    }
  }

  #remember(key: string, info: FileVersion): void {
    this.#cache.set(key, { key, info });
    if (this.#cache.size > this.#capacity) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }
}

/** The version string: base64url of the first 8 bytes of the SHA-256 of the content. */
export function versionString(digest: Uint8Array): string {
  return Buffer.from(digest.subarray(0, VERSION_DIGEST_BYTES)).toString("base64url");
}

interface HashResult {
  digest: Uint8Array;
  size: number;
  firstInvalidByte?: number;
}

/** Streams the whole file through SHA-256 and a UTF-8 validator, in fixed-size chunks. */
async function hashFile(fh: OpenFile, signal?: AbortSignal): Promise<HashResult> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(STREAM_CHUNK_BYTES + 4);
  let position = 0;
  let carry = 0; // bytes of an incomplete UTF-8 sequence kept at the start of the buffer
  let firstInvalidByte: number | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const { bytesRead } = await fh.read(buffer, carry, STREAM_CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(carry, carry + bytesRead));
    const filled = carry + bytesRead;
    if (firstInvalidByte === undefined) {
      const complete = completeUtf8Length(buffer, filled);
      if (!isUtf8(buffer.subarray(0, complete))) {
        firstInvalidByte = position - carry + firstInvalidUtf8(buffer.subarray(0, complete));
      } else {
        buffer.copy(buffer, 0, complete, filled);
        carry = filled - complete;
      }
    }
    if (firstInvalidByte !== undefined) carry = 0;
    position += bytesRead;
  }
  if (firstInvalidByte === undefined && carry > 0) firstInvalidByte = position - carry;
  return {
    digest: hash.digest(),
    size: position,
    ...(firstInvalidByte !== undefined ? { firstInvalidByte } : {}),
  };
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
