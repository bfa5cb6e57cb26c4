import type { Estimator, RunningCount, RunningSnapshot } from "./estimator.js";

/**
 * @module
 * The `default` estimator: cheap, deterministic, and conservative against real tokenizers.
 *
 * It reads the text once, one UTF-16 unit at a time (a `charCodeAt` loop over table lookups), and
 * charges every character a cost by class plus a cost for every *piece*: a run of one group of
 * characters, which is roughly what the o200k and cl100k pre-tokenizers cut text into before byte-pair
 * merging (letters, digits in groups of three, punctuation runs, whitespace, escapes, each script).
 * Letter and punctuation bigrams that rarely occur inside vocabulary tokens (what random ids, hashes
 * and base64 are made of) cost extra; so do very long pieces. Costs are integers in 1/1024 token and
 * the result is rounded up once, at the end.
 *
 * The constants were fitted by a linear program over a synthetic corpus of JSON pages
 * (bench/tokens/corpus.js): smallest mean over-estimate against o200k subject to the estimate being
 * at least 5% above both the o200k and the cl100k count on every training page and on a set of
 * adversarial strings, with hard floors where both tokenizers are known to need a token (each group
 * of up to three digits, each letter escape such as `\n`). Characters of scripts that were not
 * measured are charged their UTF-8 byte count, an upper bound for byte-level BPE.
 *
 * On top of the fit, a few costs were set by hand so that the estimate also covers the public
 * Claude tokenizer (@anthropic-ai/tokenizer, a legacy one used as a proxy for current Claude
 * models): escapes in runs, Polish/Czech/Vietnamese words, random lower-case runs, and higher
 * per-character costs for non-Latin scripts. Each such constant says so where it is defined.
 *
 * Then the ASCII and JSON constants (and a few script costs, only upwards) were refit by a linear
 * program against all three tokenizers together, on pages cut by the real server from training
 * seeds (bench/tokens/tune.js measures a candidate; docs/tokens.md has the method): estimate at
 * least 5% above o200k and cl100k and 4% above Claude on every training page, and no page that was
 * under that margin any lower than before; objective, the waste of the common kinds' pages above
 * 1.20. A constant it changed says "refit: <old value>".
 * docs/tokens.md has the method, the per-kind results and the known limits.
 *
 * Properties the tests check:
 * - `count("") === 0`; deterministic.
 * - Prefix-monotone: every character only adds cost, and no character's cost depends on what
 *   follows it, so `count(a) <= count(a + b)`.
 * - Every UTF-16 unit costs at least 1/8 token, so one token never covers more than 8 units
 *   (`maxUnitsPerToken`).
 */

// Character classes.
const SPACE = 0; // U+0020
const LOWER = 1; // a-z
const UPPER = 2; // A-Z
const DIGIT = 3; // 0-9
const PUNCT = 4; // other printable ASCII
const BACKSLASH = 5; // a backslash (starts an escape)
const ESCL = 6; // the letter of a letter escape (\n, \t, \u…)
const CTRL = 7; // other raw ASCII control characters (never in a JSON page: JSON escapes them)
const BSP = 8; // the punctuation character of a punctuation escape (\" \\ \/)
const LATINX = 9; // accented Latin-1 letters (À–ÿ)
const MARK = 10; // combining diacritics
const SYM2 = 11; // Latin-1 symbols and spacing modifiers
const GREEK = 12; // Greek
const CYRILLIC = 13; // Cyrillic small letters а–я, ё (other Cyrillic letters: OTHER2)
const ARMENIAN = 14; // Armenian
const HEBREW = 15; // Hebrew
const ARABIC = 16; // Arabic
const OTHER2 = 17; // other two-byte scripts (unmeasured: byte bound)
const INDIC = 18; // Devanagari
const THAI = 19; // Thai
const GEORGIAN = 20; // Georgian
const HANGUL = 21; // Hangul
const KANA = 22; // Kana
const CJK = 23; // CJK unified ideographs
const CJKA = 24; // CJK Extension A
const CJKPUNCT = 25; // CJK and full-width punctuation
const GENPUNCT = 26; // general punctuation (— “ ” …)
const SYM3 = 27; // arrows, math, box drawing, dingbats
const VS = 28; // variation selectors
const OTHER3 = 29; // other BMP characters (unmeasured: byte bound)
const EMOJI = 30; // emoji (U+1F000–1FBFF), charged on the high surrogate
const CJKB = 31; // CJK Extension B and beyond (planes 2–3)
const ASTRAL = 32; // other astral characters (byte bound)
const LONE = 33; // a lone low surrogate
const LATINEXT = 34; // Latin Extended-A/B and IPA (Polish, Czech, Romanian, Turkish…)
const CYRUPPER = 35; // Cyrillic capitals А–Я, Ё
const VIETX = 36; // Latin Extended Additional (Vietnamese: ạ ả ấ ầ ế ệ ố ồ ộ ớ ờ ợ ứ ữ ự…)
const ARABICX = 37; // Arabic-script letters beyond Arabic proper (Persian, Urdu: پ چ ژ گ ک ی…)
// Raw tabs and line ends: text that is not a JSON page (`read` in line mode) has them unescaped.
const TAB = 38; // U+0009
const LF = 39; // U+000A
const CR = 40; // U+000D
const CLASS_COUNT = 41;

// Piece groups: a change of group starts a new piece (a pre-token, roughly).
const G_START = 0;
const G_SPACE = 1;
const G_LATIN = 2;
const G_DIGIT = 3;
const G_PUNCT = 4;
const G_ESC = 5;
const G_BS = 6;
const G_CTRL = 7;
const G_GREEK = 8;
const G_CYRILLIC = 9;
const G_ARMENIAN = 10;
const G_HEBREW = 11;
const G_ARABIC = 12;
const G_INDIC = 13;
const G_THAI = 14;
const G_GEORGIAN = 15;
const G_HANGUL = 16;
const G_CJK = 17;
const G_CJKPUNCT = 18;
const G_SYM = 19;
const G_EMOJI = 20;
const G_OTHER = 21;
const GROUP_COUNT = 22;

/** Sub-units per token: every cost is an integer count of 1/1024 token. */
const SUB = 1024;
/** Characters of one piece beyond this count pay the group's long-run cost. */
const LONG_AFTER = 12;

/**
 * Cost of one character (for astral characters: of the surrogate pair), by class. Fitted, except
 * where a comment says a cost was raised by hand (the smallest increase that kept every training
 * window at least 4% above the Claude tokenizer's count) or set for a class added with it, and
 * where "refit" gives the value before the refit against all three tokenizers. Every table here
 * was refit once more when the corpus gained its layouts (LF and CRLF, two-space, four-space and
 * tab indentation, minified and pretty JSON, each escaped in a page and raw): see
 * bench/tokens/refit.py; the values before that refit are in the history of this file.
 */
const CHAR_COST: readonly number[] = [
  128, // SPACE
  128, // LOWER
  569, // UPPER (refit: 128)
  128, // DIGIT
  348, // PUNCT (refit: 504)
  128, // BACKSLASH
  1335, // ESCL
  1024, // CTRL
  128, // BSP (refit: 358)
  1620, // LATINX (fit: 1143; raised for the Claude tokenizer; refit: 1543)
  2048, // MARK
  2048, // SYM2
  1395, // GREEK (fit: 1127; raised for the Claude tokenizer; refit: 1380)
  504, // CYRILLIC (fit: 279; raised for the Claude tokenizer; refit: 480)
  2048, // ARMENIAN
  940, // HEBREW (fit: 897; raised for the Claude tokenizer)
  1200, // ARABIC (fit: 833; raised for the Claude tokenizer)
  2048, // OTHER2
  1611, // INDIC (fit: 1097; raised for the Claude tokenizer)
  1832, // THAI (fit: 808; raised for the Claude tokenizer)
  2159, // GEORGIAN
  1150, // HANGUL (fit: 827; raised for the Claude tokenizer)
  1639, // KANA (refit: 926)
  1014, // CJK (fit: 924; raised for a margin against cl100k; refit: 970)
  3072, // CJKA
  128, // CJKPUNCT
  128, // GENPUNCT
  1183, // SYM3 (refit: 1127)
  797, // VS
  3072, // OTHER3
  2941, // EMOJI
  4096, // CJKB
  4096, // ASTRAL
  3072, // LONE
  2048, // LATINEXT (byte count: the Claude tokenizer splits these into bytes)
  504, // CYRUPPER (as CYRILLIC)
  2600, // VIETX (the Claude tokenizer: 2–3 tokens each)
  2048, // ARABICX (byte count, as in cl100k and the Claude tokenizer)
  268, // TAB
  929, // LF
  289, // CR
];

/**
 * Cost of starting a piece of a group, by group (before the adjustments below). Refit (values
 * before it): Latin 677, punctuation 277, backslash 785, Armenian 1200, Arabic 0, CJK 1536,
 * symbols 0, emoji 307, other 0.
 */
const PIECE_COST: readonly number[] = [
  0, 384, 144, 1379, 779, 0, 0, 1024, 0, 870, 1567, 1031, 85, 500, 1536, 825, 1021, 1700, 805, 3,
  492, 512,
];
/** Extra cost of a piece of group `to` right after a piece of group `from` (digit boundaries, escapes). */
const PIECE_AFTER: ReadonlyArray<readonly [from: number, to: number, cost: number]> = [
  [G_SPACE, G_DIGIT, 512],
  [G_DIGIT, G_SPACE, -384],
  [G_DIGIT, G_LATIN, 205],
  [G_DIGIT, G_BS, 929],
  [G_PUNCT, G_DIGIT, -407],
  // An escape right after a letter escape (`\n\n`, `\n\t\t`): the Claude tokenizer's
  // pre-tokenizer splits the backslash from the letter, so each such escape is two tokens there
  // (o200k and cl100k keep `\n` whole). Fitted with the letter-escape cost.
  [G_ESC, G_BS, 598],
  // A digit right after a letter escape (`\t42`): the same split, and digits are a piece of their
  // own in every tokenizer. Fitted with the digit piece cost (their sum stays above zero).
  [G_ESC, G_DIGIT, -1024],
  // A backslash that goes on a punctuation piece (`\":\"` in a JSON string inside a page): the
  // escape is part of the punctuation run in every tokenizer, cheaper than a piece of its own.
  // Set by the refit, as every entry below: negative entries never take the sum with the piece
  // cost of `to` below zero (a test checks the tables), and a letter escape still costs a token.
  [G_PUNCT, G_BS, 142],
  [G_LATIN, G_BS, 966],
  [G_SPACE, G_BS, 0],
  [G_ESC, G_SPACE, -301],
  [G_ESC, G_PUNCT, -148],
  [G_CTRL, G_SPACE, -384],
  [G_PUNCT, G_CTRL, -1024],
  [G_LATIN, G_CTRL, -395],
  [G_DIGIT, G_CTRL, -1024],
  [G_CTRL, G_LATIN, 979],
  [G_CTRL, G_PUNCT, 729],
];
/**
 * Extra cost of a punctuation escape (`\"`, `\\`, `\/`) over a letter escape, by the group of the
 * piece before it: a JSON string inside a page is full of `\"`, which merges with what is around it
 * (`\":\"`, `\",\"`, `1\"`) differently from `\n`. Set by the refit (the largest change: after
 * digits, about ½ token less). No sum with a piece cost is negative (a test checks the tables).
 */
const PUNCT_ESCAPE_AFTER: ReadonlyArray<readonly [from: number, cost: number]> = [
  [G_PUNCT, 625],
  [G_LATIN, -400],
  [G_SPACE, 747],
  [G_DIGIT, -565],
];
/** Extra cost per character beyond LONG_AFTER in one piece, by group. */
const LONG_COST: readonly number[] = [
  0, 0, 32, 0, 0, 0, 0, 0, 1024, 772, 293, 1024, 1024, 1024, 286, 1024, 1024, 241, 0, 1024, 5, 0,
];
/**
 * A digit after a run of two or more spaces: a digit never takes a space in o200k and cl100k, so
 * the run's last space is a token of its own too (`\n    42,` in pretty-printed JSON).
 */
const SPACES_BEFORE_DIGIT_COST = 896;
/** A fourth, seventh… digit of a run: a new group of three. */
const DIGIT_GROUP_COST = 896;
/** A lower-case letter followed by an upper-case one: a new piece (camelCase). */
const CASE_CHANGE_COST = 79; // refit: 839
/** An upper-case letter after an upper-case letter. */
const UPPER_RUN_COST = 0; // refit: 323
/** Letter and punctuation bigrams, by rarity (0 common, 1 rare, 2 very rare). */
const LETTER_RARITY_COST: readonly number[] = [0, 628, 1064]; // refit: 7, 1418
const PUNCT_RARITY_COST: readonly number[] = [0, 839, 2001]; // refit: 0, 1221

/**
 * Rarity of each letter bigram (case-folded), row = first letter a–z, column = second letter:
 * 0 if at least 300 tokens of the o200k and cl100k vocabularies contain it, 1 if at least
 * 50, else 2. Common bigrams are what words are made of; random strings hit rare ones.
 */
const LETTER_RARITY = [
  "00001000000000101000000000",
  "01110221012011012001022212",
  "01010220020011012000022201",
  "01100111012011012001011201",
  "00000000010000000000000000",
  "02110012022022022010022212",
  "01110200021010012001021212",
  "01210222022011012010011202",
  "00000001100000001000101010",
  "02210222121221022212022222",
  "01210221021021012100021212",
  "01100111011001012100001202",
  "00110112022101002201021212",
  "01000000010010011100001201",
  "00000001010000001000000001",
  "01110110022011002000022212",
  "12222222222122222222022222",
  "00000001020000001000001201",
  "01010110020001001100010201",
  "01010110021001012000010101",
  "00000001010000102000111111",
  "02220222022122022112122212",
  "02110220022120022101122212",
  "12020221022212102220122112",
  "01110212122000002101121211",
  "02220222022222022221121211",
].join("");
/** The 32 ASCII punctuation characters, in the order of PUNCT_RARITY's rows and columns. */
const PUNCT_CHARS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
/** Rarity of each punctuation bigram, as LETTER_RARITY (thresholds 20 and 4). */
const PUNCT_RARITY = [
  "00212211112111122102121222122212",
  "10000101010000000010111001010101",
  "11012212220211212222221222121222",
  "21212210222221122222222122020222",
  "20220211122211221212212222222222",
  "22112121122122212222222222122222",
  "20001101010000000000111001020101",
  "00101000001210111122110121010121",
  "10211100010000100101020102110102",
  "11222210002111021111211122122212",
  "20012201020101111212222112222222",
  "20212101122011102122110122120222",
  "21212211110101121100221222221211",
  "20202201002110021112121111011222",
  "10112201102100012110211121121211",
  "20212201011001101112110101120222",
  "20222112111212020122022122222202",
  "01211221212212012010022221221222",
  "20102100212201222100120122120222",
  "20201100112111111010211122110212",
  "10222211122021211100022222222212",
  "20212221222222122222211222121222",
  "20111101221111112222210101111222",
  "20212211222221122122222022222222",
  "10222211011010100101120102221202",
  "22222221122222222222221120221222",
  "21212210012111111122221221021122",
  "22212221022121121122222212202212",
  "10201211212211112222111122110102",
  "21222221222212222212222122112022",
  "20212201012011110020122102101202",
  "22222222222212122212222222222220",
].join("");

const MIN_UNIT_COST = SUB / 8;

// Perf: one 64 KiB table maps every UTF-16 unit to its class; the loop never branches on ranges.
const CLASS_OF_UNIT = buildClassTable();
const GROUP_OF_CLASS = new Uint8Array([
  G_SPACE,
  G_LATIN,
  G_LATIN,
  G_DIGIT,
  G_PUNCT,
  G_BS,
  G_ESC,
  G_CTRL,
  G_PUNCT,
  G_LATIN,
  G_LATIN,
  G_PUNCT,
  G_GREEK,
  G_CYRILLIC,
  G_ARMENIAN,
  G_HEBREW,
  G_ARABIC,
  G_OTHER,
  G_INDIC,
  G_THAI,
  G_GEORGIAN,
  G_HANGUL,
  G_CJK,
  G_CJK,
  G_CJK,
  G_CJKPUNCT,
  G_SYM,
  G_SYM,
  G_EMOJI,
  G_OTHER,
  G_EMOJI,
  G_CJK,
  G_OTHER,
  G_OTHER,
  G_LATIN,
  G_CYRILLIC,
  G_LATIN,
  G_ARABIC,
  G_CTRL,
  G_CTRL,
  G_CTRL,
]);
const CHAR = Int32Array.from(CHAR_COST);
const LONG = Int32Array.from(LONG_COST);
const TRANSITION = buildTransitionTable();
/** The piece cost of a letter escape after each group, and of a punctuation escape. */
const LETTER_ESCAPE_START = Int32Array.from(
  { length: GROUP_COUNT },
  (_, from) => TRANSITION[from * GROUP_COUNT + G_BS],
);
const PUNCT_ESCAPE_START = Int32Array.from(LETTER_ESCAPE_START);
for (const [from, cost] of PUNCT_ESCAPE_AFTER) PUNCT_ESCAPE_START[from] += cost;
/**
 * What a backslash pays before the character after it is known (the cheaper of the two escapes),
 * so that no character's cost depends on what follows it: the rest is paid with that character
 * (and a backslash before anything but a letter or punctuation pays as a letter escape).
 */
const ESCAPE_START = Int32Array.from(LETTER_ESCAPE_START, (cost, from) =>
  Math.min(cost, PUNCT_ESCAPE_START[from]),
);
const LETTER_BIGRAM = buildRarityTable(LETTER_RARITY, LETTER_RARITY_COST);
/**
 * Extra cost of the third rare letter bigram in a row (and each one after it) inside a run of
 * lower-case letters. Words almost never have three in a row; random lower-case strings (ids,
 * generated names) have them at every sixth letter, and the Claude tokenizer, with its smaller
 * vocabulary, spends about 0.6 token per such letter. Runs of three keep base64 and hex (short
 * lower-case runs) nearly free of it. Not fitted: set so that random lower-case letters cost that.
 */
const RARE_RUN_COST = 1200;
/** The same for the second rare bigram in a row (random base32 and short random words). */
const RARE_PAIR_COST = 500;
/**
 * Perf: the lower-case loop tracks how many rare bigrams in a row it has seen (0, 1, 2 or more) as
 * an offset `state * 676` into one table indexed by `offset + bigram`, whose entries pack the cost
 * (LETTER_BIGRAM, plus RARE_PAIR_COST or RARE_RUN_COST in states 1 and 2) above the low
 * RARE_OFFSET_BITS bits and the next offset in them: one load and no branch per letter.
 */
const RARE_OFFSET_BITS = 12;
const RARE_OFFSET_MASK = (1 << RARE_OFFSET_BITS) - 1;
const LOWER_STEP = Int32Array.from({ length: 3 * 676 }, (_, i) => {
  const bigram = i % 676;
  const state = Math.floor(i / 676);
  const rare = LETTER_RARITY.charCodeAt(bigram) > 0x30;
  const cost = LETTER_BIGRAM[bigram] + (rare ? [0, RARE_PAIR_COST, RARE_RUN_COST][state] : 0);
  const nextOffset = rare ? Math.min(state + 1, 2) * 676 : 0;
  return (cost << RARE_OFFSET_BITS) | nextOffset;
});
const PUNCT_BIGRAM = buildRarityTable(PUNCT_RARITY, PUNCT_RARITY_COST);
/** Index of an ASCII punctuation character in PUNCT_CHARS, or -1. */
const PUNCT_INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < PUNCT_CHARS.length; i++) PUNCT_INDEX[PUNCT_CHARS.charCodeAt(i)] = i;
const BACKSLASH_PUNCT = PUNCT_INDEX[0x5c] * 32;
/**
 * The least a punctuation character that continues a repetition costs: a little over ½ token, as
 * the Claude tokenizer spends a token on each character of `a.a.a.` (a letter and a mark never
 * merge there).
 */
const PUNCT_REPEAT_FLOOR = 640;
/**
 * Extra cost, by class, of a character that continues a repetition: the same as the two before it
 * ("aaa", "жжж") or the pattern of the two before it ("abab"). Natural text almost never does this,
 * while both tokenizers spend about a token per two ASCII characters, or per non-ASCII character, on
 * such runs. Not fitted: set so that a repeating character costs at least that much.
 */
const REPEAT_COST = Int32Array.from(CHAR_COST, (cost, cls) => {
  const floor =
    cls === LOWER || cls === UPPER
      ? SUB / 2
      : cls === PUNCT
        ? PUNCT_REPEAT_FLOOR
        : (cls >= LATINX && cls <= VS) || (cls >= LATINEXT && cls <= ARABICX)
          ? SUB
          : 0;
  return Math.max(0, floor - cost);
});
const REPEAT = REPEAT_COST;
const REPEAT_COST_LOWER = REPEAT_COST[LOWER];
const REPEAT_COST_DIGIT = REPEAT_COST[DIGIT];
const CHAR_DIGIT = CHAR_COST[DIGIT];

const CHAR_LOWER = CHAR_COST[LOWER];
/**
 * Polish, Czech, Vietnamese… (text with letters of Latin Extended-A/B or Extended Additional): the
 * Claude tokenizer's vocabulary holds few of their words and splits them into pieces of about two
 * letters, with or without diacritics (`wc|z|or|aj|s|ze`). So a run of lower-case letters that
 * continues a word right after such a letter (`ł|ym`) pays AFTER_EXTENDED_LATIN, and every
 * lower-case letter within EXTENDED_LATIN_REACH units after one pays EXTENDED_LATIN_LOWER_COST
 * instead of the usual cost. Not fitted: set from natural Polish, Czech and Vietnamese text.
 */
const AFTER_EXTENDED_LATIN = Int32Array.from({ length: CLASS_COUNT }, (_, cls) =>
  cls === LATINEXT || cls === VIETX ? 700 : 0,
);
const EXTENDED_LATIN_REACH = 64;
const EXTENDED_LATIN_LOWER_COST = 256;
const LONG_LATIN = LONG_COST[G_LATIN];

function buildClassTable(): Uint8Array {
  const t = new Uint8Array(0x10000).fill(OTHER3);
  const fill = (lo: number, hi: number, cls: number) => t.fill(cls, lo, hi + 1);
  fill(0x00, 0x1f, CTRL);
  t[0x09] = TAB;
  t[0x0a] = LF;
  t[0x0d] = CR;
  fill(0x21, 0x7e, PUNCT);
  t[0x20] = SPACE;
  fill(0x61, 0x7a, LOWER);
  fill(0x41, 0x5a, UPPER);
  fill(0x30, 0x39, DIGIT);
  t[0x5c] = BACKSLASH;
  t[0x7f] = CTRL;
  fill(0x80, 0x7ff, OTHER2);
  fill(0x80, 0xbf, SYM2);
  fill(0xc0, 0xff, LATINX);
  fill(0x100, 0x24f, LATINEXT);
  t[0xd7] = SYM2;
  t[0xf7] = SYM2;
  fill(0x250, 0x2af, LATINEXT);
  fill(0x2b0, 0x2ff, SYM2);
  fill(0x300, 0x36f, MARK);
  fill(0x370, 0x3ff, GREEK);
  // Cyrillic beyond the Russian alphabet (Ukrainian, Serbian, Macedonian… letters) is rare in
  // the vocabularies: charged its byte count, like the unmeasured scripts.
  fill(0x410, 0x42f, CYRUPPER);
  fill(0x430, 0x44f, CYRILLIC);
  t[0x401] = CYRUPPER;
  t[0x451] = CYRILLIC;
  fill(0x530, 0x58f, ARMENIAN);
  fill(0x590, 0x5ff, HEBREW);
  fill(0x600, 0x6ff, ARABIC);
  fill(0x671, 0x6ff, ARABICX);
  fill(0x750, 0x77f, ARABICX);
  // Arabic-Indic and Persian digits: one token per byte in cl100k and the Claude tokenizer.
  fill(0x660, 0x669, OTHER2);
  fill(0x6f0, 0x6f9, OTHER2);
  fill(0x900, 0x97f, INDIC);
  fill(0xe00, 0xe7f, THAI);
  fill(0x10a0, 0x10ff, GEORGIAN);
  fill(0x1c90, 0x1cbf, GEORGIAN);
  fill(0x2d00, 0x2d2f, GEORGIAN);
  fill(0x1100, 0x11ff, HANGUL);
  fill(0x3130, 0x318f, HANGUL);
  fill(0xac00, 0xd7af, HANGUL);
  fill(0x1e00, 0x1eff, VIETX);
  fill(0x1f00, 0x1fff, GREEK);
  fill(0x2000, 0x206f, GENPUNCT);
  fill(0x2070, 0x2bff, SYM3);
  fill(0x3000, 0x303f, CJKPUNCT);
  fill(0x3040, 0x30ff, KANA);
  fill(0x31f0, 0x31ff, KANA);
  fill(0x3400, 0x4dbf, CJKA);
  fill(0x4e00, 0x9fff, CJK);
  fill(0xf900, 0xfaff, CJK);
  fill(0xfe00, 0xfe0f, VS);
  fill(0xfb50, 0xfdff, ARABICX);
  fill(0xfe70, 0xfeff, ARABICX);
  fill(0xff00, 0xffef, CJKPUNCT);
  // A high surrogate already tells the block of the astral character (1 KiB of code points).
  fill(0xd800, 0xdbff, ASTRAL);
  fill(0xd83c, 0xd83e, EMOJI);
  fill(0xd840, 0xd8bf, CJKB);
  fill(0xdc00, 0xdfff, LONE);
  return t;
}

function buildTransitionTable(): Int32Array {
  const t = new Int32Array(GROUP_COUNT * GROUP_COUNT);
  for (let from = 0; from < GROUP_COUNT; from++) {
    for (let to = 0; to < GROUP_COUNT; to++) t[from * GROUP_COUNT + to] = PIECE_COST[to];
  }
  for (const [from, to, cost] of PIECE_AFTER) t[from * GROUP_COUNT + to] += cost;
  return t;
}

function buildRarityTable(rarity: string, costs: readonly number[]): Int32Array {
  const t = new Int32Array(rarity.length);
  for (let i = 0; i < rarity.length; i++) t[i] = costs[rarity.charCodeAt(i) - 0x30];
  return t;
}

/**
 * Where a count stopped, so that it can go on with more text: the running cost and the scanner's
 * view of the last characters. `scanDefault` over a text cut into chunks ends with the same state
 * as over the whole text, as long as no cut falls inside a surrogate pair or between a backslash
 * and the character it escapes (pages cut JSON-escaped content only between whole escapes).
 */
export interface DefaultCountState {
  /** Cost so far, in 1/SUB token. */
  cost: number;
  /** Code units scanned so far (positions below are relative to the chunk while scanning). */
  units: number;
  group: number;
  /** Class of the previous character. */
  cls: number;
  /** Characters so far in the current piece. */
  pos: number;
  /** Previous character as a letter 0–25, or -1. */
  letter: number;
  /** Rare bigrams in a row just before, as an offset into LOWER_STEP. */
  rare: number;
  /** What each paying letter of the current lower-case run costs, once its first one paid (else 0). */
  runRate: number;
  /** The previous three UTF-16 units, for repetitions. */
  c1: number;
  c2: number;
  c3: number;
  /** Previous character's index in PUNCT_CHARS, or -1. */
  punct: number;
  /** Position (in units scanned) of the last extended-Latin letter in a word. */
  extendedLatinAt: number;
}

/** The state at the start of a text. */
export function startDefaultCount(): DefaultCountState {
  return resetDefaultCount({} as DefaultCountState);
}

/** Puts `state` back at the start of a text. */
function resetDefaultCount(state: DefaultCountState): DefaultCountState {
  state.cost = 0;
  state.units = 0;
  state.group = G_START;
  state.cls = SPACE;
  state.pos = 0;
  state.letter = -1;
  state.rare = 0;
  state.runRate = 0;
  state.c1 = -1;
  state.c2 = -1;
  state.c3 = -1;
  state.punct = -1;
  state.extendedLatinAt = -EXTENDED_LATIN_REACH;
  return state;
}

/**
 * Perf: the state of `countDefault`, reused from call to call (a count never calls out, so it is
 * never in use twice at once): pages count thousands of small items, where a new state per call
 * cost a fifth of the count.
 */
const SCRATCH = startDefaultCount();

/** Tokens of everything scanned into `state`, rounded up once. */
export function defaultCountTokens(state: DefaultCountState): number {
  // Perf: integer arithmetic instead of Math.ceil (a property load that has no type feedback yet
  // when a long first call leaves its on-stack-replaced loop, which deoptimizes the function).
  const remainder = state.cost % SUB;
  return (state.cost - remainder) / SUB + (remainder > 0 ? 1 : 0);
}

/**
 * Estimated tokens of `text` under the `default` estimator (see the module comment).
 */
export function countDefault(text: string): number {
  const state = resetDefaultCount(SCRATCH);
  scanDefault(state, text, 0, text.length);
  return defaultCountTokens(state);
}

/**
 * Adds `text[from, to)` to `state`: the one scanning loop of the `default` estimator. The text
 * after `to` is not looked at, except by a backslash at `to - 1` (see DefaultCountState).
 */
export function scanDefault(
  state: DefaultCountState,
  text: string,
  from: number,
  to: number,
): void {
  // Perf: the tables in locals, loaded once per call instead of once per character.
  const classOf = CLASS_OF_UNIT;
  const groupOf = GROUP_OF_CLASS;
  const charCost = CHAR;
  const transition = TRANSITION;
  const letterBigram = LETTER_BIGRAM;
  const lowerStep = LOWER_STEP;
  // Perf: the state in locals for the loop, stored back once at the end.
  const length = to;
  let cost = state.cost;
  let group = state.group;
  let cls = state.cls;
  let pos = state.pos;
  let letter = state.letter;
  let rare = state.rare;
  let runRate = state.runRate;
  let c1 = state.c1;
  let c2 = state.c2;
  let c3 = state.c3;
  let punct = state.punct;
  let extendedLatinAt = state.extendedLatinAt - state.units + from;
  // Perf: a single indexed loop over table lookups; no regex, no iterator, no allocation.
  for (let i = from; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) {
      // Perf: a backslash reads the character after it here, instead of a check of the group at
      // the top of every iteration: a letter escape (\n, \t, \u…) or a punctuation escape.
      const from = group;
      cost += charCost[BACKSLASH];
      group = G_BS;
      cls = BACKSLASH;
      letter = -1;
      punct = -1;
      pos = 1;
      if (i + 1 >= length) {
        cost += ESCAPE_START[from];
        continue;
      }
      const e = text.charCodeAt(i + 1);
      const folded = e | 0x20;
      if (folded >= 0x61 && folded <= 0x7a) {
        i++;
        cost += LETTER_ESCAPE_START[from] + charCost[ESCL];
        group = G_ESC;
        pos = 2;
      } else if (e < 0x80 && PUNCT_INDEX[e] >= 0) {
        i++;
        const p = PUNCT_INDEX[e];
        cost += PUNCT_ESCAPE_START[from] + charCost[BSP] + PUNCT_BIGRAM[BACKSLASH_PUNCT + p];
        group = G_PUNCT;
        cls = BSP;
        punct = p;
        pos = 2;
      } else {
        cost += LETTER_ESCAPE_START[from]; // anything else: a piece of its own follows
      }
      continue;
    }
    if (c >= 0x61 && c <= 0x7a) {
      // Perf: a run of lower-case letters, the most common case, in a tight inner loop (the
      // general path below charges the rest: upper case, accented letters, other classes).
      const first = i;
      // A run that goes on from the chunk before (never so within one scan: runs are maximal)
      // keeps its rare-bigram state and the rate its letters pay.
      const continued = cls === LOWER;
      if (!continued) rare = 0;
      let l = c - 0x61;
      // Letters of the run that pay the lower-case cost of their place (see below): the first
      // letter of a piece pays the plain one.
      let paying = 0;
      if (group !== G_LATIN) {
        // The first letter of a piece.
        cost += transition[group * GROUP_COUNT + G_LATIN] + CHAR_LOWER;
        group = G_LATIN;
        punct = -1;
        pos = 0;
        paying = -1;
      } else {
        // Perf: extended-Latin letters are noticed here, where a word goes on after one, and not
        // in the general path, which every non-ASCII character takes.
        const afterExtended = AFTER_EXTENDED_LATIN[cls];
        if (afterExtended !== 0) {
          cost += afterExtended;
          extendedLatinAt = i - 1;
        }
        if (letter >= 0) {
          // the bigram with the letter before the run (none after an accented letter)
          const step = lowerStep[rare + letter * 26 + l];
          cost += step >> RARE_OFFSET_BITS;
          rare = step & RARE_OFFSET_MASK;
        }
      }
      if (c === c2 && (c === c1 || c1 === c3)) cost += REPEAT_COST_LOWER;
      c3 = c2;
      c2 = c1;
      c1 = c;
      while (i + 1 < length) {
        const y = text.charCodeAt(i + 1);
        if (y < 0x61 || y > 0x7a) break;
        i++;
        const m = y - 0x61;
        const step = lowerStep[rare + l * 26 + m];
        cost += step >> RARE_OFFSET_BITS;
        rare = step & RARE_OFFSET_MASK;
        if (y === c2 && (y === c1 || c1 === c3)) cost += REPEAT_COST_LOWER;
        c3 = c2;
        c2 = c1;
        c1 = y;
        l = m;
      }
      // Perf: what every letter of the run pays alike (its cost, the long-piece cost past
      // LONG_AFTER) is added once, after the run. A letter pays EXTENDED_LATIN_LOWER_COST if the
      // run's first paying letter is within EXTENDED_LATIN_REACH of an extended-Latin letter.
      letter = l;
      const letters = i - first + 1;
      paying += letters;
      if (paying > 0) {
        if (!continued || runRate === 0) {
          const at = i + 1 - paying;
          runRate =
            at - extendedLatinAt < EXTENDED_LATIN_REACH ? EXTENDED_LATIN_LOWER_COST : CHAR_LOWER;
        }
        cost += paying * runRate;
      } else {
        runRate = 0;
      }
      const posBefore = pos;
      pos = posBefore + letters;
      if (pos > LONG_AFTER) {
        cost += LONG_LATIN * (pos - (posBefore > LONG_AFTER ? posBefore : LONG_AFTER));
      }
      cls = LOWER;
      continue;
    }
    if (c === 0x20) {
      // Perf: a run of spaces (between words, indentation) without the class tables.
      if (group !== G_SPACE) {
        cost += transition[group * GROUP_COUNT + G_SPACE];
        group = G_SPACE;
        pos = 0;
      }
      letter = -1;
      punct = -1;
      for (;;) {
        if (c === c2 && (c === c1 || c1 === c3)) cost += REPEAT[SPACE];
        c3 = c2;
        c2 = c1;
        c1 = c;
        if (++pos > LONG_AFTER) cost += LONG[G_SPACE];
        cost += charCost[SPACE];
        if (i + 1 >= length || text.charCodeAt(i + 1) !== 0x20) break;
        i++;
      }
      cls = SPACE;
      continue;
    }
    const k = classOf[c];
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
    if (k <= UPPER && k >= LOWER) {
      const l = (c | 0x20) - 0x61;
      if (pos > 0) {
        if (k === UPPER && cls === UPPER) cost += UPPER_RUN_COST;
        if (letter >= 0) cost += letterBigram[letter * 26 + l];
      }
      letter = l;
      punct = -1;
    } else {
      letter = -1;
      const p = c < 0x80 ? PUNCT_INDEX[c] : -1;
      if (p >= 0 && pos > 0 && punct >= 0) cost += PUNCT_BIGRAM[punct * 32 + p];
      punct = p;
    }
    if (c === c2 && (c === c1 || c1 === c3)) cost += REPEAT[k];
    c3 = c2;
    c2 = c1;
    c1 = c;
    pos++;
    if (pos > LONG_AFTER && g !== G_DIGIT) cost += LONG[g];
    cost += charCost[k];
    cls = k;
    group = g;
    if (c >= 0x80) {
      if (c >= 0xd800 && c <= 0xdbff) {
        // A high surrogate already names the block of its astral character: the pair was
        // charged with it, and its low half is skipped.
        const low = i + 1 < length ? text.charCodeAt(i + 1) : 0;
        if (low >= 0xdc00 && low <= 0xdfff) i++;
        continue;
      }
      // Perf: the rest of a run of non-ASCII characters of one group (a word of one script), in
      // a tight inner loop: none of them starts a piece, is a letter a–z or punctuation, or
      // pairs with a surrogate, so each costs its class, a repetition and a long piece only.
      while (i + 1 < length) {
        const y = text.charCodeAt(i + 1);
        if (y < 0x80 || (y >= 0xd800 && y <= 0xdfff)) break;
        const ky = classOf[y];
        if (groupOf[ky] !== g) break;
        i++;
        if (y === c2 && (y === c1 || c1 === c3)) cost += REPEAT[ky];
        c3 = c2;
        c2 = c1;
        c1 = y;
        if (++pos > LONG_AFTER) cost += LONG[g];
        cost += charCost[ky];
        cls = ky;
      }
    } else if (k === DIGIT) {
      // Perf: the rest of a run of digits: a new group every three, a repetition, the digit.
      while (i + 1 < length) {
        const y = text.charCodeAt(i + 1);
        if (y < 0x30 || y > 0x39) break;
        i++;
        if (pos % 3 === 0) cost += DIGIT_GROUP_COST;
        if (y === c2 && (y === c1 || c1 === c3)) cost += REPEAT_COST_DIGIT;
        c3 = c2;
        c2 = c1;
        c1 = y;
        pos++;
        cost += CHAR_DIGIT;
      }
    }
  }
  state.cost = cost;
  state.group = group;
  state.cls = cls;
  state.pos = pos;
  state.letter = letter;
  state.rare = rare;
  state.runRate = runRate;
  state.c1 = c1;
  state.c2 = c2;
  state.c3 = c3;
  state.punct = punct;
  state.extendedLatinAt = extendedLatinAt - from + state.units;
  state.units += to - from;
}

/** The state a `DefaultRunningCount#snapshot` holds (a copy: one snapshot resumes many times). */
function defaultCountFrom(snapshot: RunningSnapshot): DefaultCountState {
  const state = startDefaultCount();
  for (const key of Object.keys(state) as (keyof DefaultCountState)[]) {
    const value = snapshot[key];
    if (typeof value === "number") state[key] = value;
  }
  return state;
}

/** The `default` estimator's running count: its scanner's state, carried between pieces. */
class DefaultRunningCount implements RunningCount {
  readonly #state: DefaultCountState;

  constructor(state: DefaultCountState = startDefaultCount()) {
    this.#state = state;
  }

  add(text: string, from = 0, to = text.length): void {
    scanDefault(this.#state, text, from, to);
  }

  tokens(): number {
    return defaultCountTokens(this.#state);
  }

  fork(): RunningCount {
    return new DefaultRunningCount({ ...this.#state });
  }

  snapshot(): RunningSnapshot {
    return { ...this.#state };
  }
}

export const defaultEstimator: Estimator = {
  name: "default",
  count: countDefault,
  maxUnitsPerToken: SUB / MIN_UNIT_COST,
  running: () => new DefaultRunningCount(),
  resume: (snapshot) => new DefaultRunningCount(defaultCountFrom(snapshot)),
};

/**
 * For tests: the smallest cost of one UTF-16 unit, in 1/1024 token, the tables' invariants, and
 * every table and constant of the model (test-support/default-reference.ts counts with them the
 * plain way, to check that `countDefault`'s optimized loop gives the same counts).
 */
export const DEFAULT_ESTIMATOR_INTERNALS = {
  SUB,
  MIN_UNIT_COST,
  charCosts: CHAR_COST,
  classCount: CLASS_COUNT,
  CLASS_OF_UNIT,
  GROUP_OF_CLASS,
  CHAR_COST: CHAR,
  PIECE_COST_TABLE: TRANSITION,
  LETTER_ESCAPE_START,
  PUNCT_ESCAPE_START,
  ESCAPE_START,
  GROUP_COUNT,
  LONG_COST: LONG,
  LONG_AFTER,
  REPEAT_COST,
  LETTER_RARITY,
  LETTER_BIGRAM,
  RARE_PAIR_COST,
  RARE_RUN_COST,
  PUNCT_INDEX,
  PUNCT_BIGRAM,
  DIGIT_GROUP_COST,
  SPACES_BEFORE_DIGIT_COST,
  CASE_CHANGE_COST,
  UPPER_RUN_COST,
  AFTER_EXTENDED_LATIN,
  EXTENDED_LATIN_REACH,
  EXTENDED_LATIN_LOWER_COST,
  classes: { SPACE, LOWER, UPPER, DIGIT, BACKSLASH, ESCL, BSP, LATINX, LATINEXT, VIETX },
  groups: { G_START, G_SPACE, G_LATIN, G_DIGIT, G_PUNCT, G_ESC, G_BS },
} as const;
