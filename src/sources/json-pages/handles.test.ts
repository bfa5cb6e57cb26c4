import { describe, expect, it } from "vitest";
import { JsonHandles } from "./handles.js";

const base = {
  identity: "alice",
  realPath: "/r/a.json",
  format: "json" as const,
  digest: new Uint8Array(8),
  fingerprint: new Uint8Array(6),
  version: "v",
};

describe("JsonHandles", () => {
  it("expires idle handles, refreshes on use, and hides other callers' handles", () => {
    let now = 0;
    const handles = new JsonHandles({ ttlMs: 100, now: () => now });
    const h = handles.add(base);
    expect(h.fileId).toMatch(/^f_[A-Za-z0-9_-]{12}$/);
    now = 90;
    expect(handles.get(h.fileId, "alice").realPath).toBe("/r/a.json");
    now = 180; // 90 ms after the last use
    expect(handles.get(h.fileId, "alice").format).toBe("json");
    expect(() => handles.get(h.fileId, "bob")).toThrow(
      expect.objectContaining({ code: "HANDLE_EXPIRED" }),
    );
    expect(handles.close(h.fileId, "bob")).toBe(false);
    now = 281;
    expect(() => handles.get(h.fileId, "alice")).toThrow(
      expect.objectContaining({ code: "HANDLE_EXPIRED" }),
    );
    expect(handles.close(h.fileId, "alice")).toBe(false);
  });

  it("closes the least recently used handle beyond the maximum; closing twice is false", () => {
    const handles = new JsonHandles({ maxHandles: 2 });
    const a = handles.add(base);
    const b = handles.add(base);
    handles.get(a.fileId, "alice"); // b is now the least recently used
    const c = handles.add(base);
    expect(handles.size).toBe(2);
    expect(() => handles.get(b.fileId, "alice")).toThrow(/json_open|closed|expired/);
    expect(handles.close(a.fileId, "alice")).toBe(true);
    expect(handles.close(a.fileId, "alice")).toBe(false);
    expect(handles.close(c.fileId, "alice")).toBe(true);
  });
});
