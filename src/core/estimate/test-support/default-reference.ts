import { DEFAULT_ESTIMATOR_INTERNALS } from "../default.js";

/**
 * @module
 * The `default` estimator written the plain way, for tests: one character per iteration, no inner
 * loops, no packed tables. `countDefault` is an optimized form of this and must give the same count
 * for every text (default.test.ts compares them on the corpus and on random strings).
 */

const {
  SUB,
  CLASS_OF_UNIT: classOf,
  GROUP_OF_CLASS: groupOf,
  CHAR_COST: charCost,
  PIECE_COST_TABLE: transition,
  LETTER_ESCAPE_START: letterEscapeStart,
  PUNCT_ESCAPE_START: punctEscapeStart,
  ESCAPE_START: escapeStart,
  GROUP_COUNT,
  LONG_COST: longCost,
  LONG_AFTER,
  REPEAT_COST: repeatCost,
  LETTER_RARITY,
  LETTER_BIGRAM: letterBigram,
  RARE_PAIR_COST,
  RARE_RUN_COST,
  PUNCT_INDEX: punctIndex,
  PUNCT_BIGRAM: punctBigram,
  DIGIT_GROUP_COST,
  SPACES_BEFORE_DIGIT_COST,
  CASE_CHANGE_COST,
  UPPER_RUN_COST,
  AFTER_EXTENDED_LATIN: afterExtendedLatin,
  EXTENDED_LATIN_REACH,
  EXTENDED_LATIN_LOWER_COST,
  classes: { SPACE, LOWER, UPPER, DIGIT, BACKSLASH, ESCL, BSP, LATINX, LATINEXT, VIETX },
  groups: { G_START, G_SPACE, G_LATIN, G_DIGIT, G_PUNCT, G_ESC, G_BS },
} = DEFAULT_ESTIMATOR_INTERNALS;

const isRare = (bigram: number) => LETTER_RARITY.charCodeAt(bigram) > 0x30;

/** Estimated tokens of `text`: the same as `countDefault(text)`, computed the slow way. */
export function countDefaultReference(text: string): number {
  let cost = 0;
  let group: number = G_START;
  let cls: number = SPACE; // class of the previous character
  let pos = 0; // characters so far in the current piece
  let letter = -1; // previous character as a letter 0–25, or -1
  let c1 = -1; // the previous three UTF-16 units, for repetitions
  let c2 = -1;
  let c3 = -1;
  let punct = -1; // previous character's index in the punctuation table, or -1
  let extendedLatinAt = -EXTENDED_LATIN_REACH; // index of the last extended-Latin letter in a word
  let afterHigh = false; // previous unit was a high surrogate (its pair was charged with it)
  let escapeFrom = 0; // the group before the last backslash
  // A run of lower-case letters that continue a word: its letters' cost and rare bigrams in a row.
  let inLowerRun = false;
  let lowerCost = 0;
  let rareInRow = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const continuesLowerRun = inLowerRun;
    inLowerRun = false;
    if (group === G_BS) {
      // The character after a backslash: it pays the rest of the escape's piece cost.
      const folded = c | 0x20;
      if (folded >= 0x61 && folded <= 0x7a) {
        cost += charCost[ESCL] + letterEscapeStart[escapeFrom] - escapeStart[escapeFrom];
        group = G_ESC;
        pos = 2;
        continue;
      }
      const p = c < 0x80 ? punctIndex[c] : -1;
      if (p >= 0) {
        cost += charCost[BSP] + punctBigram[punctIndex[0x5c] * 32 + p];
        cost += punctEscapeStart[escapeFrom] - escapeStart[escapeFrom];
        group = G_PUNCT;
        cls = BSP;
        punct = p;
        pos = 2;
        continue;
      }
      cost += letterEscapeStart[escapeFrom] - escapeStart[escapeFrom];
    }
    if (afterHigh) {
      afterHigh = false;
      if (c >= 0xdc00 && c <= 0xdfff) continue;
    }
    if (c === 0x5c) {
      cost += charCost[BACKSLASH] + escapeStart[group];
      escapeFrom = group;
      group = G_BS;
      cls = BACKSLASH;
      letter = -1;
      punct = -1;
      pos = 1;
      continue;
    }
    const k = classOf[c];
    if (k === LOWER && group === G_LATIN && pos > 0) {
      // A lower-case letter inside a word.
      if (!continuesLowerRun) {
        const extra = afterExtendedLatin[cls];
        if (extra !== 0) {
          cost += extra;
          extendedLatinAt = i - 1;
        }
        lowerCost =
          i - extendedLatinAt < EXTENDED_LATIN_REACH ? EXTENDED_LATIN_LOWER_COST : charCost[LOWER];
        rareInRow = 0;
      }
      inLowerRun = true;
      const l = c - 0x61;
      if (letter >= 0) {
        const bigram = letter * 26 + l;
        cost += letterBigram[bigram];
        if (isRare(bigram)) {
          cost += [0, RARE_PAIR_COST, RARE_RUN_COST][rareInRow];
          rareInRow = Math.min(rareInRow + 1, 2);
        } else {
          rareInRow = 0;
        }
      }
      if (c === c2 && (c === c1 || c1 === c3)) cost += repeatCost[LOWER];
      c3 = c2;
      c2 = c1;
      c1 = c;
      letter = l;
      if (++pos > LONG_AFTER) cost += longCost[G_LATIN];
      cost += lowerCost;
      cls = LOWER;
      continue;
    }
    const g = groupOf[k];
    if (g !== group) {
      cost += transition[group * GROUP_COUNT + g];
      if (group === G_SPACE && g === G_DIGIT && pos > 1) cost += SPACES_BEFORE_DIGIT_COST;
      pos = 0;
    } else if (
      k === UPPER &&
      (cls === LOWER || cls === LATINX || cls === LATINEXT || cls === VIETX)
    ) {
      cost += CASE_CHANGE_COST;
      pos = 0;
    } else if (k === DIGIT && pos % 3 === 0) {
      cost += DIGIT_GROUP_COST;
    }
    if (k === LOWER || k === UPPER) {
      const l = (c | 0x20) - 0x61;
      if (pos > 0) {
        if (k === UPPER && cls === UPPER) cost += UPPER_RUN_COST;
        if (letter >= 0) cost += letterBigram[letter * 26 + l];
      }
      letter = l;
      punct = -1;
    } else {
      letter = -1;
      const p = c < 0x80 ? punctIndex[c] : -1;
      if (p >= 0 && pos > 0 && punct >= 0) cost += punctBigram[punct * 32 + p];
      punct = p;
      if (c >= 0xd800 && c <= 0xdbff) afterHigh = true;
    }
    if (c === c2 && (c === c1 || c1 === c3)) cost += repeatCost[k];
    c3 = c2;
    c2 = c1;
    c1 = c;
    pos++;
    if (pos > LONG_AFTER && g !== G_DIGIT) cost += longCost[g];
    cost += charCost[k];
    cls = k;
    group = g;
  }
  return Math.ceil(cost / SUB);
}
