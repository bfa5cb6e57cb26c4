/**
 * @module
 * An open file by its raw descriptor. Perf: a `FileHandle` has no synchronous close, so every
 * close was a thread-pool round trip (100–130 µs of CPU on a small VM), and its promise API costs
 * about a tenth more per call than the callback one. On a local file system (local-fs.ts) the
 * descriptor's fstat and close run on the serving thread; everything else goes through the thread
 * pool, as before.
 *
 * What `FileHandle` did and a raw descriptor must do by hand: a close waits for the reads in
 * flight (the number could otherwise be reused by another open while a read is pending), and a
 * descriptor that is dropped without a close is closed when collected.
 *
 * A close can wait even on a local file system: closing the last descriptor of a file that was
 * deleted meanwhile (a rotated log) frees its blocks inside `close` — 0.5 s for 4 GiB on ext4. So
 * only a file still linked and at most CLOSE_IN_PLACE_MAX_BYTES is closed on the serving thread.
 */
import { type BigIntStats, close, closeSync, fstat, fstatSync, open, read } from "node:fs";
import type { OpenFile } from "../core/index.js";
import { onLocalFileSystem } from "./local-fs.js";

/**
 * Largest file closed on the serving thread, in bytes: should it be deleted between the fstat that
 * finds it linked and the close, freeing it costs at most a few milliseconds (4.6 ms for 64 MiB).
 */
const CLOSE_IN_PLACE_MAX_BYTES = 64 << 20;

/** Closes made on the serving thread and in the thread pool (tests count them). */
export const descriptorCloses = { inPlace: 0, inPool: 0 };

/** Whether closing a descriptor whose file is now `st` cannot wait on freeing the file's blocks. */
export function closesInPlace(st: { readonly nlink: number; readonly size: number }): boolean {
  return st.nlink > 0 && st.size <= CLOSE_IN_PLACE_MAX_BYTES;
}

/** Closes descriptors whose owner was collected without closing them. */
const unclosed = new FinalizationRegistry<number>((fd) => close(fd, () => undefined));

export class Descriptor implements OpenFile {
  readonly fd: number;
  /** On a local file system: fstat and close run on the serving thread. */
  readonly local: boolean;
  #pending = 0;
  #closing: Promise<void> | undefined;
  #settled: (() => void) | undefined;

  constructor(fd: number) {
    this.fd = fd;
    this.local = onLocalFileSystem(fd);
    unclosed.register(this, fd, this);
  }

  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }> {
    if (this.#closing) return Promise.reject(closedError());
    this.#pending++;
    return new Promise((resolve, reject) => {
      read(this.fd, buffer, offset, length, position, (err, bytesRead) => {
        if (--this.#pending === 0) this.#settled?.();
        if (err) reject(err);
        else resolve({ bytesRead });
      });
    });
  }

  stat(_options?: { bigint: true }): Promise<BigIntStats> {
    if (this.#closing) return Promise.reject(closedError());
    if (this.local) {
      try {
        return Promise.resolve(fstatSync(this.fd, { bigint: true }));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise((resolve, reject) => {
      fstat(this.fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(st)));
    });
  }

  /** Closes the descriptor once the reads in flight are done; later calls return the same. */
  close(): Promise<void> {
    this.#closing ??= this.#afterReads().then(() => this.#release());
    return this.#closing;
  }

  #afterReads(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#settled = resolve;
    });
  }

  #release(): Promise<void> {
    unclosed.unregister(this);
    if (this.local && this.#closesInPlace()) {
      descriptorCloses.inPlace++;
      closeSync(this.fd);
      return Promise.resolve();
    }
    descriptorCloses.inPool++;
    return new Promise((resolve, reject) =>
      close(this.fd, (err) => (err ? reject(err) : resolve())),
    );
  }

  #closesInPlace(): boolean {
    try {
      return closesInPlace(fstatSync(this.fd));
    } catch {
      return false;
    }
  }
}

/** Opens `path` with `flags` (read-only, as every open of pagewise). */
export function openDescriptor(path: string, flags: number): Promise<Descriptor> {
  return new Promise((resolve, reject) => {
    open(path, flags, (err, fd) => (err ? reject(err) : resolve(new Descriptor(fd))));
  });
}

function closedError(): Error {
  return Object.assign(new Error("The file was closed."), { code: "EBADF" });
}
