/**
 * One identity's slow searches do not starve another identity's search, over Streamable HTTP: while
 * the identity "attacker" has searches of a pattern that backtracks for seconds on every line in
 * flight (only V8 runs it, in the guarded worker), a literal search of a small file by the identity
 * "victim" is answered first, and correctly — and so is the victim's search of a pattern that also
 * runs only on V8 (the attacker holds its own share of guarded threads, not every caller's). Both identities come from an auth file and reach one
 * server process, so they share its worker threads. Measured by the order in which the calls settle
 * and the hostile searches' progress, not by timing them; the hostile searches are never waited for
 * (the server is killed). Modelled on test/search-fairness.e2e.test.ts, which checks the same over
 * stdio for one caller.
 */
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpServer, releaseAll, startHttpServer } from "./support/attack.js";
import { outcomeOf, sdkClient, type ToolOutcome, tempDir } from "./support/server.js";

/** Seconds of backtracking per line (2^24 ways to split the run of A's), a few per file. */
const HOSTILE_LINE = `${"A".repeat(24)}B`;
const HOSTILE_PATTERN = "(?=A)(A+)+$";
const HOSTILE_FILES = 60;
const HOSTILE_CALLS = 3;
/** Runs only on V8 (a lookahead around a nested quantifier), so in the guarded worker; cheap here. */
const GUARDED_VICTIM_PATTERN = "(?=ne)(e+|n)+dle";

const ATTACKER_TOKEN = "attacker-token-5d1e8b3a9c";
const VICTIM_TOKEN = "victim-token-2f7a6c4e0b";
const sha = (t: string) => createHash("sha256").update(t).digest("hex");

/** An SDK client speaking to `url` with `token` as its bearer token. */
async function connect(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = sdkClient();
  await client.connect(transport);
  return client;
}

const clients: Client[] = [];
let cleanup: (() => void) | undefined;

afterEach(async () => {
  // Kills the server (releaseAll stops every server a test started).
  await releaseAll();
  // The hostile calls' streams are gone with the server; closing only drops the clients.
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  cleanup?.();
  cleanup = undefined;
});

/** A server with two identities: "attacker" (a tree of hostile files) and "victim" (small.txt). */
async function setUp(): Promise<HttpServer> {
  const tmp = tempDir("pagewise-fairness-http-");
  cleanup = tmp.cleanup;
  const attackerRoot = path.join(tmp.dir, "attacker");
  const victimRoot = path.join(tmp.dir, "victim");
  mkdirSync(path.join(attackerRoot, "hostile"), { recursive: true });
  mkdirSync(victimRoot);
  for (let i = 0; i < HOSTILE_FILES; i++) {
    const name = `f${String(i).padStart(2, "0")}.txt`;
    writeFileSync(path.join(attackerRoot, "hostile", name), `${HOSTILE_LINE}\n`.repeat(3));
  }
  writeFileSync(path.join(victimRoot, "small.txt"), "hay\nneedle\nhay\n");
  const authFile = path.join(tmp.dir, "auth.json");
  writeFileSync(
    authFile,
    JSON.stringify({
      identities: [
        { name: "attacker", token_sha256: sha(ATTACKER_TOKEN), roots: [attackerRoot] },
        { name: "victim", token_sha256: sha(VICTIM_TOKEN), roots: [victimRoot] },
      ],
    }),
  );
  // `--root` is refused together with `--auth-file`: each identity's roots are in the file. The
  // hostile searches are stopped by the server's own guards (stall windows, request timeout) long
  // after the victim's answer; the test kills the server before that.
  return startHttpServer(["--auth-file", authFile]);
}

/** The error code of a settled call: a tool error's `error.code`, or a rejection's message. */
function codeOf(outcome: ToolOutcome | Error): string {
  if (outcome instanceof Error) return `rejected: ${outcome.message}`;
  return outcome.isError ? String(outcome.json?.error?.code ?? outcome.text) : "ok";
}

describe("over HTTP, one identity's slow searches do not starve another identity's", () => {
  it("the victim's literal and guarded searches finish while the attacker's hostile searches run", async () => {
    const s = await setUp();
    const attacker = await connect(s.url, ATTACKER_TOKEN);
    clients.push(attacker);
    const victim = await connect(s.url, VICTIM_TOKEN);
    clients.push(victim);

    const settled: string[] = [];
    const hostileOutcomes: string[] = [];
    // Files the hostile searches have read so far (their progress notifications), all together.
    const read = new Array<number>(HOSTILE_CALLS).fill(0);
    const filesRead = () => read.reduce((a, b) => a + b, 0);
    let started!: () => void;
    const first = new Promise<void>((resolve) => {
      started = resolve;
    });
    for (let i = 0; i < HOSTILE_CALLS; i++) {
      const done = (outcome: ToolOutcome | Error) => {
        settled.push(`hostile${i}`);
        hostileOutcomes.push(codeOf(outcome));
        started(); // an early end fails the order check below instead of hanging the test
      };
      attacker
        .callTool(
          { name: "search", arguments: { pattern: HOSTILE_PATTERN, path: "hostile" } },
          {
            onprogress: (p) => {
              read[i] = p.progress;
              started();
            },
            timeout: 120_000,
          },
        )
        .then(
          (raw) => done(outcomeOf(raw)),
          (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
        );
    }
    // A hostile scan is under way (it has read a file) before the victim's search is sent.
    await first;
    const cheap = outcomeOf(
      await victim.callTool(
        { name: "search", arguments: { pattern: "needle", literal: true, path: "small.txt" } },
        { timeout: 120_000 },
      ),
    );
    settled.push("victim");
    const guarded = outcomeOf(
      await victim.callTool(
        { name: "search", arguments: { pattern: GUARDED_VICTIM_PATTERN, path: "small.txt" } },
        { timeout: 120_000 },
      ),
    );
    settled.push("victim-guarded");
    const readMeanwhile = filesRead();

    expect(cheap.isError, cheap.text).toBe(false);
    expect(cheap.json.pagination.total).toBe(1);
    expect(cheap.json.items).toEqual([
      expect.objectContaining({ path: "small.txt", line: 2, text: "needle" }),
    ]);
    expect(guarded.isError, guarded.text).toBe(false);
    expect(guarded.json.items).toEqual([
      expect.objectContaining({ path: "small.txt", line: 2, text: "needle" }),
    ]);
    // Both answered while every hostile search was still running, early in their work: waiting
    // for the attacker's threads means waiting for most of its files.
    expect(settled, `hostile outcomes: ${hostileOutcomes.join(", ")}`).toEqual([
      "victim",
      "victim-guarded",
    ]);
    expect(readMeanwhile).toBeLessThan(HOSTILE_FILES / 2);
    // Nothing failed inside the server: not the victim's call, not any hostile call that ended,
    // not any request the server logged.
    expect(cheap.text).not.toContain("INTERNAL_ERROR");
    expect(guarded.text).not.toContain("INTERNAL_ERROR");
    expect(hostileOutcomes.join(" ")).not.toContain("INTERNAL_ERROR");
    expect(s.stderr()).not.toContain("INTERNAL_ERROR");
  }, 120_000);
});
