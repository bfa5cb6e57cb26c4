/**
 * @module
 * Whether an open descriptor's file lives on a local file system: there `fstat` answers from the
 * kernel's in-memory inode and never waits on a device, a server or a daemon, so it may run on the
 * thread that serves requests (a thread-pool round trip costs 20–100x the CPU of the call itself).
 * Network and user-space file systems (NFS, SMB, FUSE, 9p…) may block while their server does not
 * answer, so their descriptors keep the thread pool, as does everything where this cannot be told.
 *
 * Linux only: the descriptor's mount id (`/proc/self/fdinfo/N`) names its mount in
 * `/proc/self/mountinfo`, which gives the file system type. Both are read synchronously: procfs
 * answers from the kernel's memory.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** File system types whose `fstat` of an open descriptor never waits. */
const LOCAL_TYPES = new Set([
  "ext2",
  "ext3",
  "ext4",
  "xfs",
  "btrfs",
  "f2fs",
  "bcachefs",
  "jfs",
  "reiserfs",
  "zfs",
  "tmpfs",
  "ramfs",
  "overlay",
  "squashfs",
  "erofs",
  "iso9660",
  "udf",
  "vfat",
  "exfat",
  "ntfs3",
  "hfsplus",
]);

/** How long a reading of the mount table is trusted (a freed mount id may be reused). */
const MOUNTS_TTL_MS = 1000;
/** How soon a mount id not in the table may have the table read again (a mount made since). */
const UNKNOWN_MOUNT_RETRY_MS = 50;

/** Mount id → file system type, from one `mountinfo` text. */
export function mountTypes(mountinfo: string): Map<number, string> {
  const types = new Map<number, string>();
  for (const line of mountinfo.split("\n")) {
    // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue": the
    // optional fields end at " - ", then the type (proc(5)).
    const dash = line.indexOf(" - ");
    if (dash < 0) continue;
    const id = Number.parseInt(line, 10);
    const type = line.slice(dash + 3).split(" ", 1)[0];
    if (Number.isInteger(id) && type) types.set(id, type);
  }
  return types;
}

/** The mount id in a `/proc/self/fdinfo/N` text, or undefined. */
export function fdinfoMountId(fdinfo: string): number | undefined {
  const match = /^mnt_id:\s*(\d+)$/m.exec(fdinfo);
  return match ? Number(match[1]) : undefined;
}

/**
 * Mount id → file system type, from a mount table read again once stale (a freed mount id may be
 * reused), and for an id not in it (a mount made since, or a file of another mount namespace) at
 * most every UNKNOWN_MOUNT_RETRY_MS: a table can be long on a host with many containers.
 */
export class MountTable {
  #types = new Map<number, string>();
  #readAt = Number.NEGATIVE_INFINITY;
  readonly #read: () => string;

  constructor(read: () => string = () => readFileSync("/proc/self/mountinfo", "latin1")) {
    this.#read = read;
  }

  typeOf(id: number, now: number = Date.now()): string | undefined {
    const age = now - this.#readAt;
    if (age > MOUNTS_TTL_MS || (!this.#types.has(id) && age > UNKNOWN_MOUNT_RETRY_MS)) {
      this.#types = mountTypes(this.#read());
      this.#readAt = now;
    }
    return this.#types.get(id);
  }
}

const MOUNTS = new MountTable();

const FDINFO = Buffer.alloc(512);

/** The descriptor's file is on a local file system (false when that cannot be told). */
export function onLocalFileSystem(fd: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    const info = openSync(`/proc/self/fdinfo/${fd}`, "r");
    let length: number;
    try {
      length = readSync(info, FDINFO, 0, FDINFO.length, 0);
    } finally {
      closeSync(info);
    }
    const id = fdinfoMountId(FDINFO.toString("latin1", 0, length));
    if (id === undefined) return false;
    const type = MOUNTS.typeOf(id);
    return type !== undefined && LOCAL_TYPES.has(type);
  } catch {
    return false;
  }
}
