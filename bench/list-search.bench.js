/**
 * @module
 * Benchmarks of `list` and `search` (run by `npm run bench`, or `npm run bench -- list-search`;
 * needs `npm run build`).
 *
 * The tree: 100,000 regular files shaped like a monorepo (packages with nested sources, tests,
 * git-ignored `node_modules/` and `dist/`, services with a nested `.gitignore` ignoring `target/`,
 * vendored C, docs, fixtures, binary assets, git-ignored logs with one re-included by a negation,
 * hidden directories and dotfiles, a few symlinks and non-ASCII names). Sizes are log-normal
 * (median 1.5 KiB), contents are slices of generated TypeScript/Go/Rust/Python/C/Markdown/JSON/log
 * text, so searches have matches spread over the tree. Made once under `.bench-data/` (git-ignored,
 * deterministic; reused while its manifest matches), or where `BENCH_LS_TREE` points.
 *
 * 1. `list`, recursive, `type: "file"` (comparable with `find -type f`), each subject run
 *    `BENCH_REPS` times (default 3), interleaved, a fresh server per run:
 *    - pagewise, through the SDK stdio client: the first page (limit 100, the server's default
 *      budget); 10 pages at the default budget with `limit: 1000` (where the budget binds: the
 *      per-page cost an agent pays); then `limit: 1000` at `max_tokens: 100000` to the end (the
 *      full walk, so that the limit binds);
 *    - the peer's (@modelcontextprotocol/server-filesystem) `list_directory` of the root (one
 *      level), and of every directory breadth-first (what an agent must do to see the whole tree;
 *      it cannot skip ignored or hidden directories), through the SDK client;
 *    - the peer's `directory_tree` of the whole tree, through a plain JSON-RPC client (its answer
 *      is over the SDK client's 10 MiB cap);
 *    - `find . -type f | LC_ALL=C sort`.
 * 2. `search`, a literal and a regex: pagewise first page (its exact total means it reads every
 *    candidate file), then `next_cursor` to the end with the default limit and budget (every
 *    match); for the literal also one continuation with `limit: 1000` (the budget keeps fewer, the
 *    scan reads for 1000); `rg -n` (respects .gitignore; `--no-require-git` because the tree has
 *    no `.git`); `grep -rnI` with `--exclude-dir`/`--exclude` for the ignored and hidden names.
 *    The peer has no content search.
 * 3. File names: the peer's `search_files` (it matches file NAMES with a glob; the only "search"
 *    it has) versus pagewise `list` with the same glob, `find -name` and `rg --files -g`.
 *
 * Correctness is checked on the side (not timed): pagewise's full walk equals `find -type f`'s
 * paths minus hidden and git-ignored ones (computed from the generator's rules, and checked
 * against `rg --files`' count), in order; search totals equal `rg --count-matches` (and
 * `grep -o | wc -l`), and full paging returns `total` distinct matches; the glob listing equals
 * `find -name` minus hidden/ignored. A mismatch prints a WARNING line in the results.
 *
 * Sizes are the characters of the text the model reads and its tokens by pagewise's `default`
 * estimator. External processes are timed with GNU `time` (wall, user+sys CPU of the pipeline, max
 * RSS of its largest process). `rg` (Debian's ripgrep) and GNU `time` are installed with apt-get
 * if absent (as root). About 5.5 minutes on a 2-vCPU VM; the tree takes 20–45 s to make once.
 *
 * Environment: BENCH_REPS (default 3), BENCH_LS_TREE (tree directory), BENCH_LS_FILES (default
 * 100000), BENCH_LS_ONLY=list,search,names (default all), BENCH_LS_BFS_REPS (the peer's
 * directory-by-directory walk, default BENCH_REPS), BENCH_LS_LIST_PEERS=0 (`list` against
 * `find | sort` only, without the peer's three subjects), BENCH_PAGEWISE_BIN (another build).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  DATA_DIR,
  fmtBytes,
  fmtMs,
  log,
  median,
  PAGEWISE_BIN,
  percentile,
  printTable,
  ratio,
  runOnce,
  startPagewise,
  startPeer,
  startRawPeer,
} from "./harness.js";

const REPS = Number(process.env.BENCH_REPS ?? 3);
const BFS_REPS = Number(process.env.BENCH_LS_BFS_REPS ?? REPS);
/** Whether the `list` part runs the peer's subjects too (`BENCH_LS_LIST_PEERS=0`: pagewise and find). */
const LIST_PEERS = process.env.BENCH_LS_LIST_PEERS !== "0";
const FILES = Number(process.env.BENCH_LS_FILES ?? 100_000);
const ONLY = new Set((process.env.BENCH_LS_ONLY ?? "list,search,names").split(","));
/** Bump when the generator changes: a cached tree with another version is made again. */
const GENERATOR_VERSION = 5;
const TREE = path.resolve(
  process.env.BENCH_LS_TREE ?? path.join(DATA_DIR, `list-search-tree-${FILES}`),
);
const MANIFEST = `${TREE}.manifest.json`;

// ---------------------------------------------------------------------------------------------
// The tree

/** xorshift32: deterministic, so every run (and every machine) gets the same tree. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
  const r = {
    int: (n) => next() % n,
    float: () => next() / 2 ** 32,
    pick: (arr) => arr[next() % arr.length],
    chance: (p) => next() / 2 ** 32 < p,
    /** Standard normal (Box–Muller). */
    normal: () => {
      const u = (next() + 1) / (2 ** 32 + 1);
      const v = (next() + 1) / (2 ** 32 + 1);
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
  };
  return r;
}

const WORDS = (
  "account action adapter admin agent alert api app archive asset auth backup badge batch billing " +
  "blob bridge broker browser buffer build bundle cache calendar card cart catalog channel chart " +
  "checkout client cluster codec color column command comment config connector console contact " +
  "context controller cookie core counter coupon cron cursor dashboard data date debug device diff " +
  "digest dispatch dns document domain draft driver editor email embed engine entity event export " +
  "feature feed fetch field file filter flag font form format gateway geo graph grid group guard " +
  "handler hash header health history hook host icon image import index inbox input invoice item " +
  "job kernel key label layout ledger limit link list loader locale lock log login mailer manifest " +
  "map market media menu merge message meta metric middleware migration mirror model module " +
  "monitor mount network node note notify oauth order outbox pager panel parser patch payment peer " +
  "permission pipeline plan plugin policy pool portal post preview price printer profile project " +
  "prompt proxy publish query queue quota rate reader receipt record redis region release render " +
  "report repo request resolver resource response retry review role route router rule runner " +
  "sandbox scheduler schema scope search secret segment sender server session setting shard share " +
  "shell signal sitemap slot snapshot socket source span spec state status storage store stream " +
  "style subscription sync table tag task team template tenant theme thread ticket timer token " +
  "topic trace tracker transfer tree trigger upload user util validator vault version view " +
  "wallet watcher webhook widget worker workflow writer zone"
).split(" ");
const VERBS = (
  "apply build check clear close compute create decode delete encode ensure fetch find flush format " +
  "get handle init load lookup merge normalize open parse prepare publish read refresh register " +
  "remove render reset resolve retry run save scan send serialize set split start stop sync " +
  "transform update upsert validate verify watch write"
).split(" ");
const cap = (w) => w[0].toUpperCase() + w.slice(1);

/**
 * Text of one kind, about `bytes` long, made of lines. Markers the searches look for, at low rates:
 * `TODO(perf)` comments in code (the literal) and `new TimeoutError(` / `new RetryError(` throws
 * in TS/JS (the regex `new (Timeout|Retry)Error\(`).
 */
function makeCorpus(kind, bytes, seed) {
  const r = rng(seed);
  const out = [];
  let size = 0;
  const push = (line) => {
    out.push(line);
    size += Buffer.byteLength(line) + 1;
  };
  const noun = () => r.pick(WORDS);
  const ident = () => `${r.pick(VERBS)}${cap(noun())}`;
  const Type = () =>
    `${cap(noun())}${r.pick(["", "Options", "Result", "State", "Config", "Event"])}`;
  while (size < bytes) {
    switch (kind) {
      case "ts": {
        const fn = ident();
        const a = noun();
        if (r.chance(0.15))
          push(`import { ${Type()}, ${ident()} } from "../${noun()}/${noun()}.js";`);
        if (r.chance(0.3))
          push(`/** ${cap(r.pick(VERBS))}s the ${a} ${noun()} for the ${noun()}. */`);
        push(`export async function ${fn}(${a}: ${Type()}, ctx: Context): Promise<${Type()}> {`);
        push(`  const ${noun()}Id = ${a}.${noun()}Id ?? ctx.defaults.${noun()};`);
        if (r.chance(0.0013))
          push(`  // TODO(perf): ${r.pick(VERBS)} the ${noun()} once per ${noun()}, not per call`);
        push(`  const result = await ctx.${noun()}s.${ident()}(${a}, { limit: ${r.int(1000)} });`);
        if (r.chance(0.0025)) {
          push(`  if (Date.now() - started > ${r.int(90) * 100 + 500}) {`);
          push(
            `    throw new ${r.chance(0.7) ? "Timeout" : "Retry"}Error(\`${fn} took too long for \${${a}.id}\`);`,
          );
          push("  }");
        }
        if (r.chance(0.5))
          push(`  if (!result.ok) return { error: "${noun()}_not_found", id: ${a}.id };`);
        push(
          `  ctx.metrics.observe("${noun()}_${r.pick(VERBS)}_ms", performance.now() - started);`,
        );
        push(`  return { ...result, ${noun()}: ${a}.${noun()}.map((x) => x.${noun()}) };`);
        push("}");
        push("");
        break;
      }
      case "test": {
        push(`describe("${ident()}", () => {`);
        for (let i = r.int(4) + 1; i > 0; i--) {
          push(
            `  it("${r.pick(VERBS)}s the ${noun()} when the ${noun()} is ${r.pick(["empty", "stale", "missing", "large", "locked"])}", async () => {`,
          );
          push(`    const ${noun()} = await setup({ ${noun()}: ${r.int(100)} });`);
          push(
            `    expect(await ${ident()}(${noun()})).toEqual({ ok: true, count: ${r.int(50)} });`,
          );
          if (r.chance(0.003)) push("    // TODO(perf): share the fixture between cases");
          push("  });");
        }
        push("});");
        push("");
        break;
      }
      case "go": {
        const fn = cap(ident());
        push(`// ${fn} ${r.pick(VERBS)}s the ${noun()} of a ${noun()}.`);
        push(
          `func (s *${cap(noun())}Service) ${fn}(ctx context.Context, id string) (*${Type()}, error) {`,
        );
        push(`\trow, err := s.db.QueryContext(ctx, "SELECT * FROM ${noun()}s WHERE id = $1", id)`);
        push("\tif err != nil {");
        push(`\t\treturn nil, fmt.Errorf("${fn}: %w", err)`);
        push("\t}");
        if (r.chance(0.0013)) push(`\t// TODO(perf): batch the ${noun()} lookups`);
        push(`\treturn scan${Type()}(row)`);
        push("}");
        push("");
        break;
      }
      case "rs": {
        const fn = `${r.pick(VERBS)}_${noun()}`;
        push(`/// ${cap(r.pick(VERBS))}s the ${noun()} and returns the ${noun()}.`);
        push(`pub fn ${fn}(&self, ${noun()}: &${Type()}) -> Result<${Type()}, Error> {`);
        push(`    let ${noun()} = self.${noun()}.get(&${noun()}.id).ok_or(Error::NotFound)?;`);
        if (r.chance(0.0013)) push(`    // TODO(perf): avoid cloning the ${noun()} here`);
        push(`    Ok(${noun()}.clone())`);
        push("}");
        push("");
        break;
      }
      case "py": {
        push(`def ${r.pick(VERBS)}_${noun()}(${noun()}, ${noun()}=None):`);
        push(`    """${cap(r.pick(VERBS))} the ${noun()} of a ${noun()}."""`);
        push(
          `    rows = db.execute("SELECT id, ${noun()} FROM ${noun()} WHERE id = %s", (${noun()}.id,))`,
        );
        if (r.chance(0.0013)) push(`    # TODO(perf): stream the ${noun()} rows`);
        push(`    return [${cap(noun())}(**row) for row in rows]`);
        push("");
        break;
      }
      case "c": {
        push(`static int ${noun()}_${r.pick(VERBS)}(struct ${noun()} *p, size_t n)`);
        push("{");
        push(`\tfor (size_t i = 0; i < n; i++) {`);
        push(`\t\tif (p[i].${noun()} == NULL)`);
        push(`\t\t\treturn -E${r.pick(["INVAL", "NOMEM", "AGAIN", "IO"])};`);
        if (r.chance(0.0007)) push("\t\t/* TODO(perf): unroll */");
        push("\t}");
        push("\treturn 0;");
        push("}");
        push("");
        break;
      }
      case "md": {
        push(`## ${cap(r.pick(VERBS))} the ${noun()}`);
        push("");
        push(
          `The ${noun()} ${r.pick(VERBS)}s every ${noun()} before the ${noun()} is ${r.pick(VERBS)}ed; see \`${ident()}\` in the ${noun()} module. Café, naïve and 日本語 names are kept as they are.`,
        );
        push(`- \`${noun()}.${noun()}\`: ${r.int(100)} by default.`);
        push("");
        break;
      }
      case "json": {
        push(
          `  {"id": "${r.int(1e9).toString(16)}", "${noun()}": "${noun()}-${r.int(1000)}", "count": ${r.int(500)}, "tags": ["${noun()}", "${noun()}"], "active": ${r.chance(0.5)}},`,
        );
        break;
      }
      case "css": {
        push(`.${noun()}-${noun()} {`);
        push(`  margin: ${r.int(24)}px ${r.int(24)}px;`);
        push(`  color: #${r.int(0xffffff).toString(16).padStart(6, "0")};`);
        push("}");
        break;
      }
      case "yaml": {
        push(`- name: ${r.pick(VERBS)} ${noun()}`);
        push(`  run: npm run ${noun()} -- --${noun()}=${r.int(10)}`);
        break;
      }
      default: {
        // log
        const t = new Date(Date.UTC(2025, 0, 1) + size * 37).toISOString();
        push(
          `${t} ${r.pick(["INFO", "INFO", "DEBUG", "WARN", "ERROR"]).padEnd(5)} [${noun()}] ${r.pick(VERBS)} ${noun()} id=${r.int(1e9).toString(16)} latency_ms=${r.int(5000) / 10}`,
        );
      }
    }
  }
  return Buffer.from(`${out.join("\n")}\n`, "utf8");
}

const KINDS_BY_EXT = {
  ts: "ts",
  tsx: "ts",
  js: "ts",
  mjs: "ts",
  "test.ts": "test",
  "spec.ts": "test",
  go: "go",
  rs: "rs",
  py: "py",
  c: "c",
  h: "c",
  md: "md",
  json: "json",
  css: "css",
  yml: "yaml",
  yaml: "yaml",
  log: "log",
  txt: "md",
  map: "json",
  toml: "yaml",
};

/**
 * Areas of the tree: `files` regular files each, distributed over nested directories. `ignored`
 * and `hidden` say what `list`/`search`/`rg` leave out (the checks compute the expected set from
 * the paths, independently of pagewise's gitignore code).
 */
function plan(total) {
  const scale = total / 100_000;
  const n = (x) => Math.max(1, Math.round(x * scale));
  return [
    { kind: "packages", files: n(52_000) }, // + node_modules (ignored) + dist (ignored) inside
    { kind: "services", files: n(12_000) }, // + target/ (nested .gitignore) inside
    { kind: "vendor", files: n(6_000), exts: ["c", "h", "c", "c", "md"], dir: "vendor" },
    { kind: "plain", files: n(3_000), exts: ["md", "md", "md", "txt"], dir: "docs" },
    { kind: "plain", files: n(2_500), exts: ["json", "json", "yml", "txt"], dir: "fixtures" },
    { kind: "binary", files: n(1_500), dir: "assets" },
    { kind: "logs", files: n(800) },
    { kind: "plain", files: n(2_200), exts: ["json", "txt", "md"], dir: ".cache/tool" }, // hidden
  ];
}

/** Splits `n` files over a random nested directory shape below `dir`; calls `file(relDir)`. */
function spread(r, n, depth, onDir, onFiles, relDir) {
  onDir(relDir);
  const here = n <= 30 || depth >= 5 ? n : Math.min(n, r.int(16));
  if (here > 0) onFiles(relDir, here);
  let rest = n - here;
  if (rest <= 0) return;
  const k = Math.max(2, Math.min(rest, 2 + r.int(7)));
  const weights = Array.from({ length: k }, () => 0.2 + r.float());
  const sum = weights.reduce((a, b) => a + b, 0);
  const used = new Set();
  for (let i = 0; i < k; i++) {
    const share = i === k - 1 ? rest : Math.min(rest, Math.round((n - here) * (weights[i] / sum)));
    rest -= share;
    if (share <= 0) continue;
    let name;
    do {
      name = r.chance(0.7) ? r.pick(WORDS) : `${r.pick(WORDS)}-${r.pick(WORDS)}`;
    } while (used.has(name));
    used.add(name);
    spread(r, share, depth + 1, onDir, onFiles, relDir ? `${relDir}/${name}` : name);
  }
}

/** Log-normal size, median `median` bytes, clamped. */
function sizeOf(r, median, sigma = 1.2, max = 512 * 1024) {
  if (r.chance(0.01)) return 0;
  return Math.min(max, Math.max(1, Math.round(median * Math.exp(sigma * r.normal()))));
}

/**
 * Makes the tree under `dir` (which must not exist). Returns a manifest: counts, bytes, and which
 * top-level rules make entries hidden or ignored.
 */
function generateTree(dir, total) {
  const scale = total / 100_000;
  const r = rng(20251202);
  const corpora = {};
  for (const k of new Set(Object.values(KINDS_BY_EXT))) {
    corpora[k] = makeCorpus(k, (k === "log" ? 8 : 2) << 20, 7 + Object.keys(corpora).length);
  }
  const slice = (kind, bytes) => {
    const c = corpora[kind];
    if (bytes === 0) return Buffer.alloc(0);
    if (bytes >= c.length) return c;
    let start = r.int(c.length - bytes);
    start = c.indexOf(0x0a, start) + 1;
    if (start <= 0 || start >= c.length) start = 0;
    let end = Math.min(c.length, start + bytes);
    const nl = c.indexOf(0x0a, end - 1);
    end = nl < 0 ? c.length : nl + 1;
    return c.subarray(start, end);
  };
  let files = 0;
  let bytes = 0;
  const made = new Set();
  const mkdir = (rel) => {
    if (made.has(rel)) return;
    mkdirSync(path.join(dir, rel), { recursive: true });
    made.add(rel);
  };
  const write = (rel, content) => {
    writeFileSync(path.join(dir, rel), content);
    files++;
    bytes += content.length;
  };
  const names = new Map(); // dir -> Set of names, to keep names unique
  const uniqueName = (relDir, make) => {
    let set = names.get(relDir);
    if (!set) {
      set = new Set();
      names.set(relDir, set);
    }
    for (let i = 0; ; i++) {
      const name = make(i);
      if (!set.has(name)) {
        set.add(name);
        return name;
      }
    }
  };
  const codeFile = (relDir, exts, median = 1500) => {
    const ext = r.pick(exts);
    const name = uniqueName(relDir, (i) => {
      const base =
        r.chance(0.08) && ext.startsWith("ts")
          ? "index"
          : r.chance(0.6)
            ? r.pick(WORDS)
            : `${r.pick(WORDS)}-${r.pick(WORDS)}`;
      return `${base}${i > 0 ? `-${i}` : ""}.${ext}`;
    });
    write(relDir ? `${relDir}/${name}` : name, slice(KINDS_BY_EXT[ext], sizeOf(r, median)));
  };

  mkdir("");
  write(
    ".gitignore",
    Buffer.from(
      "# build output and dependencies\nnode_modules/\ndist/\ncoverage/\n*.log\n!logs/keep/*.log\n",
    ),
  );
  write(".editorconfig", Buffer.from("root = true\n[*]\nindent_style = space\n"));
  write(".npmrc", Buffer.from("save-exact=true\n"));
  mkdir(".github/workflows");
  for (let i = 0; i < 6; i++) write(`.github/workflows/${VERBS[i]}.yml`, slice("yaml", 2000));
  mkdir(".vscode");
  write(".vscode/settings.json", slice("json", 300));
  write("README.md", slice("md", 6000));
  write("package.json", slice("json", 800));
  write("LICENSE", Buffer.from("MIT License\n\nCopyright (c) 2025\n"));
  // Non-ASCII and odd names: code-point order must match `LC_ALL=C sort`.
  mkdir("docs");
  for (const name of [
    "café-menu.md",
    "naïve-bayes.md",
    "日本語.md",
    "Ärger.md",
    "a b.md",
    "Z-last.md",
    "_underscore.md",
    "-dash.md",
  ]) {
    write(`docs/${name}`, slice("md", 1200));
  }

  for (const area of plan(total)) {
    if (area.kind === "packages") {
      const pkgs = Math.max(1, Math.round(area.files / 1250));
      let left = area.files;
      for (let p = 0; p < pkgs; p++) {
        const pkg = `packages/${uniqueName("packages", () => `${r.pick(WORDS)}-${r.pick(WORDS)}`)}`;
        const share = p === pkgs - 1 ? left : Math.round(area.files / pkgs);
        left -= share;
        mkdir(pkg);
        write(`${pkg}/package.json`, slice("json", 700));
        write(`${pkg}/README.md`, slice("md", 3000));
        write(`${pkg}/.eslintrc.json`, slice("json", 200)); // hidden
        const srcFiles = Math.round((share - 3) * 0.72);
        spread(
          r,
          srcFiles,
          1,
          mkdir,
          (d, k) => {
            for (let i = 0; i < k; i++) codeFile(d, ["ts", "ts", "ts", "tsx", "css", "json", "md"]);
          },
          `${pkg}/src`,
        );
        const testFiles = share - 3 - srcFiles - 0;
        spread(
          r,
          testFiles,
          2,
          mkdir,
          (d, k) => {
            for (let i = 0; i < k; i++) codeFile(d, ["test.ts", "test.ts", "spec.ts", "json"]);
          },
          `${pkg}/test`,
        );
        // Ignored: node_modules (dependencies) and dist (build output), ~25 % on top.
        const deps = Math.round(share * 0.2);
        spread(
          r,
          deps,
          2,
          mkdir,
          (d, k) => {
            for (let i = 0; i < k; i++) codeFile(d, ["js", "js", "md", "json", "test.ts"]);
          },
          `${pkg}/node_modules`,
        );
        const dist = Math.round(share * 0.05);
        mkdir(`${pkg}/dist`);
        for (let i = 0; i < dist; i++) codeFile(`${pkg}/dist`, ["js", "map"]);
      }
      // node_modules and dist come on top of `files`; the total is made exact at the end.
    } else if (area.kind === "services") {
      const langs = [
        ["go", "go", "go", "md", "yml"],
        ["rs", "rs", "rs", "toml", "md"],
        ["py", "py", "py", "txt", "md"],
      ];
      const count = 12;
      for (let s = 0; s < count; s++) {
        const svc = `services/${uniqueName("services", () => r.pick(WORDS))}`;
        const lang = langs[s % 3];
        mkdir(svc);
        // A nested .gitignore (a hidden regular file: `find -type f` counts it, `list` does not).
        write(`${svc}/.gitignore`, Buffer.from("target/\n__pycache__/\n*.pyc\n"));
        const share = Math.round(area.files / count);
        spread(
          r,
          share,
          1,
          mkdir,
          (d, k) => {
            for (let i = 0; i < k; i++) codeFile(d, lang);
          },
          svc,
        );
        mkdir(`${svc}/target/debug/deps`);
        for (let i = 0; i < Math.round(250 * scale); i++)
          codeFile(`${svc}/target/debug/deps`, ["rs", "json", "txt"]);
        if (lang[0] === "py") {
          mkdir(`${svc}/__pycache__`);
          for (let i = 0; i < Math.round(40 * scale); i++)
            codeFile(`${svc}/__pycache__`, ["txt"], 800);
        }
      }
    } else if (area.kind === "binary") {
      spread(
        r,
        area.files,
        1,
        mkdir,
        (d, k) => {
          for (let i = 0; i < k; i++) {
            const ext = r.pick(["png", "png", "woff2", "ico"]);
            const name = uniqueName(d, (j) => `${r.pick(WORDS)}${j ? `-${j}` : ""}.${ext}`);
            const buf = Buffer.allocUnsafe(Math.max(64, sizeOf(r, 6000, 1, 200_000)));
            for (let j = 0; j < buf.length; j++) buf[j] = r.int(256);
            buf.write("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 0, "latin1"); // NUL in the first bytes
            write(`${d}/${name}`, buf);
          }
        },
        area.dir,
      );
    } else if (area.kind === "logs") {
      mkdir("logs/keep");
      for (let i = 0; i < 3; i++) write(`logs/keep/release-${i}.log`, slice("log", 400_000));
      for (let i = 3; i < area.files; i++) {
        write(
          `logs/app-${String(i).padStart(4, "0")}.log`,
          slice("log", sizeOf(r, 20_000, 1.5, 4 << 20)),
        );
      }
    } else {
      spread(
        r,
        area.files,
        1,
        mkdir,
        (d, k) => {
          for (let i = 0; i < k; i++) codeFile(d, area.exts);
        },
        area.dir,
      );
    }
  }
  // Top up (or trim) to exactly `total` regular files with more vendored sources.
  let extra = 0;
  while (files < total) {
    const d = `vendor/extra/${Math.floor(extra / 50)}`;
    mkdir(d);
    codeFile(d, ["c", "h"]);
    extra++;
  }
  // A few symlinks (listed as type "symlink", not files; never followed).
  symlinkSync("../../README.md", path.join(dir, "docs/README-link.md"));
  symlinkSync("../packages", path.join(dir, "docs/packages-link"));
  symlinkSync("does-not-exist", path.join(dir, "docs/dangling"));
  return { files, bytes, directories: made.size };
}

/**
 * The expected `list`/`search` view of a path relative to the tree: not hidden (no component
 * starting with "."), not git-ignored by the rules the generator wrote. Independent of
 * pagewise's walker: it knows the generator's rules, not git's.
 */
function visible(rel) {
  const parts = rel.split("/");
  if (parts.some((p) => p.startsWith("."))) return false;
  if (parts.some((p) => p === "node_modules" || p === "dist" || p === "coverage")) return false;
  const base = parts[parts.length - 1];
  if (
    base.endsWith(".log") &&
    !(parts[0] === "logs" && parts[1] === "keep" && parts.length === 3)
  ) {
    return false;
  }
  if (parts[0] === "services") {
    if (parts.some((p) => p === "target" || p === "__pycache__")) return false;
    if (base.endsWith(".pyc")) return false;
  }
  return true;
}

async function ensureTree() {
  if (existsSync(MANIFEST) && existsSync(TREE)) {
    try {
      const m = JSON.parse(readFileSync(MANIFEST, "utf8"));
      if (m.version === GENERATOR_VERSION && m.total === FILES) return m;
    } catch {
      // remake
    }
  }
  log(`generating ${FILES} files under ${TREE} (once; reused later)`);
  rmSync(TREE, { recursive: true, force: true });
  if (existsSync(MANIFEST)) unlinkSync(MANIFEST);
  const tmp = `${TREE}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(path.dirname(tmp), { recursive: true });
  const t0 = performance.now();
  const stats = generateTree(tmp, FILES);
  renameSync(tmp, TREE);
  const m = {
    version: GENERATOR_VERSION,
    total: FILES,
    ...stats,
    seconds: (performance.now() - t0) / 1000,
  };
  writeFileSync(MANIFEST, JSON.stringify(m, null, 2));
  log(`generated ${stats.files} files, ${fmtBytes(stats.bytes)} in ${m.seconds.toFixed(1)} s`);
  return m;
}

// ---------------------------------------------------------------------------------------------
// Measuring

const TMP = path.join(os.tmpdir(), `pagewise-bench-ls-${process.pid}`);
const results = { tree: TREE, reps: REPS, bfsReps: BFS_REPS };
const warnings = [];

function warn(message) {
  warnings.push(message);
  console.log(`\n**WARNING: ${message}**`);
  log(`WARNING: ${message}`);
}

/** Tokens as pagewise's `default` estimator counts them (the build under test). */
let estimator;
async function loadEstimator() {
  const dist = path.join(path.dirname(PAGEWISE_BIN), "../dist/index.js");
  const mod = await import(pathToFileURL(dist).href);
  estimator = mod.defaultEstimator;
}
const tokensOf = (text) => estimator.count(text);

/** `rg` and GNU `time`, installed from Debian's packages when absent; returns rg's version line. */
function ensureTools() {
  const rg = () => spawnSync("rg", ["--version"], { encoding: "utf8" });
  const missing = [];
  if (rg().status !== 0) missing.push("ripgrep");
  if (!existsSync("/usr/bin/time")) missing.push("time");
  if (missing.length > 0) {
    if (process.getuid?.() !== 0) {
      throw new Error(
        `${missing.join(" and ")} absent and this is not root: apt-get install ${missing.join(" ")}`,
      );
    }
    log(
      `installing Debian's ${missing.join(" and ")} (apt-get update && apt-get install -y ${missing.join(" ")})`,
    );
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env });
    execFileSync("apt-get", ["install", "-y", ...missing], {
      stdio: ["ignore", "ignore", "inherit"],
      env,
    });
  }
  return rg().stdout.split("\n")[0];
}

/**
 * Runs `sh -c "<cmd> > <out>"` in the tree under GNU time: wall (at the caller), CPU (user + sys of
 * every process of the pipeline), peak RSS (largest process), the output's size.
 */
function timeShell(cmd, out) {
  const timing = path.join(TMP, "time.txt");
  const t0 = performance.now();
  const r = spawnSync(
    "/usr/bin/time",
    ["-f", "%e %U %S %M", "-o", timing, "sh", "-c", `${cmd} > '${out}'`],
    {
      cwd: TREE,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, LC_ALL: "C.UTF-8" },
    },
  );
  const wallMs = performance.now() - t0;
  const last = readFileSync(timing, "utf8").trim().split("\n").pop();
  const [, user, sys, maxKiB] = last.split(/\s+/).map(Number);
  if (r.status !== 0 && r.status !== 1) {
    throw new Error(`${cmd} failed (${r.status}): ${r.stderr.toString().slice(-500)}`);
  }
  return {
    wallMs,
    cpuMs: (user + sys) * 1000,
    peakRss: maxKiB * 1024,
    outBytes: statSync(out).size,
  };
}

/** Runs a shell command in the tree (stdin closed: `rg` without a path would read a piped stdin). */
function sh(cmd) {
  return execFileSync("sh", ["-c", cmd], {
    cwd: TREE,
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 256 << 20,
  });
}

/** Runs subjects `reps` times, interleaved (A B C A B C …); returns name -> runs. */
async function interleave(label, subjects) {
  const runs = Object.fromEntries(subjects.map((s) => [s.name, []]));
  const reps = Math.max(...subjects.map((s) => s.reps ?? REPS));
  for (let r = 0; r < reps; r++) {
    for (const s of subjects) {
      if (r >= (s.reps ?? REPS)) continue;
      log(`${label}: ${s.name} run ${r + 1}/${s.reps ?? REPS}`);
      runs[s.name].push(await s.run());
    }
  }
  return runs;
}

const med = (runs, field) => median(runs.map((x) => x[field]).filter(Number.isFinite));
const fmtN = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const fmtSize = (chars, tokens) => `${fmtN(chars)} / ${fmtN(tokens)}`;

function parse(res, what) {
  if (res.isError) throw new Error(`${what} failed: ${res.text?.slice(0, 500)}`);
  return JSON.parse(res.text);
}

const pagewise = () => startPagewise({ root: TREE });
const peer = () => startPeer({ root: TREE });
const rawPeer = () => startRawPeer({ root: TREE });

/** One timed call; returns the parsed page plus its cost. */
async function timedCall(server, name, args) {
  const c0 = server.cpuMs();
  const t0 = performance.now();
  const res = await server.call(name, args);
  const ms = performance.now() - t0;
  return { res, ms, cpuMs: server.cpuMs() - c0 };
}

/**
 * pagewise `list` workload: the first page (limit 100, default budget), then `samplePages`
 * continuations at the default budget with limit 1000 (the per-page cost an agent pays), then on to
 * the end with limit 1000 and `max_tokens` 100000 (so that the limit, not the budget, binds).
 */
function listWorkload(args, { samplePages = 10 } = {}) {
  return async (server) => {
    const first = await timedCall(server, "list", { ...args, limit: 100 });
    const p0 = parse(first.res, "list");
    const firstPeakRss = server.memory().peakRss;
    const texts = [first.res.text];
    const paths = p0.items.map((i) => i.path);
    const sample = [];
    const sampleCpu = [];
    let sampleItems = 0;
    const pageMs = [];
    let p = p0;
    for (let i = 0; i < samplePages && p.next_cursor; i++) {
      const c = await timedCall(server, "list", { cursor: p.next_cursor, limit: 1000 });
      p = parse(c.res, "list");
      sample.push(c.ms);
      sampleCpu.push(c.cpuMs);
      sampleItems += p.items.length;
      texts.push(c.res.text);
      for (const it of p.items) paths.push(it.path);
    }
    while (p.next_cursor) {
      const c = await timedCall(server, "list", {
        cursor: p.next_cursor,
        limit: 1000,
        max_tokens: 100_000,
      });
      p = parse(c.res, "list");
      pageMs.push(c.ms);
      texts.push(c.res.text);
      for (const it of p.items) paths.push(it.path);
    }
    return {
      firstMs: first.ms,
      firstCpuMs: first.cpuMs,
      firstPeakRss,
      firstChars: first.res.text.length,
      total: p0.pagination.total,
      sampleMs: median(sample),
      sampleCpuMs: median(sampleCpu),
      sampleItems: sampleItems / Math.max(1, sample.length),
      sampleChars: median(texts.slice(1, 1 + sample.length).map((t) => t.length)),
      bigPageMs: median(pageMs),
      bigPageP90Ms: percentile(pageMs, 90),
      bigPageMaxMs: Math.max(...pageMs),
      slowPages: pageMs.filter((ms) => ms > 4 * median(pageMs)).length,
      calls: texts.length,
      texts,
      paths,
    };
  };
}

/** The peer's `list_directory` of every directory, breadth-first from the root. */
async function peerBfs(server) {
  const queue = [TREE];
  const texts = [];
  let entries = 0;
  let files = 0;
  while (queue.length > 0) {
    const dir = queue.shift();
    const res = await server.call("list_directory", { path: dir });
    if (res.isError) throw new Error(`list_directory ${dir}: ${res.text}`);
    texts.push(res.text);
    for (const line of res.text.split("\n")) {
      if (line.startsWith("[DIR] ")) queue.push(`${dir}/${line.slice(6)}`);
      else if (line.startsWith("[FILE] ")) files++;
      entries++;
    }
  }
  return { texts, entries, files, calls: texts.length };
}

/** Response metrics of a list of texts: largest and total characters and tokens. */
function sizes(texts) {
  let chars = 0;
  let tokens = 0;
  let maxChars = 0;
  let maxTokens = 0;
  for (const t of texts) {
    const k = tokensOf(t);
    chars += t.length;
    tokens += k;
    maxChars = Math.max(maxChars, t.length);
    maxTokens = Math.max(maxTokens, k);
  }
  return { chars, tokens, maxChars, maxTokens };
}

/** Keeps what the tables need from a run and drops the (large) texts. */
function slim(run, keep = []) {
  const out = {};
  for (const [k, v] of Object.entries(run))
    if (!["texts", "paths", "items"].includes(k) || keep.includes(k)) out[k] = v;
  return out;
}

function firstDifference(a, b) {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++)
    if (a[i] !== b[i]) return `at index ${i}: ${JSON.stringify(a[i])} vs ${JSON.stringify(b[i])}`;
  return "none";
}

// ---------------------------------------------------------------------------------------------
// 1. list

async function benchList(expected) {
  const findOut = path.join(TMP, "find.txt");
  let bfsSizes;
  let treeSizes;
  let rootSizes;
  let pwSizes;
  let pwPaths;
  const subjects = [
    {
      name: "pagewise",
      run: async () => {
        const r = await runOnce(pagewise, listWorkload({ recursive: true, type: "file" }));
        pwSizes ??= sizes(r.texts);
        pwSizes.first = sizes([r.texts[0]]);
        pwPaths ??= r.paths;
        return slim(r);
      },
    },
    {
      name: "peer list_directory (root)",
      run: async () => {
        const r = await runOnce(peer, async (s) => {
          const res = await s.call("list_directory", { path: TREE });
          return { text: res.text, entries: res.text.split("\n").length, wire: res.bytes };
        });
        rootSizes ??= { ...sizes([r.text]), wire: r.wire };
        return slim(r);
      },
    },
    {
      name: "peer list_directory (every directory)",
      reps: BFS_REPS,
      run: async () => {
        const r = await runOnce(peer, peerBfs);
        bfsSizes ??= sizes(r.texts);
        return slim(r);
      },
    },
    {
      name: "peer directory_tree (plain JSON-RPC client)",
      run: async () => {
        const r = await runOnce(rawPeer, async (s) => {
          const res = await s.call("directory_tree", { path: TREE });
          if (res.isError) throw new Error(`directory_tree: ${res.text}`);
          return { text: res.text, wire: res.bytes };
        });
        if (!treeSizes) {
          treeSizes = { ...sizes([r.text]), wire: r.wire };
          let files = 0;
          let entries = 0;
          const count = (nodes) => {
            for (const n of nodes) {
              entries++;
              if (n.type === "file") files++;
              if (n.children) count(n.children);
            }
          };
          count(JSON.parse(r.text));
          treeSizes.entries = entries;
          treeSizes.files = files;
        }
        return slim(r, []);
      },
    },
    {
      name: "find -type f | sort",
      run: async () => timeShell("find . -type f | LC_ALL=C sort", findOut),
    },
  ];
  const runs = await interleave(
    "list",
    subjects.filter((s) => LIST_PEERS || !s.name.startsWith("peer ")),
  );
  for (const r of runs["peer directory_tree (plain JSON-RPC client)"] ?? []) delete r.text;
  for (const r of runs["peer list_directory (root)"] ?? []) delete r.text;

  // Correctness, on the side.
  const found = readFileSync(findOut, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(2));
  const want = found.filter(visible);
  if (found.length !== expected.files) {
    warn(`find listed ${found.length} files, the tree has ${expected.files}`);
  }
  if (JSON.stringify(want) !== JSON.stringify(expected.visible))
    warn("find's filtered list differs from the expected one");
  const pw = runs.pagewise[0];
  if (pw.total !== want.length)
    warn(`pagewise list total ${pw.total} ≠ find minus hidden/ignored ${want.length}`);
  if (pwPaths.length !== want.length || pwPaths.some((p, i) => p !== want[i])) {
    warn(
      `pagewise's full walk (${pwPaths.length} paths) ≠ find minus hidden/ignored (${want.length}), first difference ${firstDifference(pwPaths, want)}`,
    );
  }
  if (expected.rgFiles !== want.length)
    warn(`rg --files lists ${expected.rgFiles}, find minus hidden/ignored ${want.length}`);
  const findText = readFileSync(findOut, "utf8");
  const findSizes = { chars: findText.length, tokens: tokensOf(findText) };
  results.list = {
    runs,
    pwSizes,
    rootSizes,
    bfsSizes,
    treeSizes,
    findSizes,
    listed: want.length,
    found: found.length,
  };

  const P = runs.pagewise;
  const root = runs["peer list_directory (root)"];
  const bfs = runs["peer list_directory (every directory)"];
  const tree = runs["peer directory_tree (plain JSON-RPC client)"];
  const find = runs["find -type f | sort"];
  const fullMs = med(P, "wallMs");
  const fullCpu = med(P, "cpuMs");
  const pages = P[0].calls;
  printTable(
    `list: the whole tree, recursive, files only — ${fmtN(FILES)} files, ${fmtN(want.length)} listed by pagewise (median of ${REPS})`,
    [
      "subject",
      "calls",
      "entries returned",
      "wall",
      "CPU",
      "peak RSS",
      "largest response: chars / est. tokens",
      "all responses: chars / est. tokens",
    ],
    [
      [
        "pagewise first page (limit 100, default budget)",
        1,
        `100 (total ${fmtN(P[0].total)})`,
        fmtMs(med(P, "firstMs")),
        fmtMs(med(P, "firstCpuMs")),
        fmtBytes(med(P, "firstPeakRss")),
        fmtSize(pwSizes.first.chars, pwSizes.first.tokens),
        "—",
      ],
      [
        `pagewise next page, default budget, limit 1000 (median page)`,
        1,
        `${fmtN(med(P, "sampleItems"))} (budget binds)`,
        fmtMs(med(P, "sampleMs")),
        fmtMs(med(P, "sampleCpuMs")),
        "—",
        `${fmtN(med(P, "sampleChars"))} / ≤ 8,000`,
        "—",
      ],
      [
        `pagewise full walk: first page, 10 default-budget pages, then limit 1000 at max_tokens 100000 to the end`,
        pages,
        fmtN(pwPaths.length),
        fmtMs(fullMs),
        fmtMs(fullCpu),
        fmtBytes(med(P, "peakRss")),
        fmtSize(pwSizes.maxChars, pwSizes.maxTokens),
        fmtSize(pwSizes.chars, pwSizes.tokens),
      ],
      ...(LIST_PEERS
        ? [
            [
              "peer list_directory of the root",
              1,
              fmtN(root[0].entries),
              fmtMs(med(root, "wallMs")),
              fmtMs(med(root, "cpuMs")),
              fmtBytes(med(root, "peakRss")),
              fmtSize(rootSizes.chars, rootSizes.tokens),
              "—",
            ],
            [
              `peer list_directory of every directory, breadth-first${BFS_REPS !== REPS ? ` (${BFS_REPS} run${BFS_REPS > 1 ? "s" : ""})` : ""}`,
              fmtN(bfs[0].calls),
              `${fmtN(bfs[0].entries)} (${fmtN(bfs[0].files)} [FILE])`,
              fmtMs(med(bfs, "wallMs")),
              fmtMs(med(bfs, "cpuMs")),
              fmtBytes(med(bfs, "peakRss")),
              fmtSize(bfsSizes.maxChars, bfsSizes.maxTokens),
              fmtSize(bfsSizes.chars, bfsSizes.tokens),
            ],
            [
              "peer directory_tree of the root (plain JSON-RPC client)",
              1,
              `${fmtN(treeSizes.entries)} (${fmtN(treeSizes.files)} files)`,
              fmtMs(med(tree, "wallMs")),
              fmtMs(med(tree, "cpuMs")),
              fmtBytes(med(tree, "peakRss")),
              `${fmtSize(treeSizes.chars, treeSizes.tokens)} (${fmtBytes(treeSizes.wire)} on the wire)`,
              "—",
            ],
          ]
        : []),
      [
        "find . -type f | LC_ALL=C sort",
        "1 process",
        fmtN(found.length),
        fmtMs(med(find, "wallMs")),
        fmtMs(med(find, "cpuMs")),
        `${fmtBytes(med(find, "peakRss"))} (largest process)`,
        fmtSize(findSizes.chars, findSizes.tokens),
        "—",
      ],
    ],
  );
  printTable(
    "list: ratios (pagewise / other; wall and CPU medians, peak RSS, largest response in characters)",
    ["pagewise", "versus", "wall", "CPU", "peak RSS", "largest response"],
    [
      [
        "first page",
        "find | sort",
        ratio(med(P, "firstMs"), med(find, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(find, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(find, "peakRss")),
        ratio(pwSizes.first.chars, findSizes.chars),
      ],
      ...(LIST_PEERS
        ? [
            [
              "first page",
              "peer list_directory (root)",
              ratio(med(P, "firstMs"), med(root, "wallMs")),
              ratio(med(P, "firstCpuMs"), med(root, "cpuMs")),
              ratio(med(P, "firstPeakRss"), med(root, "peakRss")),
              ratio(pwSizes.first.chars, rootSizes.chars),
            ],
            [
              "first page",
              "peer directory_tree",
              ratio(med(P, "firstMs"), med(tree, "wallMs")),
              ratio(med(P, "firstCpuMs"), med(tree, "cpuMs")),
              ratio(med(P, "firstPeakRss"), med(tree, "peakRss")),
              ratio(pwSizes.first.chars, treeSizes.chars),
            ],
          ]
        : []),
      [
        "full walk",
        "find | sort",
        ratio(fullMs, med(find, "wallMs")),
        ratio(fullCpu, med(find, "cpuMs")),
        ratio(med(P, "peakRss"), med(find, "peakRss")),
        ratio(pwSizes.maxChars, findSizes.chars),
      ],
      ...(LIST_PEERS
        ? [
            [
              "full walk",
              "peer list_directory (every directory)",
              ratio(fullMs, med(bfs, "wallMs")),
              ratio(fullCpu, med(bfs, "cpuMs")),
              ratio(med(P, "peakRss"), med(bfs, "peakRss")),
              ratio(pwSizes.maxChars, bfsSizes.maxChars),
            ],
            [
              "full walk",
              "peer directory_tree",
              ratio(fullMs, med(tree, "wallMs")),
              ratio(fullCpu, med(tree, "cpuMs")),
              ratio(med(P, "peakRss"), med(tree, "peakRss")),
              ratio(pwSizes.maxChars, treeSizes.chars),
            ],
          ]
        : []),
    ],
  );
  console.log(
    `\nFull walk pages at max_tokens 100000: median ${fmtMs(med(P, "bigPageMs"))}, p90 ${fmtMs(med(P, "bigPageP90Ms"))}, slowest ${fmtMs(med(P, "bigPageMaxMs"))}; pages slower than 4× the median: ${P.map((r) => r.slowPages).join(", ")} per run. A default-budget walk would take ${fmtN(want.length / med(P, "sampleItems"))} calls (≈ ${fmtMs((want.length / med(P, "sampleItems")) * med(P, "sampleMs"))} at the median page).`,
  );
}

// ---------------------------------------------------------------------------------------------
// 2. search

const GREP_EXCLUDES =
  "--exclude-dir='.?*' --exclude='.*' --exclude-dir=node_modules --exclude-dir=dist " +
  "--exclude-dir=coverage --exclude-dir=target --exclude-dir=__pycache__ --exclude='*.log' --exclude='*.pyc'";

/**
 * pagewise `search` workload: the first page (default limit and budget; its `total` is exact),
 * optionally one continuation with limit 1000 from the first cursor, then `next_cursor` to the
 * end with the default limit and budget, collecting every match.
 */
function searchWorkload(args, { bigContinuation = false } = {}) {
  return async (server) => {
    const first = await timedCall(server, "search", args);
    const p0 = parse(first.res, "search");
    const firstPeakRss = server.memory().peakRss;
    let big;
    if (bigContinuation && p0.next_cursor) {
      const c = await timedCall(server, "search", { cursor: p0.next_cursor, limit: 1000 });
      const pb = parse(c.res, "search");
      big = { ms: c.ms, cpuMs: c.cpuMs, items: pb.items.length };
    }
    const texts = [first.res.text];
    const items = p0.items.map((m) => `${m.path}:${m.line}:${m.column}`);
    const pageMs = [];
    const pageCpu = [];
    const pageItems = [];
    let p = p0;
    const c0 = server.cpuMs();
    const t0 = performance.now();
    while (p.next_cursor) {
      const c = await timedCall(server, "search", { cursor: p.next_cursor });
      p = parse(c.res, "search");
      pageMs.push(c.ms);
      pageCpu.push(c.cpuMs);
      pageItems.push(p.items.length);
      texts.push(c.res.text);
      for (const m of p.items) items.push(`${m.path}:${m.line}:${m.column}`);
    }
    return {
      firstMs: first.ms,
      firstCpuMs: first.cpuMs,
      firstPeakRss,
      total: p0.pagination.total,
      skipped: p0.skipped,
      bigMs: big?.ms,
      bigCpuMs: big?.cpuMs,
      bigItems: big?.items,
      restMs: performance.now() - t0,
      restCpuMs: server.cpuMs() - c0,
      pageMs: median(pageMs),
      pageCpuMs: median(pageCpu),
      pageItems: median(pageItems),
      pageChars: median(texts.slice(1).map((t) => t.length)),
      calls: texts.length,
      texts,
      items,
    };
  };
}

function sumCounts(text) {
  let n = 0;
  for (const line of text.split("\n")) {
    const m = line.match(/:(\d+)$/);
    if (m) n += Number(m[1]);
  }
  return n;
}

async function benchSearch(spec) {
  const { label, args, rg, grep } = spec;
  const rgOut = path.join(TMP, "rg.txt");
  const grepOut = path.join(TMP, "grep.txt");
  let pwSizes;
  let pwItems;
  const subjects = [
    {
      name: "pagewise",
      run: async () => {
        const r = await runOnce(pagewise, searchWorkload(args, { bigContinuation: spec.big }));
        if (!pwSizes) {
          pwSizes = sizes(r.texts);
          pwSizes.first = sizes([r.texts[0]]);
          pwItems = r.items;
        }
        return slim(r);
      },
    },
    { name: "rg", run: async () => timeShell(`rg -n --no-require-git ${rg}`, rgOut) },
    { name: "grep", run: async () => timeShell(`grep -rnI ${GREP_EXCLUDES} ${grep} .`, grepOut) },
  ];
  const runs = await interleave(`search ${label}`, subjects);

  // Correctness, on the side: totals against rg's --count-matches.
  const rgCount = sumCounts(sh(`rg --count-matches --no-require-git ${rg} || true`));
  const grepCount = Number(sh(`grep -rhoI ${GREP_EXCLUDES} ${grep} . | wc -l`).trim());
  const P = runs.pagewise;
  if (P.some((r) => r.total !== rgCount))
    warn(
      `search ${label}: pagewise total ${P.map((r) => r.total).join("/")} ≠ rg --count-matches ${rgCount}`,
    );
  if (pwItems.length !== P[0].total)
    warn(
      `search ${label}: full paging returned ${pwItems.length} matches, total says ${P[0].total}`,
    );
  if (new Set(pwItems).size !== pwItems.length)
    warn(`search ${label}: full paging returned duplicate matches`);
  if (grepCount !== rgCount)
    warn(
      `search ${label}: grep -o counts ${grepCount}, rg ${rgCount} (grep's --exclude approximates .gitignore)`,
    );
  const rgText = readFileSync(rgOut, "utf8");
  const grepText = readFileSync(grepOut, "utf8");
  const rgSizes = {
    chars: rgText.length,
    tokens: tokensOf(rgText),
    lines: rgText.split("\n").length - 1,
  };
  const grepSizes = {
    chars: grepText.length,
    tokens: tokensOf(grepText),
    lines: grepText.split("\n").length - 1,
  };
  results[`search ${label}`] = { runs, pwSizes, rgSizes, grepSizes, rgCount, grepCount };

  const R = runs.rg;
  const G = runs.grep;
  const fullMs = med(P, "firstMs") + med(P, "restMs");
  const fullCpu = med(P, "firstCpuMs") + med(P, "restCpuMs");
  const rows = [
    [
      "pagewise first page (limit 100, default budget)",
      1,
      `${Math.min(100, P[0].total)} (total ${fmtN(P[0].total)})`,
      fmtMs(med(P, "firstMs")),
      fmtMs(med(P, "firstCpuMs")),
      fmtBytes(med(P, "firstPeakRss")),
      fmtSize(pwSizes.first.chars, pwSizes.first.tokens),
      "—",
    ],
  ];
  if (P[0].calls > 1) {
    rows.push([
      `pagewise next page (next_cursor, default limit and budget; median of ${P[0].calls - 1} pages)`,
      1,
      fmtN(P[0].pageItems),
      fmtMs(med(P, "pageMs")),
      fmtMs(med(P, "pageCpuMs")),
      "—",
      fmtN(P[0].pageChars),
      "—",
    ]);
  }
  if (spec.big && P[0].bigItems !== undefined) {
    rows.push([
      `pagewise next page with limit 1000 (budget keeps ${P[0].bigItems})`,
      1,
      fmtN(P[0].bigItems),
      fmtMs(med(P, "bigMs")),
      fmtMs(med(P, "bigCpuMs")),
      "—",
      "—",
      "—",
    ]);
  }
  rows.push(
    [
      `pagewise every match: first page + next_cursor to the end`,
      P[0].calls,
      fmtN(pwItems.length),
      fmtMs(fullMs),
      fmtMs(fullCpu),
      fmtBytes(med(P, "peakRss")),
      fmtSize(pwSizes.maxChars, pwSizes.maxTokens),
      fmtSize(pwSizes.chars, pwSizes.tokens),
    ],
    [
      `rg -n (2 threads)`,
      "1 process",
      `${fmtN(rgSizes.lines)} lines (${fmtN(rgCount)} matches)`,
      fmtMs(med(R, "wallMs")),
      fmtMs(med(R, "cpuMs")),
      fmtBytes(med(R, "peakRss")),
      fmtSize(rgSizes.chars, rgSizes.tokens),
      "—",
    ],
    [
      `grep -rnI with excludes`,
      "1 process",
      `${fmtN(grepSizes.lines)} lines (${fmtN(grepCount)} matches)`,
      fmtMs(med(G, "wallMs")),
      fmtMs(med(G, "cpuMs")),
      fmtBytes(med(G, "peakRss")),
      fmtSize(grepSizes.chars, grepSizes.tokens),
      "—",
    ],
  );
  printTable(
    `search ${label} (median of ${REPS}; the peer has no content search)`,
    [
      "subject",
      "calls",
      "matches returned",
      "wall",
      "CPU",
      "peak RSS",
      "largest response: chars / est. tokens",
      "all responses: chars / est. tokens",
    ],
    rows,
  );
  printTable(
    `search ${label}: ratios (pagewise / other)`,
    ["pagewise", "versus", "wall", "CPU", "peak RSS"],
    [
      [
        "first page",
        "rg -n",
        ratio(med(P, "firstMs"), med(R, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(R, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(R, "peakRss")),
      ],
      [
        "first page",
        "grep -rn",
        ratio(med(P, "firstMs"), med(G, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(G, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(G, "peakRss")),
      ],
      [
        "every match",
        "rg -n",
        ratio(fullMs, med(R, "wallMs")),
        ratio(fullCpu, med(R, "cpuMs")),
        ratio(med(P, "peakRss"), med(R, "peakRss")),
      ],
      [
        "every match",
        "grep -rn",
        ratio(fullMs, med(G, "wallMs")),
        ratio(fullCpu, med(G, "cpuMs")),
        ratio(med(P, "peakRss"), med(G, "peakRss")),
      ],
    ],
  );
  if (P[0].skipped) console.log(`\npagewise skipped: ${JSON.stringify(P[0].skipped)}`);
}

// ---------------------------------------------------------------------------------------------
// 3. File names

async function benchNames() {
  const findOut = path.join(TMP, "find-names.txt");
  const rgOut = path.join(TMP, "rg-files.txt");
  let peerSizes;
  let pwSizes;
  let pwPaths;
  const subjects = [
    {
      name: "pagewise",
      run: async () => {
        const r = await runOnce(
          pagewise,
          listWorkload({ recursive: true, type: "file", glob: "*.test.ts" }, { samplePages: 0 }),
        );
        if (!pwSizes) {
          pwSizes = sizes(r.texts);
          pwSizes.first = sizes([r.texts[0]]);
          pwPaths = r.paths;
        }
        return slim(r);
      },
    },
    {
      name: "peer search_files",
      run: async () => {
        const r = await runOnce(peer, async (s) => {
          const res = await s.call("search_files", { path: TREE, pattern: "**/*.test.ts" });
          if (res.isError) throw new Error(`search_files: ${res.text}`);
          return { text: res.text, wire: res.bytes };
        });
        peerSizes ??= { ...sizes([r.text]), wire: r.wire, entries: r.text.split("\n").length };
        delete r.text;
        return r;
      },
    },
    {
      name: "find",
      run: async () => timeShell("find . -type f -name '*.test.ts' | LC_ALL=C sort", findOut),
    },
    {
      name: "rg --files",
      run: async () => timeShell("rg --files --no-require-git -g '*.test.ts'", rgOut),
    },
  ];
  const runs = await interleave("names", subjects);
  const found = readFileSync(findOut, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(2));
  const want = found.filter(visible);
  const rgCount = readFileSync(rgOut, "utf8").split("\n").filter(Boolean).length;
  const P = runs.pagewise;
  if (P[0].total !== want.length || pwPaths.some((p, i) => p !== want[i])) {
    warn(
      `names: pagewise (${P[0].total}) ≠ find -name minus hidden/ignored (${want.length}), first difference ${firstDifference(pwPaths, want)}`,
    );
  }
  if (rgCount !== want.length)
    warn(`names: rg --files -g lists ${rgCount}, expected ${want.length}`);
  const findText = readFileSync(findOut, "utf8");
  const findSizes = { chars: findText.length, tokens: tokensOf(findText) };
  const rgText = readFileSync(rgOut, "utf8");
  const rgSizes = { chars: rgText.length, tokens: tokensOf(rgText) };
  results.names = {
    runs,
    pwSizes,
    peerSizes,
    findSizes,
    rgSizes,
    expected: want.length,
    found: found.length,
  };
  const S = runs["peer search_files"];
  const F = runs.find;
  const RG = runs["rg --files"];
  const fullMs = med(P, "wallMs");
  printTable(
    `File names matching *.test.ts (median of ${REPS}; the peer's search_files matches names, not content)`,
    [
      "subject",
      "calls",
      "paths returned",
      "wall",
      "CPU",
      "peak RSS",
      "largest response: chars / est. tokens",
      "all responses: chars / est. tokens",
    ],
    [
      [
        "pagewise list glob '*.test.ts', first page (limit 100)",
        1,
        `100 (total ${fmtN(P[0].total)})`,
        fmtMs(med(P, "firstMs")),
        fmtMs(med(P, "firstCpuMs")),
        fmtBytes(med(P, "firstPeakRss")),
        fmtSize(pwSizes.first.chars, pwSizes.first.tokens),
        "—",
      ],
      [
        "pagewise list glob, every page (limit 1000, max_tokens 100000)",
        P[0].calls,
        fmtN(pwPaths.length),
        fmtMs(fullMs),
        fmtMs(med(P, "cpuMs")),
        fmtBytes(med(P, "peakRss")),
        fmtSize(pwSizes.maxChars, pwSizes.maxTokens),
        fmtSize(pwSizes.chars, pwSizes.tokens),
      ],
      [
        "peer search_files '**/*.test.ts'",
        1,
        fmtN(peerSizes.entries),
        fmtMs(med(S, "wallMs")),
        fmtMs(med(S, "cpuMs")),
        fmtBytes(med(S, "peakRss")),
        `${fmtSize(peerSizes.chars, peerSizes.tokens)} (${fmtBytes(peerSizes.wire)} on the wire)`,
        "—",
      ],
      [
        "find . -type f -name '*.test.ts' | LC_ALL=C sort",
        "1 process",
        fmtN(found.length),
        fmtMs(med(F, "wallMs")),
        fmtMs(med(F, "cpuMs")),
        fmtBytes(med(F, "peakRss")),
        fmtSize(findSizes.chars, findSizes.tokens),
        "—",
      ],
      [
        "rg --files -g '*.test.ts'",
        "1 process",
        fmtN(rgCount),
        fmtMs(med(RG, "wallMs")),
        fmtMs(med(RG, "cpuMs")),
        fmtBytes(med(RG, "peakRss")),
        fmtSize(rgSizes.chars, rgSizes.tokens),
        "—",
      ],
    ],
  );
  printTable(
    "File names: ratios (pagewise / other)",
    ["pagewise", "versus", "wall", "CPU", "peak RSS", "largest response"],
    [
      [
        "first page",
        "peer search_files",
        ratio(med(P, "firstMs"), med(S, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(S, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(S, "peakRss")),
        ratio(pwSizes.first.chars, peerSizes.chars),
      ],
      [
        "every page",
        "peer search_files",
        ratio(fullMs, med(S, "wallMs")),
        ratio(med(P, "cpuMs"), med(S, "cpuMs")),
        ratio(med(P, "peakRss"), med(S, "peakRss")),
        ratio(pwSizes.maxChars, peerSizes.chars),
      ],
      [
        "first page",
        "find -name | sort",
        ratio(med(P, "firstMs"), med(F, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(F, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(F, "peakRss")),
        "—",
      ],
      [
        "first page",
        "rg --files -g",
        ratio(med(P, "firstMs"), med(RG, "wallMs")),
        ratio(med(P, "firstCpuMs"), med(RG, "cpuMs")),
        ratio(med(P, "firstPeakRss"), med(RG, "peakRss")),
        "—",
      ],
    ],
  );
}

// ---------------------------------------------------------------------------------------------
// Main

const manifest = await ensureTree();
if (process.env.BENCH_LS_ONLY === "generate") process.exit(0);
mkdirSync(TMP, { recursive: true });
try {
  await loadEstimator();
  const rgVersion = ensureTools();
  // Warm the page cache and the dentry cache, so every subject sees the same (warm) state, and let
  // the tree be quiet (pagewise's listing cache ignores directories changed in the last 2 s).
  log("warming the page cache (reading every file once)");
  sh("find . -type f -exec cat {} + > /dev/null");
  const visibleList = sh("find . -type f | LC_ALL=C sort")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(2))
    .filter(visible);
  const rgFiles = sh("rg --files --no-require-git | wc -l");
  const visibleBytes = sh("rg --files --no-require-git -0 | xargs -0 cat | wc -c");
  const expected = {
    visible: visibleList,
    rgFiles: Number(rgFiles.trim()),
    files: manifest.files,
  };
  results.manifest = manifest;
  console.log(
    `\n## list and search\n\nTree: ${TREE.startsWith(DATA_DIR) ? path.relative(path.dirname(DATA_DIR), TREE) : TREE} — ${fmtN(manifest.files)} regular files (${fmtBytes(manifest.bytes)}) in ${fmtN(Number(sh("find . -type d | wc -l")))} directories; ${fmtN(visibleList.length)} files (${fmtBytes(Number(visibleBytes))}) are neither hidden nor git-ignored. ${rgVersion}; ${spawnSync("grep", ["--version"], { encoding: "utf8" }).stdout.split("\n")[0]}; load average at start ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}.`,
  );
  if (ONLY.has("list")) await benchList(expected);
  if (ONLY.has("search")) {
    await benchSearch({
      label: "literal `TODO(perf)`",
      args: { pattern: "TODO(perf)", literal: true },
      rg: "-F 'TODO(perf)'",
      grep: "-F 'TODO(perf)'",
      big: true,
    });
    await benchSearch({
      label: "regex `new (Timeout|Retry)Error\\(`",
      args: { pattern: "new (Timeout|Retry)Error\\(" },
      rg: "'new (Timeout|Retry)Error\\('",
      grep: "-E 'new (Timeout|Retry)Error\\('",
      big: false,
    });
  }
  if (ONLY.has("names")) await benchNames();
  console.log(
    `\nLoad average at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(
        " ",
      )}. Correctness checks: ${warnings.length === 0 ? "all passed" : `${warnings.length} WARNING(s) above`}.`,
  );
  if (["list", "search", "names"].some((x) => ONLY.has(x))) {
    writeFileSync(
      path.join(DATA_DIR, "list-search-results.json"),
      JSON.stringify(results, null, 1),
    );
  }
} finally {
  rmSync(TMP, { recursive: true, force: true });
}
