/**
 * Throughput of the tokenizer and of typical queries on a generated 50 MB document. Skipped unless
 * PAGEWISE_BENCH=1 (it takes seconds and measures the machine as much as the code):
 *   PAGEWISE_BENCH=1 npx vitest run src/json/throughput.test.ts
 */
import { describe, test } from "vitest";
import { DEFAULT_JSON_LIMITS } from "./limits.js";
import { compileQuery, runQuery } from "./query.js";
import { bufferReader } from "./reader.js";
import { NULL_SINK, Tokenizer } from "./tokenizer.js";

const CHUNK = 64 * 1024;

function generate(targetBytes: number): Uint8Array {
  const parts: string[] = ["["];
  let size = 0;
  for (let k = 0; size < targetBytes; k++) {
    const rec = JSON.stringify({
      id: k,
      name: `user-${k}`,
      email: `u${k}@example.com`,
      active: k % 3 === 0,
      score: k * 1.25,
      tags: ["a", "bb", "ccc"],
      nested: { x: k, y: [1, 2, 3], note: "héllo wörld" },
    });
    parts.push(k ? `,${rec}` : rec);
    size += rec.length + 1;
  }
  parts.push("]");
  return new TextEncoder().encode(parts.join(""));
}

function cpuMs(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

describe.skipIf(!process.env.PAGEWISE_BENCH)("throughput", () => {
  const bytes = generate(50e6);
  const mb = bytes.length / 1e6;

  test("tokenizer", () => {
    for (let run = 0; run < 5; run++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const tok = new Tokenizer("json", DEFAULT_JSON_LIMITS, NULL_SINK);
      tok.start();
      for (let p = 0; p < bytes.length; p += CHUNK) tok.feed(bytes.subarray(p, p + CHUNK));
      tok.end();
      const wall = performance.now() - t0;
      const cpu = cpuMs(c0);
      console.log(
        `tokenizer ${mb.toFixed(1)} MB: ${(mb / (wall / 1000)).toFixed(0)} MB/s wall, ${(mb / (cpu / 1000)).toFixed(0)} MB/s cpu`,
      );
    }
  });

  test.each(["$[*].name", "$..name", "$[?@.score > 1000000].id", "$[-1].id"])(
    "query %s",
    async (q) => {
      const compiled = compileQuery("jsonpath", q);
      for (let run = 0; run < 2; run++) {
        const c0 = process.cpuUsage();
        let n = 0;
        for await (const _ of runQuery(bufferReader(bytes), "json", compiled, undefined, {
          maxBufferedMatches: 10_000_000,
        }))
          n++;
        const cpu = cpuMs(c0);
        console.log(`${q}: ${n} matches, ${(mb / (cpu / 1000)).toFixed(0)} MB/s cpu`);
      }
    },
  );
});
