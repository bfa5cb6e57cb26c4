import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fdinfoMountId, MountTable, mountTypes, onLocalFileSystem } from "./local-fs.js";

describe("mountTypes", () => {
  it("reads each mount's id and type, whatever its optional fields and escaped paths", () => {
    const types = mountTypes(
      [
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
        "36 35 98:0 /mnt1 /mnt\\040with\\040spaces rw,noatime master:1 shared:7 - nfs4 srv:/export rw",
        "40 27 0:50 / /home/u/remote rw,nosuid,nodev - fuse.sshfs u@host: rw,user_id=0",
        "41 27 0:51 / /tmp rw - tmpfs tmpfs rw",
        "not a mount line",
        "",
      ].join("\n"),
    );
    expect([...types]).toEqual([
      [27, "ext4"],
      [36, "nfs4"],
      [40, "fuse.sshfs"],
      [41, "tmpfs"],
    ]);
  });
});

describe("MountTable", () => {
  it("reads the table again when stale, and for an unknown id not more than every 50 ms", () => {
    let reads = 0;
    const table = new MountTable(() => {
      reads++;
      return "27 1 254:0 / / rw - ext4 /dev/vda rw";
    });
    expect(table.typeOf(27, 0)).toBe("ext4");
    expect(reads).toBe(1);
    for (let i = 0; i < 100; i++) expect(table.typeOf(99, 10)).toBeUndefined();
    expect(reads).toBe(1);
    expect(table.typeOf(99, 61)).toBeUndefined();
    expect(reads).toBe(2);
    expect(table.typeOf(27, 900)).toBe("ext4");
    expect(reads).toBe(2);
    expect(table.typeOf(27, 1062)).toBe("ext4");
    expect(reads).toBe(3);
  });
});

describe("fdinfoMountId", () => {
  it("finds the mount id among the other fields", () => {
    expect(fdinfoMountId("pos:\t0\nflags:\t02100000\nmnt_id:\t27\nino:\t5333726\n")).toBe(27);
    expect(fdinfoMountId("pos:\t0\nflags:\t02100000\n")).toBeUndefined();
  });
});

describe.runIf(process.platform === "linux")("onLocalFileSystem", () => {
  it("says so for a file on this machine's disk, and not for a device node or a closed descriptor", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pagewise-local-fs-"));
    try {
      const file = path.join(dir, "a.txt");
      writeFileSync(file, "a\n");
      const fd = openSync(file, "r");
      try {
        // The temporary directory is on a local disk or tmpfs wherever the tests run.
        expect(onLocalFileSystem(fd)).toBe(true);
      } finally {
        closeSync(fd);
      }
      expect(onLocalFileSystem(fd)).toBe(false);
      // A device node lives on devtmpfs, which this does not vouch for.
      const device = openSync("/dev/null", "r");
      try {
        expect(onLocalFileSystem(device)).toBe(false);
      } finally {
        closeSync(device);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
