/**
 * @module
 * What a page prints as content: a file's text, one path per line, matching lines as rg prints
 * them (`PATH:LINE:COLUMN:TEXT`, each line once, context lines `PATH-LINE-TEXT` and `--` between
 * groups), records, and JSON values (one compact value per line, or pretty with their paths on a
 * terminal). Notes and the command for the next page go to stderr. A renderer carries what one
 * page leaves to the next, so a stream of pages prints like one page.
 */

import type { TerminalCommand } from "./options.js";
import { commandLine, displayPath, type Invocation, nextArgs } from "./output.js";

/** What one page writes: content to stdout, notes and follow-up commands to stderr. */
export interface RawOutput {
  stdout: string | Buffer;
  stderr: string[];
}

export interface RenderOptions {
  /** Paths are shown relative to this directory, or absolute when undefined. */
  readonly cwd: string | undefined;
  /** The command for the next page goes to stderr (one page); a stream walks the pages itself. */
  readonly continuation: boolean;
  /** `json`: each match with its path, pretty-printed (a terminal); else one value per line. */
  readonly pretty: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: pages are the tools' JSON, read field by field
type Page = any;

interface Line {
  readonly line: number;
  readonly text: string;
}

/**
 * A search's lines as rg prints them: a line with several matches once (at its first match's
 * column), context lines once even where two matches' contexts overlap, and `--` between groups
 * that do not touch. A match's after-context is held back until the next match (or the end) shows
 * which of those lines are matches themselves.
 */
class SearchLines {
  #path: string | undefined;
  /** The last line printed in #path (0: none). */
  #printed = 0;
  /** The path of the last line printed (a separator goes between files too). */
  #printedPath: string | undefined;
  #pending: Line[] = [];
  #started = false;
  constructor(readonly context: number) {}

  add(out: string[], where: string, item: Page): void {
    if (where !== this.#path) {
      this.flush(out);
      this.#path = where;
      this.#printed = 0;
    }
    if (item.line <= this.#printed) return; // a further match on a line already printed
    const before: string[] = item.before ?? [];
    const lines: Line[] = [
      ...this.#pending,
      ...before.map((text, k) => ({ line: item.line - before.length + k, text })),
    ].filter((l) => l.line > this.#printed && l.line < item.line);
    lines.sort((a, b) => a.line - b.line);
    this.#pending = [];
    for (const [k, l] of lines.entries()) {
      if (k > 0 && l.line === lines[k - 1]!.line) continue;
      this.#print(out, `${where}-${l.line}-${l.text}`, l.line);
    }
    const more = item.truncated ? " …" : "";
    this.#print(out, `${where}:${item.line}:${item.column}:${item.text}${more}`, item.line);
    this.#pending = ((item.after ?? []) as string[]).map((text, k) => ({
      line: item.line + 1 + k,
      text,
    }));
  }

  /** Prints the held-back after-context of the last match. */
  flush(out: string[]): void {
    for (const l of this.#pending) this.#print(out, `${this.#path}-${l.line}-${l.text}`, l.line);
    this.#pending = [];
  }

  #print(out: string[], text: string, line: number): void {
    const touches = this.#printedPath === this.#path && line === this.#printed + 1;
    if (this.context > 0 && this.#started && !touches) out.push("--");
    out.push(text);
    this.#started = true;
    this.#printed = line;
    this.#printedPath = this.#path;
  }
}

const lines = (texts: string[]) => texts.map((l) => `${l}\n`).join("");

/** Renders the pages of one command, in order. */
export class PageRenderer {
  readonly #search: SearchLines;
  constructor(
    readonly inv: Invocation,
    readonly options: RenderOptions,
  ) {
    this.#search = new SearchLines((inv.args.context as number | undefined) ?? 0);
  }

  /** The content of a tool's page, or undefined when the text is not a JSON page (read's line mode). */
  async render(text: string): Promise<RawOutput | undefined> {
    let page: Page;
    try {
      page = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (page === null || typeof page !== "object") return undefined;
    const rendered = await this.#renderPage(this.inv.command, page, text);
    if (typeof page.note === "string") rendered.stderr.unshift(page.note);
    return rendered;
  }

  /** What is still held back after the last page (a search's trailing context). */
  finish(): string {
    const out: string[] = [];
    this.#search.flush(out);
    return lines(out);
  }

  #renderPage(command: TerminalCommand, page: Page, text: string): Promise<RawOutput> | RawOutput {
    switch (command) {
      case "read":
        return this.#read(page);
      case "list":
        return this.#list(page);
      case "search":
        return this.#searchPage(page);
      case "tail":
        return this.#tail(page);
      case "json":
        return this.#json(page, text);
    }
  }

  /** "next page: COMMAND", when this is one page of several. */
  #next(stderr: string[], label: string, cursor: Record<string, unknown>): void {
    if (this.options.continuation)
      stderr.push(`${label}${commandLine(this.inv, nextArgs(this.inv, cursor))}`);
  }

  #read(page: Page): RawOutput {
    const stdout =
      this.inv.args.encoding === "base64"
        ? Buffer.from(page.content, "base64")
        : String(page.content);
    const stderr: string[] = [];
    if (page.has_more && page.next_cursor)
      this.#next(stderr, "next page: ", { cursor: page.next_cursor });
    return { stdout, stderr };
  }

  #list(page: Page): RawOutput {
    const paths = (page.items as { path: string; type: string }[]).map(
      (item) =>
        `${displayPath(page.uri, item.path, this.options.cwd)}${item.type === "directory" ? "/" : ""}`,
    );
    const stderr: string[] = [];
    if (page.next_cursor) {
      const p = page.pagination ?? {};
      const shown = `${p.offset + paths.length} shown${p.total !== undefined ? ` of ${p.total}` : ""}; `;
      this.#next(stderr, `${shown}next page: `, { cursor: page.next_cursor });
    }
    return { stdout: lines(paths), stderr };
  }

  #searchPage(page: Page): RawOutput {
    const out: string[] = [];
    for (const item of page.items as Page[])
      this.#search.add(out, displayPath(page.uri, item.path, this.options.cwd), item);
    if (this.options.continuation) this.#search.flush(out);
    const p = page.pagination ?? {};
    const stderr: string[] = [];
    if (p.total === 0) stderr.push("no matches");
    if (page.next_cursor) {
      const total = p.total === undefined ? "" : ` of ${p.total}`;
      const shown = `matches ${p.offset + 1}-${p.offset + page.items.length}${total}; `;
      this.#next(stderr, `${shown}next page: `, { cursor: page.next_cursor });
    }
    return { stdout: lines(out), stderr };
  }

  #tail(page: Page): RawOutput {
    const records = (page.items as Page[]).map(
      (item) => `${item.text}${item.truncated ? " …" : ""}`,
    );
    const stderr: string[] = [];
    if (page.has_earlier && page.earlier_cursor)
      this.#next(stderr, "earlier records: ", { before: page.earlier_cursor });
    if (page.later_cursor)
      this.#next(stderr, "records added later: ", { after: page.later_cursor });
    return { stdout: lines(records), stderr };
  }

  async #json(page: Page, text: string): Promise<RawOutput> {
    // Loaded here: it brings the JSON engine, which only `json` needs (a `read` starts sooner).
    const { pageValueTexts, prettyJson } = await import("./json-text.js");
    const values = await pageValueTexts(text);
    const out: string[] = [];
    const stderr: string[] = [];
    (page.items as Page[]).forEach((item, i) => {
      const value = values.get(i);
      if (value === undefined) {
        const read = commandLine(
          { ...this.inv, command: "read", outputFlags: [] },
          { cursor: item.value_cursor },
        );
        const note = `${item.path}: a value of ${item.value_bytes} bytes, too large for this page; read it with: ${read}`;
        if (this.options.pretty) out.push(note);
        else stderr.push(note);
      } else out.push(this.options.pretty ? `${item.path}: ${prettyJson(value)}` : value);
    });
    if (page.next_cursor) this.#next(stderr, "next page: ", { cursor: page.next_cursor });
    return { stdout: lines(out), stderr };
  }
}
