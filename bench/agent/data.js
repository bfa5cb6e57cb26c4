/**
 * @module
 * The agent benchmark's data, generated deterministically (same bytes on every machine and run)
 * under `.bench-data/agent/<scale>/`, made once and reused while `GENERATOR_VERSION` and the scale
 * are unchanged. Each generator returns the facts the tasks check answers against, computed while
 * writing, never by asking a server.
 *
 * - `ensureLog`: an application log (1 GiB at full scale) with the last 20 ERROR lines and the
 *   ERROR lines of one request id (a request in the middle of the file) recorded.
 * - `ensureOrders`: orders as JSON Lines (200 MB), with one order's shipping city and one
 *   customer's refunded orders recorded.
 * - `ensureLongLineDoc`: a Markdown document holding one 120,000-character line (the shape of
 *   `scripts/demo.js`: CJK, emoji, quotes and backslashes).
 * - `ensureTree`: a source tree of 50,000 files, its `.ts` count and its ten largest files.
 * - `ensureTimeline`: the library example's timeline (`examples/timeline-server`) as JSON Lines, the
 *   file a peer would read.
 * - `symbolFacts`: where a class is defined in this project's `node_modules` and its body, found by
 *   the bench's own scan.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DATA_ROOT = path.join(REPO, ".bench-data", "agent");

/** Bump when any generator's output changes: data made by an older generator is rebuilt. */
const GENERATOR_VERSION = 1;

const MiB = 1024 * 1024;

/** Sizes per scale: `full` is the published run, `smoke` the CI subset. */
export const SCALES = {
  full: { logBytes: 1024 * MiB, ordersBytes: 200 * 1000 * 1000, treeFiles: 50_000 },
  smoke: { logBytes: 2 * MiB, ordersBytes: 1000 * 1000, treeFiles: 600 },
};

/** xorshift32: a small deterministic generator (the data must be the same on every machine). */
export function rng(seed) {
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

const pickOf = (r) => (list) => list[Math.floor(r() * list.length)];

/**
 * Makes `dir` with `write(tmpDir)` unless a manifest with the same key is there; returns the facts
 * `write` returned (kept in the manifest). Written to a temporary directory and renamed, so an
 * interrupted run never leaves half a data set that looks complete.
 */
function cached(dir, key, write) {
  const manifest = `${dir}.manifest.json`;
  const want = JSON.stringify({ key, GENERATOR_VERSION });
  if (existsSync(manifest) && existsSync(dir)) {
    const saved = JSON.parse(readFileSync(manifest, "utf8"));
    if (JSON.stringify({ key: saved.key, GENERATOR_VERSION: saved.GENERATOR_VERSION }) === want)
      return saved.facts;
  }
  rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const facts = write(tmp);
  renameSync(tmp, dir);
  writeFileSync(manifest, JSON.stringify({ key, GENERATOR_VERSION, facts }));
  return facts;
}

/** Buffers text and writes it to `fd` in 4 MiB pieces. */
class ChunkWriter {
  #fd;
  #parts = [];
  #pending = 0;
  bytes = 0;
  constructor(file) {
    this.#fd = openSync(file, "w");
  }
  write(text) {
    this.#parts.push(text);
    this.#pending += text.length;
    if (this.#pending >= 4 * MiB) this.flush();
  }
  flush() {
    if (this.#parts.length === 0) return;
    this.bytes += writeSync(this.#fd, Buffer.from(this.#parts.join(""), "utf8"));
    this.#parts = [];
    this.#pending = 0;
  }
  close() {
    this.flush();
    closeSync(this.#fd);
  }
}

// ---------------------------------------------------------------------------------------------
// The log

const SERVICES = ["api-gateway", "billing", "auth", "search", "scheduler", "mailer", "inventory"];
const ROUTES = ["/v1/orders", "/v1/users/me", "/v1/cart/items", "/v2/search", "/v1/invoices"];
const INFO = [
  (r, p) => `GET ${p(ROUTES)} 200 in ${Math.floor(r() * 900)}ms`,
  (r, p) => `POST ${p(ROUTES)} 201 in ${Math.floor(r() * 1500)}ms`,
  (r) => `cache hit ratio ${(r() * 100).toFixed(1)}% over the last minute`,
  (r) => `queued job ${Math.floor(r() * 1e6)} (priority ${Math.floor(r() * 5)})`,
  (r) => `user session refreshed, expires in ${Math.floor(r() * 3600)}s`,
];
const DEBUG = [
  (r) => `pool stats active=${Math.floor(r() * 50)} idle=${Math.floor(r() * 20)} waiting=0`,
  (r) => `feature flag checkout_v2=${r() < 0.5} for tenant t${Math.floor(r() * 900)}`,
];
const WARN = [
  (r) => `slow query took ${Math.floor(1000 + r() * 9000)}ms: SELECT * FROM orders WHERE id = $1`,
  (r) => `retrying upstream call, attempt ${1 + Math.floor(r() * 3)} of 3`,
];
const ERRORS = [
  (r) => `upstream timeout after ${Math.floor(r() * 30)}s calling payments-service`,
  (r) => `failed to charge card: declined (code ${Math.floor(r() * 90) + 10})`,
  () =>
    `unhandled exception in worker: TypeError: Cannot read properties of undefined (reading 'id')`,
  (r) => `database connection lost; ${Math.floor(r() * 40)} queries aborted`,
  () => `invalid signature on webhook from "stripe" \\ rejected`,
];

/** Request id n as 8 hex digits: a bijection of 32-bit n, so ids never repeat. */
const requestId = (n) => (Math.imul(n + 1, 2654435761) >>> 0).toString(16).padStart(8, "0");

/**
 * An application log of at least `bytes` bytes (whole lines): `ISO-time LEVEL [service]
 * req=<id> message`. About 1.5% of lines are ERROR. Requests interleave (64 in flight, 3–40 lines
 * each); the request that starts once 45% of the file is written is the "target": 30 lines, about
 * a quarter of them errors.
 */
export function ensureLog(scale) {
  const bytes = SCALES[scale].logBytes;
  return cached(path.join(DATA_ROOT, scale, "logs"), { bytes }, (dir) => {
    const r = rng(27);
    const p = pickOf(r);
    const out = new ChunkWriter(path.join(dir, "app.log"));
    let t = Date.UTC(2026, 2, 1);
    let nextRequest = 0;
    const active = Array.from({ length: 64 }, () => ({
      n: nextRequest++,
      left: 3 + Math.floor(r() * 38),
    }));
    let target;
    const targetErrors = [];
    const lastErrors = [];
    let lines = 0;
    let errors = 0;
    let written = 0;
    while (written < bytes) {
      const slot = Math.floor(r() * active.length);
      const req = active[slot];
      const isTarget = target !== undefined && req.n === target;
      const roll = r();
      const level = isTarget
        ? roll < 0.25
          ? "ERROR"
          : "INFO"
        : roll < 0.015
          ? "ERROR"
          : roll < 0.065
            ? "WARN"
            : roll < 0.265
              ? "DEBUG"
              : "INFO";
      const messages =
        level === "ERROR" ? ERRORS : level === "WARN" ? WARN : level === "DEBUG" ? DEBUG : INFO;
      t += Math.floor(r() * 40);
      const line = `${new Date(t).toISOString()} ${level.padEnd(5)} [${p(SERVICES)}] req=${requestId(req.n)} ${p(messages)(r, p)}`;
      out.write(`${line}\n`);
      written += line.length + 1; // ASCII only
      lines++;
      if (level === "ERROR") {
        errors++;
        lastErrors.push(line);
        if (lastErrors.length > 20) lastErrors.shift();
        if (isTarget) targetErrors.push(line);
      }
      if (--req.left === 0) {
        const n = nextRequest++;
        const becomesTarget = target === undefined && written >= bytes * 0.45;
        if (becomesTarget) target = n;
        active[slot] = { n, left: becomesTarget ? 30 : 3 + Math.floor(r() * 38) };
      }
    }
    out.close();
    return {
      file: "app.log",
      bytes: out.bytes,
      lines,
      errors,
      lastErrors,
      targetRequest: requestId(target),
      targetErrors,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Orders (JSON Lines)

const CITIES = ["Lisbon", "Kraków", "Zürich", "Osaka", "Montréal", "Austin", "Dakar", "Tallinn"];
const COUNTRIES = ["PT", "PL", "CH", "JP", "CA", "US", "SN", "EE"];
const STATUSES = [
  "paid",
  "paid",
  "shipped",
  "shipped",
  "delivered",
  "delivered",
  "refunded",
  "open",
];
const FIRST = ["Ada", "Grace", "Linus", "Zoë", "Kenji", "Amara", "Sven", "Inès", "Omar", "Mia"];
const LAST = ["Lovelace", "Hopper", "Nakamura", "O'Brien", "Diallo", "Kowalski", "Tamm", "Silva"];

/**
 * Orders as JSON Lines, about `ordersBytes` bytes: one order a line, fields in a fixed order
 * (`id, created, customer{id,name,email}, status, total, currency, items[], shipping{city,country},
 * note`). Facts: the shipping city of the order at 61% of the file, and the ids and totals of the
 * refunded orders of one customer.
 */
export function ensureOrders(scale) {
  const bytes = SCALES[scale].ordersBytes;
  const customers = Math.max(50, Math.round(bytes / 40_000));
  return cached(path.join(DATA_ROOT, scale, "orders"), { bytes }, (dir) => {
    const r = rng(7);
    const p = pickOf(r);
    const out = new ChunkWriter(path.join(dir, "orders.jsonl"));
    const targetCustomer = `cus_${String(Math.floor(customers * 0.37)).padStart(5, "0")}`;
    const refunded = [];
    let written = 0;
    let i = 0;
    const records = [];
    let t = Date.UTC(2025, 0, 1);
    while (written < bytes) {
      const c = Math.floor(r() * customers);
      const first = FIRST[c % FIRST.length];
      const last = LAST[(c * 7) % LAST.length];
      const city = Math.floor(r() * CITIES.length);
      const items = Array.from({ length: 1 + Math.floor(r() * 4) }, () => ({
        sku: `SKU-${1000 + Math.floor(r() * 9000)}`,
        qty: 1 + Math.floor(r() * 5),
        price: Math.round(r() * 20000) / 100,
      }));
      const total = Math.round(items.reduce((s, it) => s + it.qty * it.price, 0) * 100) / 100;
      t += Math.floor(r() * 60_000);
      const order = {
        id: `ord_${String(i).padStart(7, "0")}`,
        created: new Date(t).toISOString(),
        customer: {
          id: `cus_${String(c).padStart(5, "0")}`,
          name: `${first} ${last}`,
          email: `${first.toLowerCase()}.${c}@example.com`,
        },
        status: p(STATUSES),
        total,
        currency: "EUR",
        items,
        shipping: { city: CITIES[city], country: COUNTRIES[city] },
        note: r() < 0.2 ? `Leave at the "back door" \\ gate code ${Math.floor(r() * 9999)}` : "",
      };
      const line = JSON.stringify(order);
      out.write(`${line}\n`);
      written += Buffer.byteLength(line) + 1;
      if (order.customer.id === targetCustomer && order.status === "refunded")
        refunded.push({ id: order.id, total: order.total });
      records.push(order.shipping.city);
      i++;
    }
    out.close();
    const targetIndex = Math.floor(i * 0.61);
    return {
      file: "orders.jsonl",
      bytes: out.bytes,
      records: i,
      targetOrder: `ord_${String(targetIndex).padStart(7, "0")}`,
      targetCity: records[targetIndex],
      targetCustomer,
      refunded,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// A document with one 120,000-character line

/** The line of `scripts/demo.js`: 6,000 × 20 code points of CJK, emoji, quotes and backslashes. */
export const LONG_LINE = '中文🙂 "quoted" \\ path '.repeat(6000);

export function ensureLongLineDoc(scale) {
  return cached(path.join(DATA_ROOT, scale, "docs"), {}, (dir) => {
    const text = [
      "# Import notes",
      "",
      "The paragraph below was pasted from a chat export and has no line breaks.",
      "",
      LONG_LINE,
      "",
      "## Follow-ups",
      "",
      "- Re-run the import with the new tokenizer.",
      "- Check the escaped quotes survive a round trip.",
      "",
    ].join("\n");
    writeFileSync(path.join(dir, "import-notes.md"), text);
    return {
      file: "import-notes.md",
      chars: text.length,
      longLineCodePoints: [...LONG_LINE].length,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// A tree of 50,000 files

const EXTENSIONS = [
  [".ts", 36],
  [".d.ts", 4],
  [".tsx", 6],
  [".js", 14],
  [".json", 10],
  [".md", 8],
  [".css", 6],
  [".snap", 4],
  [".yaml", 6],
  [".txt", 6],
];
const NAMES = ["index", "util", "types", "client", "server", "store", "view", "model", "hooks"];

/**
 * `files` files under `packages/pkg-NNN/{src,test,docs}/…`, 5–60 files a directory, sizes mostly
 * 60–3,000 bytes; ten files (bundles, snapshots, a lock file) are 120 KiB–1.9 MiB, distinct, so
 * the ten largest are one unambiguous answer. No hidden files and no `.gitignore`: every server
 * sees the same files.
 */
export function ensureTree(scale) {
  const files = SCALES[scale].treeFiles;
  return cached(path.join(DATA_ROOT, scale, "tree"), { files }, (dir) => {
    const r = rng(50_000);
    const p = pickOf(r);
    const chooseExtension = () => {
      let roll = r() * 100;
      for (const [ext, weight] of EXTENSIONS) {
        roll -= weight;
        if (roll < 0) return ext;
      }
      return ".txt";
    };
    const filler = "export const value = compute(input, { retries: 3 }); // padding\n";
    const all = [];
    let made = 0;
    let pkg = 0;
    while (made < files) {
      const pkgDir = `packages/pkg-${String(pkg++).padStart(3, "0")}`;
      for (const part of ["src", "test", "docs"]) {
        const subdirs = 1 + Math.floor(r() * 6);
        for (let d = 0; d < subdirs && made < files; d++) {
          const rel = path.join(pkgDir, part, `${p(NAMES)}-${d}`);
          mkdirSync(path.join(dir, rel), { recursive: true });
          const count = Math.min(files - made, 5 + Math.floor(r() * 56));
          for (let f = 0; f < count; f++) {
            const name = `${p(NAMES)}-${made}${chooseExtension()}`;
            const size = 60 + Math.floor(r() * r() * 2940);
            all.push({ path: path.join(rel, name), size });
            made++;
          }
        }
      }
    }
    // Ten large files at fixed positions through the tree, distinct sizes.
    for (let k = 0; k < 10; k++) {
      const at = Math.floor(((k + 0.5) / 10) * all.length);
      all[at].size = Math.round((120 + k * 197) * 1024 + k * 13);
    }
    for (const f of all) {
      const text = filler.repeat(Math.ceil(f.size / filler.length)).slice(0, f.size);
      writeFileSync(path.join(dir, f.path), text);
    }
    const largest = [...all]
      .sort((a, b) => b.size - a.size)
      .slice(0, 10)
      .map((f) => ({ path: f.path.split(path.sep).join("/"), size: f.size }));
    return {
      root: "",
      files: all.length,
      tsFiles: all.filter((f) => f.path.endsWith(".ts")).length,
      largest,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The timeline as a file

/** `makeTimeline()` of the library example, one event a line, oldest first. */
export async function ensureTimeline(scale) {
  const { makeTimeline } = await import("../../examples/timeline-server/server.js");
  const events = makeTimeline();
  const isLong = (e) => e.body.length > 2000;
  const newestLong = [...events].reverse().find(isLong);
  return cached(path.join(DATA_ROOT, scale, "timeline"), { events: events.length }, (dir) => {
    writeFileSync(
      path.join(dir, "thread.jsonl"),
      events.map((e) => `${JSON.stringify(e)}\n`).join(""),
    );
    return {
      file: "thread.jsonl",
      events: events.length,
      newestLongId: newestLong.id,
      newestLongBody: newestLong.body,
      newestLongFromEnd: events.length - events.indexOf(newestLong),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// A symbol in node_modules

/**
 * Where `class <symbol>` is defined in JavaScript under `root` (no `.d.ts`), with each
 * definition's body: from the `class` line to the first later line that closes it at the same
 * indentation. The bench's own walk, so the answer does not depend on any server.
 */
export function symbolFacts(root, symbol) {
  const definition = new RegExp(`^(\\s*)(export\\s+)?(default\\s+)?class\\s+${symbol}\\b`);
  const sites = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && /\.(c|m)?js$/.test(e.name) && statSync(full).size < 8 * MiB) {
        const text = readFileSync(full, "utf8");
        if (!text.includes(`class ${symbol}`)) continue;
        const lines = text.split("\n");
        lines.forEach((line, i) => {
          const m = definition.exec(line);
          if (!m) return;
          const end = lines.findIndex((l, j) => j > i && l.startsWith(`${m[1]}}`));
          if (end < 0) return;
          sites.push({
            path: path.relative(root, full).split(path.sep).join("/"),
            line: i + 1,
            body: lines.slice(i, end + 1).join("\n"),
          });
        });
      }
    }
  };
  walk(root);
  return { symbol, sites };
}
