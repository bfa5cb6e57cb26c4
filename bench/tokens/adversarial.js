/**
 * @module
 * Strings no corpus kind is made of but an estimator must still cover: long runs of one character,
 * of a pair, or of a JSON-shaped unit, each as a JSON page, and short natural texts that the Claude
 * tokenizer splits most finely. The unit tests check that `default` counts them at least as every
 * reference tokenizer does; `tune.js --adversarial` gives them to a refit as constraints.
 */

/** Units that are repeated 5, 13, 50 and 500 times. */
export const RUN_UNITS = [
  "a",
  "g",
  "l",
  "Q",
  "D",
  "0",
  "7",
  "&",
  "-",
  "=",
  "*",
  ".",
  "~",
  "!",
  "?",
  "'",
  '"',
  "\\",
  "\n",
  "\r\n",
  "\t",
  " ",
  "é",
  "ж",
  "α",
  "中",
  "한",
  "あ",
  "😀",
  "ab",
  "ha",
  "xo",
  "01",
  "-=",
  "a1",
  "A ",
  "a.",
  // JSON-shaped units (an array of empty objects, escaped quotes): a refit that made punctuation
  // cheaper once under-counted `},{` repeated by a fifth
  "},{",
  "{}",
  '":"',
  '","',
  // pretty-printed arrays of small numbers, lines of a number (`JSON.stringify(x, null, 2)`)
  "\n  1,",
  "\n    42,",
  "\r\n  7,",
  "\n\t\t3,",
  "\n      true,",
  // code line ends: the Claude tokenizer splits `;\r\n` into three tokens, o200k keeps it whole
  "}\r\n",
  ";\r\n",
  "  }\n",
];

export const RUN_LENGTHS = [5, 13, 50, 500];

/** The units whose runs are also checked raw: line ends, indentation, lines of pretty JSON. */
export const RAW_RUN_UNITS = new Set([
  "\n",
  "\r\n",
  "\t",
  " ",
  "\n  1,",
  "\n    42,",
  "\r\n  7,",
  "\n\t\t3,",
  "\n      true,",
  "}\r\n",
  ";\r\n",
  "  }\n",
]);

/**
 * Natural text in the scripts and layouts that the public Claude tokenizer (@anthropic-ai/tokenizer
 * 0.0.4) splits most finely, each with that tokenizer's count of `JSON.stringify({ content: text })`,
 * computed once and stored here so that the estimator test needs no tokenizer for them (a second test re-counts them with
 * the dev dependency).
 */
/** @type {ReadonlyArray<{ name: string, text: string, claude: number }>} */
export const CLAUDE_SAMPLES = [
  {
    name: "Russian",
    text: "Вчера вечером мы долго говорили о том, как изменилась жизнь в нашем городе за последние десять лет. Новые дома, широкие улицы и парки появились там, где раньше были только старые заводы.",
    claude: 103,
  },
  {
    name: "Ukrainian",
    text: "Їжак швидко біг через ґанок, а діти сміялися й гукали його на подвір'ї. Українська мова має літери є, і, ї та ґ.",
    claude: 83,
  },
  {
    name: "Serbian",
    text: "Љубав према језику и књижевности Ђорђе је наследио од оца, који је цео живот радио као учитељ у Београду. Ћерка му студира у Нишу.",
    claude: 92,
  },
  {
    name: "Bulgarian",
    text: "Благодаря ви за поканата. Образованието и здравеопазването са най-важните въпроси за правителството през тази година.",
    claude: 69,
  },
  {
    name: "Greek",
    text: "Η Ελλάδα είναι γνωστή για την ιστορία, τη φιλοσοφία και τη δημοκρατία της. Κάθε καλοκαίρι χιλιάδες επισκέπτες έρχονται στα νησιά του Αιγαίου.",
    claude: 162,
  },
  {
    name: "Vietnamese",
    text: "Tiếng Việt là ngôn ngữ chính thức của Việt Nam. Hà Nội là thủ đô, còn thành phố Hồ Chí Minh là trung tâm kinh tế lớn nhất của đất nước.",
    claude: 97,
  },
  {
    name: "Polish",
    text: "Dziękuję za wczorajsze spotkanie. Chciałbym jeszcze raz omówić szczegóły projektu, zanim wyślemy ofertę do klienta w przyszłym tygodniu.",
    claude: 71,
  },
  {
    name: "Polish pangram",
    text: "Gżegżółka siedziała na źródle, a żółw płynął łódź przez jezioro. Zażółć gęślą jaźń.",
    claude: 62,
  },
  {
    name: "Czech",
    text: "Děkuji za včerejší schůzku. Rád bych ještě jednou probral podrobnosti projektu, než pošleme nabídku zákazníkovi příští týden.",
    claude: 70,
  },
  {
    name: "Czech pangram",
    text: "Příliš žluťoučký kůň úpěl ďábelské ódy. Město leží na řece a člověk tam může chodit pěšky do školy i do práce.",
    claude: 72,
  },
  {
    name: "Arabic",
    text: "السلام عليكم ورحمة الله. تعتبر اللغة العربية من أقدم اللغات في العالم، ويتحدث بها أكثر من أربعمائة مليون شخص في الدول العربية.",
    claude: 114,
  },
  {
    name: "Hebrew",
    text: "שלום לכולם. ירושלים היא עיר עתיקה עם היסטוריה ארוכה, ובכל שנה מגיעים אליה מבקרים רבים מכל העולם כדי לראות את העיר העתיקה.",
    claude: 106,
  },
  {
    name: "Persian",
    text: "زبان فارسی یکی از زبان‌های کهن جهان است و در ایران، افغانستان و تاجیکستان به آن سخن می‌گویند. در سال ۱۴۰۲ جمعیت ایران حدود ۸۵ میلیون نفر بود.",
    claude: 141,
  },
  {
    name: "Hindi",
    text: "भारत एक विशाल देश है जिसकी संस्कृति और इतिहास बहुत पुराने हैं। हर साल लाखों लोग दिल्ली, मुंबई और वाराणसी की यात्रा करते हैं।",
    claude: 134,
  },
  {
    name: "Thai",
    text: "ประเทศไทยเป็นประเทศที่มีวัฒนธรรมและประวัติศาสตร์ยาวนาน กรุงเทพมหานครเป็นเมืองหลวงและศูนย์กลางทางเศรษฐกิจของประเทศ",
    claude: 214,
  },
  {
    name: "Korean",
    text: "안녕하세요. 저는 서울에 살고 있는 학생입니다. 오늘은 날씨가 정말 좋아서 친구들과 함께 한강 공원에 가서 점심을 먹었습니다.",
    claude: 83,
  },
  {
    name: "Go with tabs and blank lines",
    text: 'func main() {\n\tif err := run(); err != nil {\n\t\tfor i := 0; i < 3; i++ {\n\t\t\t\tlog.Printf("retry %d", i)\n\t\t\t}\n\t\t}\n\t}\n}\n\n\n\n',
    claude: 84,
  },
  {
    name: "deep indentation",
    text: `${"\t".repeat(12)}<div class="row">\n${" ".repeat(48)}"value": 42,\n${"\t".repeat(16)}}\n\n${" ".repeat(64)}\n`,
    claude: 82,
  },
  {
    name: "tab-separated numbers",
    text: "405926\t13\t20\t33\t93777\t579019\t4\n-8.65\t2497\t24\t7\t259\t572422\t70\n8771\t62.6\t1.531\t11\t0\t5\t6\n",
    claude: 83,
  },
];

/**
 * Every run as the model would see it, `{ name, text }`: as a JSON page (escaped) and, with
 * `raw`, runs of RAW_RUN_UNITS also as the text itself (`read` in line mode).
 */
export function runPages({ raw = false } = {}) {
  const pages = [];
  for (const unit of RUN_UNITS) {
    for (const n of RUN_LENGTHS) {
      if (raw && RAW_RUN_UNITS.has(unit)) {
        pages.push({ name: `raw ${JSON.stringify(unit)} x ${n}`, text: unit.repeat(n) });
      }
      pages.push({
        name: `${JSON.stringify(unit)} x ${n}`,
        text: JSON.stringify({ content: unit.repeat(n) }),
      });
    }
  }
  return pages;
}

/** The Claude samples as the JSON pages their stored counts are of, `{ name, text }`. */
export function claudeSamplePages() {
  return CLAUDE_SAMPLES.map((s) => ({ name: s.name, text: JSON.stringify({ content: s.text }) }));
}
