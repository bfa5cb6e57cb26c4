/**
 * @module
 * The public Claude tokenizer (`@anthropic-ai/tokenizer`, a dev dependency) as a plain counter.
 *
 * That package is the tokenizer of Claude 2-era models; the tokenizers of current Claude models are
 * not public, and Anthropic says this one is not exact for them. It is used here as a proxy.
 *
 * The package's own `countTokens` builds a new tokenizer (parsing its 65k-entry vocabulary) on
 * every call; this module builds one and reuses it. It counts exactly as `countTokens` does:
 * NFKC-normalized text, special tokens allowed.
 */

import { getTokenizer } from "@anthropic-ai/tokenizer";

let tokenizer;

/** Tokens of `text` in the public Claude tokenizer. */
export function countClaude(text) {
  tokenizer ??= getTokenizer();
  return tokenizer.encode(text.normalize("NFKC"), "all").length;
}
