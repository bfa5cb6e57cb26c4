/**
 * @module
 * Generated benchmark data shared by several benchmarks, made once under `.bench-data/` and reused
 * while the generator's version is unchanged:
 *
 * - `ensureSourceTree(files)`: a tree of TypeScript-like source files (20 a directory, three
 *   levels, ~1.5 KiB each, deterministic), with rare `new TimeoutError(` / `new RetryError(` lines;
 * - `ensureJson(name, bytes, kind)`: orders as JSON Lines (`"jsonl"`) or one pretty JSON document
 *   (`"json"`, `{"meta":…,"orders":[…]}`) of about `bytes` bytes.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { DATA_DIR, fmtBytes, log, MiB, QUIET_MS } from "./harness.js";

const GENERATOR_VERSION = 1;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

const WORDS =
  "account action adapter agent alert api archive asset auth batch billing blob buffer build cache card cart channel client cluster codec config context cursor data device digest domain driver email engine entity event export feed fetch field file filter format gateway graph group handler hash header index input item job key label layout ledger limit link loader lock log mailer map media merge message metric model module monitor node order pager parser patch payment peer pipeline plan plugin policy pool post price profile proxy query queue quota record region render report request resource retry role route rule runner schema scope search secret session shard signal slot snapshot socket source span state status store stream table task template tenant thread ticket timer token topic trace tree upload user vault version view worker writer zone".split(
    " ",
  );

/** One file's text: about `bytes` of TypeScript-like lines, with rare `new TimeoutError(` throws. */
function fileText(r, bytes) {
  const pick = () => WORDS[Math.floor(r() * WORDS.length)];
  const cap = (w) => w[0].toUpperCase() + w.slice(1);
  let out = "";
  while (out.length < bytes) {
    const fn = `${pick()}${cap(pick())}`;
    out += `export async function ${fn}(${pick()}: ${cap(pick())}, ctx: Context): Promise<${cap(pick())}> {\n`;
    out += `  const ${pick()}Id = input.${pick()}Id ?? ctx.defaults.${pick()};\n`;
    out += `  const result = await ctx.${pick()}s.${fn}(input, { limit: ${Math.floor(r() * 1000)} });\n`;
    if (r() < 0.03)
      out += `  if (late) throw new ${r() < 0.7 ? "Timeout" : "Retry"}Error(\`${fn} took too long\`);\n`;
    out += `  return { ...result, ${pick()}: input.${pick()}.map((x) => x.${pick()}) };\n}\n\n`;
  }
  return out;
}

/** A tree of `files` source files (20 a directory, three levels), made once. */
export function ensureSourceTree(files) {
  const dir = path.join(DATA_DIR, `search-compare-${files}`);
  const manifest = `${dir}.manifest.json`;
  const want = JSON.stringify({ files, GENERATOR_VERSION });
  if (existsSync(manifest) && readFileSync(manifest, "utf8") === want) return dir;
  log(`making ${files} files under ${dir}…`);
  rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const r = rng(files);
  for (let f = 0; f < files; f++) {
    const d = Math.floor(f / 20);
    const sub = path.join(
      tmp,
      `pkg${Math.floor(d / 50)}`,
      `mod${Math.floor(d / 5) % 10}`,
      `dir${d % 5}`,
    );
    if (f % 20 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `file${f}.ts`), fileText(r, 600 + Math.floor(r() * 1800)));
  }
  renameSync(tmp, dir);
  writeFileSync(manifest, want);
  return dir;
}

const CUSTOMERS = ["Ada Lövelace", "Grace Hopper", "Ken Thompson", "株式会社テスト", "Zoë O'Brien"];
const STATUSES = ["open", "paid", "shipped", "cancelled"];

function record(i, indent) {
  const sp = indent ? " " : "";
  return `{"id":${sp}${i},${sp}"customer":${sp}${JSON.stringify(CUSTOMERS[i % 5])},${sp}"status":${sp}"${STATUSES[i % 4]}",${sp}"total":${sp}${(i % 9973) / 100 + 1},${sp}"items":${sp}[{"sku":${sp}"SKU-${i % 1013}",${sp}"qty":${sp}${(i % 7) + 1},${sp}"price":${sp}${(i % 317) / 10 + 0.5}}],${sp}"note":${sp}"line \\"${i}\\" \\u00e9"}`;
}

/** Writes `file` of about `bytes` bytes (whole records) unless present; returns its record count. */
export async function ensureJson(name, bytes, kind) {
  const dir = path.join(DATA_DIR, "json");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const marker = `${file}.count`;
  if (existsSync(file) && existsSync(marker) && statSync(file).size >= bytes) {
    return {
      file,
      name,
      records: Number(readFileSync(marker, "utf8")),
      bytes: statSync(file).size,
    };
  }
  log(`writing ${fmtBytes(bytes)} of ${kind} to ${path.relative(process.cwd(), file)}`);
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w");
  let written = 0;
  let i = 0;
  try {
    if (kind === "json") written += writeSync(fd, '{"meta": {"source": "bench"},\n "orders": [\n');
    while (written < bytes) {
      const parts = [];
      let n = 0;
      while (n < 4 * MiB && written + n < bytes) {
        const r =
          kind === "json" ? `${i > 0 ? ",\n" : ""}  ${record(i, true)}` : `${record(i, false)}\n`;
        parts.push(r);
        n += Buffer.byteLength(r);
        i++;
      }
      written += writeSync(fd, Buffer.from(parts.join("")));
    }
    if (kind === "json") writeSync(fd, "\n]}\n");
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  writeFileSync(marker, String(i));
  await sleep(QUIET_MS);
  return { file, name, records: i, bytes: statSync(file).size };
}
