/**
 * Line positions: with or without checkpoints, findLineStart gives the same answer; with the
 * checkpoints of an earlier scan, a deep offset reads at most a chunk or two (counted, not timed).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ByteSource, STREAM_CHUNK_BYTES } from "../../core/index.js";
import { findLineStart, type LineCheckpoints, memoryByteSource } from "./byte-source.js";

function counting(source: ByteSource): ByteSource & { bytesRead: number } {
  const counted = {
    size: source.size,
    bytesRead: 0,
    async read(position: number, length: number) {
      const bytes = await source.read(position, length);
      counted.bytesRead += bytes.length;
      return bytes;
    },
  };
  return counted;
}

describe("findLineStart", () => {
  it("gives the same line start with checkpoints as without (property)", async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `${i} ${"x".repeat((i * 37) % 160)}\n`);
    const bytes = Buffer.from(lines.join(""));
    expect(bytes.length).toBeGreaterThan(2 * STREAM_CHUNK_BYTES);
    const source = memoryByteSource(bytes);
    const index: LineCheckpoints = { newlinesBefore: [0] };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 31_000 }), async (line) => {
        const plain = await findLineStart(source, line);
        const indexed = await findLineStart(source, line, undefined, index);
        expect(indexed).toEqual(plain);
        if (line < lines.length) {
          expect(plain.byte).toBe(Buffer.byteLength(lines.slice(0, line).join("")));
          expect(plain.line).toBe(line + 1);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("reads at most two chunks for a deep line once the checkpoints are known", async () => {
    const text = "a line of text\n".repeat(500_000); // ~7 MiB
    const source = counting(memoryByteSource(Buffer.from(text)));
    const index: LineCheckpoints = { newlinesBefore: [0] };
    await findLineStart(source, 499_990, undefined, index);
    expect(source.bytesRead).toBeGreaterThan(6 * STREAM_CHUNK_BYTES);
    source.bytesRead = 0;
    const again = await findLineStart(source, 499_000, undefined, index);
    expect(again.byte).toBe(499_000 * 15);
    expect(source.bytesRead).toBeLessThanOrEqual(2 * STREAM_CHUNK_BYTES);
  });
});
