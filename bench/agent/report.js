/**
 * @module
 * Turns the agent benchmark's results into what the docs show: a Markdown section (results table,
 * totals, the call sequences), a summary for the README, and an SVG chart. `writeDocs` puts them
 * between `<!-- agent-bench:begin -->` and `<!-- agent-bench:end -->` markers in
 * `docs/benchmarks.md` and `README.md` and writes `docs/agent-bench.svg`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./data.js";

const SERVER_LABELS = {
  pagewise: "pagewise",
  filesystem: "server-filesystem",
  desktopCommander: "DesktopCommander",
};
const SERVER_COLORS = { pagewise: "#1b7f79", filesystem: "#c8553d", desktopCommander: "#6c5b7b" };
const BEGIN = "<!-- agent-bench:begin -->";
const END = "<!-- agent-bench:end -->";

const sum = (xs) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");

function compact(n) {
  if (!Number.isFinite(n)) return "—";
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)} M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)} k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(Math.round(n));
}

function ms(n) {
  if (!Number.isFinite(n)) return "—";
  if (n >= 10_000) return `${(n / 1000).toFixed(0)} s`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)} s`;
  return `${Math.round(n)} ms`;
}

/** ✓ right and shown inline; ◐ right but only in a result Claude Code diverts or refuses; ✗. */
export function outcomeOf(r) {
  if (r.skipped) return { mark: "–", label: "skipped", why: r.skipped };
  const over = r.calls.filter((c) => c.verdict === "diverted" || c.verdict === "refused");
  const shell = usedShell(r) ? " (with its shell)" : "";
  if (r.correct)
    return over.length > 0
      ? { mark: "◐", label: `right, in a result over the limits${shell}` }
      : { mark: "✓", label: `right${shell}` };
  if (r.error) return { mark: "✗", label: "failed", why: r.error };
  if (r.answer === undefined) return { mark: "✗", label: "no answer", why: r.note };
  return { mark: "✗", label: "wrong" };
}

/** Whether a run used a shell command (DesktopCommander's `start_process`). */
const usedShell = (r) => (r.calls ?? []).some((c) => c.tool === "start_process");

function totalsOf(r) {
  const calls = r.calls ?? [];
  const over = calls.filter((c) => c.verdict === "diverted" || c.verdict === "refused");
  return {
    calls: calls.length,
    o200k: sum(calls.map((c) => c.o200k)),
    claude: sum(calls.map((c) => c.claude)),
    largestChars: Math.max(0, ...calls.map((c) => c.chars ?? 0)),
    diverted: calls.filter((c) => c.verdict === "diverted").length,
    refused: calls.filter((c) => c.verdict === "refused").length,
    over: over.length,
    estimated: calls.some((c) => c.estimated),
    oversized: calls.some((c) => c.oversized),
  };
}

function overCell(t) {
  const parts = [];
  if (t.diverted) parts.push(`${t.diverted} diverted to a file`);
  if (t.refused) parts.push(`${t.refused} refused`);
  return parts.length ? parts.join(", ") : "none";
}

function resultsTable(results, tasks) {
  const rows = [
    "| Task | Server | Answer | Calls | Tokens shown (o200k / Claude) | Largest result | Over Claude Code's limits | Server CPU | Wall |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const task of tasks) {
    const own = results.filter((r) => r.task === task.id);
    own.forEach((r, i) => {
      const o = outcomeOf(r);
      const label = `${SERVER_LABELS[r.server]}${r.via ? " (library example)" : ""}`;
      if (r.skipped) {
        rows.push(
          `| ${i === 0 ? task.title : ""} | ${label} | – skipped: ${r.skipped} | | | | | | |`,
        );
        return;
      }
      const t = totalsOf(r);
      const est = t.estimated ? " ≈" : "";
      const answer = `${o.mark} ${o.label}${o.why ? `: ${o.why.replace(/\|/g, "\\|").slice(0, 140)}` : ""}`;
      rows.push(
        `| ${i === 0 ? task.title : ""} | ${label} | ${answer} | ${t.calls} | ${int(t.o200k)} / ${int(t.claude)}${est} | ${int(t.largestChars)} chars | ${overCell(t)} | ${ms(r.cpuMs)} | ${ms(r.wallMs)} |`,
      );
    });
  }
  return rows.join("\n");
}

function serverTotals(results, serverIds) {
  return serverIds.map((id) => {
    const own = results.filter((r) => r.server === id && !r.skipped);
    const outcomes = own.map(outcomeOf);
    const t = own.map(totalsOf);
    return {
      id,
      tasks: own.length,
      right: outcomes.filter((o) => o.mark === "✓").length,
      rightWithShell: own.filter((r, i) => outcomes[i].mark === "✓" && usedShell(r)).length,
      heaviest: own
        .map((r, i) => ({ task: r.task, o200k: t[i].o200k, calls: t[i].calls }))
        .sort((a, b) => b.o200k - a.o200k)[0],
      half: outcomes.filter((o) => o.mark === "◐").length,
      wrong: outcomes.filter((o) => o.mark === "✗").length,
      calls: sum(t.map((x) => x.calls)),
      o200k: sum(t.map((x) => x.o200k)),
      claude: sum(t.map((x) => x.claude)),
      over: sum(t.map((x) => x.over)),
      results: sum(t.map((x) => x.calls)),
      largest: Math.max(0, ...t.map((x) => x.largestChars)),
      cpuMs: sum(own.map((r) => r.cpuMs)),
      wallMs: sum(own.map((r) => r.wallMs)),
    };
  });
}

function totalsTable(totals) {
  const rows = [
    "| Server | ✓ right, shown | ◐ right, over the limits | ✗ not answered | Calls | Tokens shown (o200k) | Results over the limits | Largest result | Server CPU | Wall |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const t of totals) {
    rows.push(
      `| ${SERVER_LABELS[t.id]} | ${t.right} of ${t.tasks} | ${t.half} | ${t.wrong} | ${int(t.calls)} | ${int(t.o200k)} | ${t.over} of ${int(t.results)} | ${int(t.largest)} chars | ${ms(t.cpuMs)} | ${ms(t.wallMs)} |`,
    );
  }
  return rows.join("\n");
}

function notesList(results, tasks) {
  const out = [];
  for (const r of results) {
    const why = r.skipped ?? r.note ?? r.error;
    if (!why) continue;
    const task = tasks.find((t) => t.id === r.task);
    out.push(`- ${task?.title ?? r.task}, ${SERVER_LABELS[r.server]}: ${why}`);
  }
  return out.join("\n");
}

function plans(tasks) {
  const out = [];
  for (const task of tasks) {
    out.push(`- **${task.title}.** ${task.goal}`);
    for (const [id, s] of Object.entries(task.strategies))
      out.push(`  - ${SERVER_LABELS[id]}${s.server ? " (library example)" : ""}: ${s.plan}`);
  }
  return out.join("\n");
}

function header(meta) {
  const dc = meta.desktopCommander?.ok
    ? `DesktopCommander ${meta.versions?.desktopCommander} (ripgrep: \`${meta.desktopCommander.ripgrep}\`)`
    : `DesktopCommander skipped (${meta.desktopCommander?.reason})`;
  return `\`npm run bench:agent\`, ${meta.date}, build \`${meta.build}\`, Node ${meta.node}, ${meta.cpus} CPUs; load average ${meta.loadStart.join(" ")} at the start, ${meta.loadEnd.join(" ")} at the end; server-filesystem ${meta.versions?.filesystem}, ${dc}; ${meta.reps > 1 ? `median CPU and wall of ${meta.reps} runs` : "one run each"}.`;
}

// ---------------------------------------------------------------------------------------------
// The chart

const escapeXml = (s) =>
  String(s).replace(
    /[<>&"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c],
  );

/** Horizontal bars of tokens shown per task and server, on a log scale, marked ✓ ◐ ✗. */
export function renderSvg(results, tasks, meta, serverIds) {
  const width = 960;
  const left = 250;
  const right = 150;
  const barH = 13;
  const gap = 3;
  const groupGap = 14;
  const top = 78;
  const plotW = width - left - right;
  const maxTokens = Math.max(10, ...results.map((r) => (r.calls ? totalsOf(r).o200k : 0)));
  const decades = Math.ceil(Math.log10(maxTokens));
  const x = (tokens) => left + (Math.log10(Math.max(1, tokens)) / decades) * plotW;
  const rowsPerTask = serverIds.length;
  const height = top + tasks.length * (rowsPerTask * (barH + gap) + groupGap) + 56;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" role="img">`,
    `<title>Tokens handed to the agent per task: ${escapeXml(serverIds.map((id) => SERVER_LABELS[id]).join(", "))} (npm run bench:agent, ${meta.date})</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">Tokens handed to the agent per task, all calls (log scale)</text>`,
    `<text x="16" y="44" fill="#555">${escapeXml(`npm run bench:agent · ${meta.date} · ✓ right  ◐ right, but in a result Claude Code diverts to a file or refuses  ✗ not answered`)}</text>`,
  );
  // Grid: one line per decade, and Claude Code's token limit.
  for (let d = 0; d <= decades; d++) {
    const gx = left + (d / decades) * plotW;
    out.push(
      `<line x1="${gx}" y1="${top - 8}" x2="${gx}" y2="${height - 40}" stroke="#e3e3e3"/>`,
      `<text x="${gx}" y="${top - 12}" text-anchor="middle" fill="#777" font-size="11">${compact(10 ** d)}</text>`,
    );
  }
  let y = top;
  for (const task of tasks) {
    out.push(
      `<text x="${left - 10}" y="${y + ((barH + gap) * rowsPerTask) / 2 + 3}" text-anchor="end" font-weight="600">${escapeXml(task.short ?? task.title)}</text>`,
    );
    for (const id of serverIds) {
      const r = results.find((q) => q.task === task.id && q.server === id);
      if (r && !r.skipped) {
        const t = totalsOf(r);
        const o = outcomeOf(r);
        const w = Math.max(2, x(t.o200k) - left);
        out.push(
          `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${SERVER_COLORS[id]}" opacity="${o.mark === "✓" ? 1 : 0.45}"/>`,
          `<text x="${left + w + 5}" y="${y + barH - 3}" fill="#222">${o.mark} ${t.estimated ? "≈" : ""}${compact(t.o200k)}${t.calls > 1 ? ` · ${t.calls} calls` : ""}${usedShell(r) ? " · shell" : ""}</text>`,
        );
      }
      y += barH + gap;
    }
    y += groupGap;
  }
  // Legend.
  let lx = 16;
  for (const id of serverIds) {
    out.push(
      `<rect x="${lx}" y="${height - 22}" width="12" height="12" fill="${SERVER_COLORS[id]}"/>`,
      `<text x="${lx + 17}" y="${height - 12}">${escapeXml(SERVER_LABELS[id])}</text>`,
    );
    lx += 40 + SERVER_LABELS[id].length * 7;
  }
  out.push(
    `<text x="${lx + 10}" y="${height - 12}" fill="#555">faded: not right, or not shown by Claude Code · shell: answered with shell commands</text>`,
  );
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------

/** Says which task most of a server's tokens went to, where one task is most of them. */
function heaviestSentence(totals, tasks) {
  const parts = totals
    .filter((t) => t.heaviest && t.o200k > 0 && t.heaviest.o200k / t.o200k >= 0.8)
    .map((t) => {
      const task = tasks.find((x) => x.id === t.heaviest.task);
      return `${Math.round((100 * t.heaviest.o200k) / t.o200k)}% of ${SERVER_LABELS[t.id]}'s tokens went to one task, “${task?.title ?? t.heaviest.task}” (${int(t.heaviest.calls)} calls)`;
    });
  const shell = totals.filter((t) => t.rightWithShell > 0).map((t) => SERVER_LABELS[t.id]);
  const shellNote = shell.length
    ? ` ${shell.join(" and ")} answered some tasks by running shell commands (\`start_process\`: rg, sed, find), which read anything the user can.`
    : "";
  return `${parts.length ? `${parts.join("; ")}.` : ""}${shellNote} "Results over Claude Code's limits" are those it would save to a file (over 50,000 characters) or refuse (over 25,000 tokens).`;
}

export function renderReport({ results, meta, tasks: allTasks }) {
  const taskIds = [...new Set(results.map((r) => r.task))];
  const tasks = allTasks.filter((t) => taskIds.includes(t.id));
  const serverIds = Object.keys(SERVER_LABELS).filter((id) => results.some((r) => r.server === id));
  const totals = serverTotals(results, serverIds);
  const markdown = [
    header(meta),
    "",
    totalsTable(totals),
    "",
    resultsTable(results, tasks),
    "",
    "What the runs said on the way:",
    "",
    notesList(results, tasks),
    "",
    "The call sequences (each server's best natural route, from its own tool descriptions; in code in `bench/agent/tasks.js`):",
    "",
    plans(tasks),
  ].join("\n");
  const summary = [
    `**What an agent gains**, measured by \`npm run bench:agent\` (${meta.date}) on ${tasks.length} tasks over large content — a 1 GiB log, a 200 MB JSONL, a 50,000-file tree, this project's \`node_modules\`, a 120,000-character line, a 3,589-event thread — each run the way a capable agent would from each server's own tool descriptions:`,
    "",
    "| | right, and shown inline by Claude Code | right, but only in results it diverts or refuses | results over Claude Code's limits | tokens handed to the agent | calls |",
    "|---|---|---|---|---|---|",
    ...totals.map(
      (t) =>
        `| ${t.id === "pagewise" ? "**pagewise**" : SERVER_LABELS[t.id]} | ${t.right} of ${t.tasks}${t.rightWithShell ? ` (${t.rightWithShell} through its shell)` : ""} | ${t.half} | ${t.over} of ${int(t.results)} (largest ${compact(t.largest)} characters) | ${compact(t.o200k)} | ${int(t.calls)} |`,
    ),
    "",
    heaviestSentence(totals, tasks),
    "",
    "![Tokens handed to the agent per task: pagewise, server-filesystem and DesktopCommander](docs/agent-bench.svg)",
    "",
    "Per task, with server CPU and wall times, each server's call sequence and how the peers were set up: [docs/benchmarks.md](docs/benchmarks.md#agent-workloads-npm-run-benchagent).",
  ].join("\n");
  return {
    markdown,
    summary,
    svg: renderSvg(results, tasks, meta, serverIds),
  };
}

function replaceBetweenMarkers(file, content) {
  const text = readFileSync(file, "utf8");
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${file} has no ${BEGIN} … ${END} markers`);
  writeFileSync(file, `${text.slice(0, begin + BEGIN.length)}\n${content}\n${text.slice(end)}`);
}

export function writeDocs(report) {
  writeFileSync(path.join(REPO, "docs", "agent-bench.svg"), report.svg);
  replaceBetweenMarkers(path.join(REPO, "docs", "benchmarks.md"), report.markdown);
  replaceBetweenMarkers(path.join(REPO, "README.md"), report.summary);
}
