/**
 * @module
 * What a tool result costs an agent: the text its client shows the model, that text's tokens, and
 * what Claude Code does with it.
 *
 * - The text shown: when a result carries `structuredContent`, Claude Code gives the model
 *   `JSON.stringify(structuredContent)` instead of the text blocks (anthropics/claude-code#79944,
 *   #55677, #54450); otherwise the text blocks, joined by newlines. Other clients show the text
 *   blocks; for server-filesystem, whose `structuredContent` is `{content: <the same text>}`, the two
 *   differ only by the JSON escaping of that text.
 * - Tokens: o200k (`gpt-tokenizer`) and the public Claude tokenizer (`@anthropic-ai/tokenizer`, a
 *   Claude 2-era tokenizer, the only public one: a proxy for current models). Texts over
 *   `EXACT_COUNT_CHARS` are counted on their first and last `SAMPLE_CHARS` and scaled by length
 *   (marked estimated): the tokenizers run at 1–4 M characters a second.
 * - Claude Code's limits (`/work/shared/notes/clients-and-protocol.md`): a result over 50,000
 *   characters — or over the `_meta["anthropic/maxResultSizeChars"]` its tool declares in
 *   `tools/list`, at most 500,000 — is saved to a file and the model sees a ~2 KB preview
 *   ("diverted"); a result within that but over `MAX_MCP_OUTPUT_TOKENS` (25,000) is refused. Which
 *   tokenizer Claude Code counts with is not public; the Claude tokenizer stands in.
 */
import { createRequire } from "node:module";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";

const require = createRequire(import.meta.url);

export const CLAUDE_CODE = {
  /** Results over this many characters are saved to a file unless the tool declares more. */
  defaultMaxResultChars: 50_000,
  /** The most a tool may declare with `_meta["anthropic/maxResultSizeChars"]`. */
  maxDeclaredResultChars: 500_000,
  /** `MAX_MCP_OUTPUT_TOKENS`' default: results over it are refused. */
  maxResultTokens: 25_000,
};

/** Texts longer than this are counted on samples (see the module comment). */
export const EXACT_COUNT_CHARS = 4_000_000;
const SAMPLE_CHARS = 1_000_000;

let claudeTokenizer;
/** Tokens in the public Claude tokenizer, counted as its own `countTokens` does (NFKC). */
export function countClaude(text) {
  claudeTokenizer ??= require("@anthropic-ai/tokenizer").getTokenizer();
  return claudeTokenizer.encode(text.normalize("NFKC"), "all").length;
}

/** `{ o200k, claude, estimated }` for `text` (exact up to `EXACT_COUNT_CHARS`). */
export function countTokens(text) {
  if (text.length <= EXACT_COUNT_CHARS) {
    return { o200k: countO200k(text), claude: countClaude(text), estimated: false };
  }
  return scaledCount([text.slice(0, SAMPLE_CHARS), text.slice(-SAMPLE_CHARS)], text.length);
}

function scaledCount(samples, totalChars) {
  const sampleChars = samples.reduce((n, s) => n + s.length, 0);
  const scale = totalChars / sampleChars;
  const sum = (f) => samples.reduce((n, s) => n + f(s), 0);
  return {
    o200k: Math.round(sum(countO200k) * scale),
    claude: Math.round(sum(countClaude) * scale),
    estimated: true,
  };
}

/** The text Claude Code shows the model for a `tools/call` result (see the module comment). */
export function shownText(result) {
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return (result.content ?? [])
    .map((block) => (block.type === "text" ? block.text : JSON.stringify(block)))
    .join("\n");
}

/**
 * The same measures for a message too large to parse (`raw`, its bytes): the shown text is the
 * `structuredContent` value when there is one, else the whole message less its envelope; its
 * characters and tokens are scaled from 1 MiB samples at both ends.
 */
export function measureRaw(raw) {
  const key = Buffer.from('"structuredContent":');
  const at = raw.indexOf(key);
  let from = 0;
  let to = raw.length;
  if (at >= 0) {
    from = at + key.length;
    const envelope = raw.lastIndexOf(Buffer.from(',"jsonrpc"'));
    to = envelope > from ? envelope - 1 : raw.length - 2;
  }
  const region = raw.subarray(from, to);
  const sampleBytes = Math.min(region.length >> 1, 1024 * 1024);
  const head = region.subarray(0, sampleBytes).toString("utf8");
  const tail = region.subarray(region.length - sampleBytes).toString("utf8");
  const chars = Math.round((region.length * (head.length + tail.length)) / (2 * sampleBytes));
  return { chars, ...scaledCount([head, tail], chars) };
}

/**
 * What Claude Code does with a result of `chars` characters and `claudeTokens` tokens from a tool
 * that declared `declaredChars` (or nothing): "shown", "diverted" (saved to a file, a preview
 * shown) or "refused".
 */
export function claudeCodeVerdict(chars, claudeTokens, declaredChars) {
  const limit =
    typeof declaredChars === "number" && declaredChars > 0
      ? Math.min(declaredChars, CLAUDE_CODE.maxDeclaredResultChars)
      : CLAUDE_CODE.defaultMaxResultChars;
  if (chars > limit) return "diverted";
  if (claudeTokens > CLAUDE_CODE.maxResultTokens) return "refused";
  return "shown";
}
