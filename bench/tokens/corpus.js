/**
 * @module
 * A deterministic, offline corpus of content kinds for measuring token estimators.
 *
 * `KINDS` lists each kind as `{ name, heldOut, description, generate(seed, approxChars) }`.
 * `generate` returns a string of about `approxChars` UTF-16 units (never much shorter), the same
 * string for the same seed on every machine. Kinds marked `heldOut` were never looked at while the
 * `default` estimator's constants were tuned; their results are reported separately in
 * docs/tokens.md as a check that the constants generalise.
 *
 * Text is synthetic but built from real words, real identifiers and real formats, so byte-pair
 * tokenizers see what they see in the wild: common words merge, rare words, ids and hashes split.
 */

// ---------------------------------------------------------------------------------------------
// Random numbers

/** A small, fast, seedable PRNG (mulberry32). Returns floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hashString(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

class Rng {
  constructor(seed, salt) {
    this.next = mulberry32(hashString(`${seed}:${salt}`));
  }
  /** Integer in [0, n). */
  int(n) {
    return Math.floor(this.next() * n);
  }
  /** Integer in [lo, hi]. */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }
  chance(p) {
    return this.next() < p;
  }
  pick(items) {
    return items[this.int(items.length)];
  }
  /** Zipf-like pick (weights 1/(i+8)): early items are more frequent, like word frequencies. */
  zipf(items) {
    const k = 8;
    const i = Math.floor(k * ((items.length + k) / k) ** this.next() - k);
    return items[Math.min(items.length - 1, i)];
  }
  hex(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(16)];
    return s;
  }
  chars(alphabet, n) {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
  uuid() {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[this.int(4)]}${h.slice(17, 20)}-${h.slice(20)}`;
  }
  bytes(n) {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

/** Calls `part(rng)` until the text reaches `approxChars` UTF-16 units. */
function build(rng, approxChars, part, separator = "") {
  const out = [];
  let length = 0;
  while (length < approxChars) {
    const piece = part(rng);
    out.push(piece);
    length += piece.length + separator.length;
  }
  return out.join(separator);
}

const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B64URL = `${ALNUM}-_`;

function base64(bytes) {
  return Buffer.from(bytes).toString("base64");
}

// ---------------------------------------------------------------------------------------------
// Word lists

const split = (s) => s.trim().split(/\s+/u);

const EN_COMMON = split(`
the of and to in is that it was for on are as with his they at be this have from or one had by
word but not what all were we when your can said there use an each which she do how their if will
up other about out many then them these so some her would make like him into time has look two more
write go see number no way could people my than first water been call who its now find long down
day did get come made may part over new sound take only little work know place year live me back
give most very after thing our just name good sentence man think say great where help through much
before line right too mean old any same tell boy follow came want show also around form three small
set put end does another well large must big even such because turn here why ask went men read need
land different home us move try kind hand picture again change off play spell air away animal house
point page letter mother answer found study still learn should world system server request memory
budget token model agent file data between important government development experience information
understand consider although however necessary particular especially community environment
performance relationship responsibility city country family school market company problem question
result report policy history health power money music food night morning evening river mountain
`);
const EN_RARE = split(`
serendipitous idiosyncratic photosynthesis circumnavigate quintessential juxtaposition obfuscation
epistemological anthropomorphic unprecedented reconnaissance bureaucratization incomprehensibility
electroencephalography thermodynamically mischaracterization counterintuitive disproportionately
interoperability idempotency deserialization tokenization Kubernetes PostgreSQL asynchronously
kaleidoscope labyrinthine mellifluous onomatopoeia perspicacious quixotic recalcitrant sycophantic
ubiquitous vicissitudes whippersnapper xenophobic zeitgeist acquiesce belligerent cacophony
dichotomy ephemeral flabbergasted gregarious hegemony iconoclast juxtapose kerfuffle lackadaisical
`);
const SYLLABLES = split(`
ka ri to mo na lu ve zan dor eth ql kry sto vin bar mel ox ith ul gra pha tzu xi quo wen drak syl
`);

const DE_WORDS = split(`
der die das und ist nicht ein eine zu mit sich auf für von dem den im es auch als an werden aus er
hat dass sie nach bei um am sind noch wie einem über einen so zum war haben nur oder aber vor zur bis
mehr durch man sein wurde sei Jahr Zeit Mensch Straße Größe Möglichkeit Entwicklung Bevölkerung
Geschwindigkeitsbegrenzung Übersetzung schön grün müssen können würde hätte Mädchen Bäume Häuser
Gebäude Frühstück natürlich gemäß während außerdem Verantwortung Öffentlichkeit Ärger Überraschung
Schlüssel Wörterbuch Regierung Wirtschaft Unternehmen Forschung Stadt Land Welt heute morgen gestern
immer wieder zwischen gegen ohne unter jedoch bereits sowie wegen Kinder Familie Arbeit Schule
`);
const FR_WORDS = split(`
le la les de des du et est un une que qui dans pour pas sur au avec il elle nous vous ils ce cette
été être avoir fait très où à déjà après même première français société système développement élève
problème intérêt qualité événement réponse naïve Noël ça garçon leçon hôpital forêt château
connaître fenêtre l'homme d'une qu'il c'est aujourd'hui gouvernement économie entreprise recherche
ville pays monde toujours encore entre contre sans sous cependant enfants famille travail école
plusieurs pendant depuis beaucoup peut-être là-bas voilà déçu reçu où êtes
`);
const ES_WORDS = split(`
el la los las de del y en que es un una por con para no se su al lo como más pero sus le ya o fue
este ha sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos
durante todos uno les ni contra otros ese eso ante ellos esto mí antes algunos qué unos yo otro
otras otra él tanto esa estos mucho quienes nada muchos cual poco ella estar niño año mañana corazón
canción información educación después está están país así según día último público política música
árbol gobierno economía empresa investigación ciudad mundo siempre señor señora pequeño
`);
const PL_CS_WORDS = split(`
w i na z się nie do to że jest o jak ale po co tak za od być przez już jego który może są czy ich
tylko jeszcze było także więc żeby gdzie również będzie właśnie między część miłość książka życie
źródło szczęście gżegżółka żółw łódź świat człowiek dziękuję przyjaciel że což ještě když řeka
příliš žluťoučký kůň úpěl ďábelské ódy město věc člověk děkuji škola práce dům rodina země
`);
const RU_WORDS = split(`
и в не на я быть он с что а по это она этот к но они мы как из у который то за свой весь год от так
о для ты же все тот мочь вы человек такой его сказать только или ещё бы себя один уже до время если
сам когда другой вот говорить наш мой знать стать при чтобы дело жизнь кто первый очень два день её
новый рука даже во со раз где там под можно ну какой после их работа без самый потом надо хотеть ли
слово идти большой должен место иметь сейчас тут лицо каждый друг нет теперь ни глаз тоже тогда
видеть вопрос через да здесь дом потому сторона думать сделать страна жить чем мир последний случай
голова более делать смотреть ребёнок просто конечно сила российский конец перед несколько система
всегда работать три понять часть город также понимать получить отношение второй именно вообще
хорошо сегодня программа разработка государственный производительность їжак є українська мова
`);
const AR_WORDS = split(`
في من على أن إلى عن مع هذا هذه كان التي الذي ما لا أو قد كل بين بعد عند ذلك حتى لم إن وقد وهو هو
هي كما أيضا العالم الحكومة الناس يوم سنة الكتاب المدرسة البيت الماء الحياة العمل الوقت الأرض
السلام عليكم شكرا مرحبا الجامعة التكنولوجيا المعلومات البرنامج الاقتصاد المدينة العربية
`);
const HE_WORDS = split(`
של את על זה לא הוא היא עם כל אני גם מה יש אבל אם או כי היה הם שלום תודה בית ספר מים עולם ישראל
ירושלים אהבה משפחה עבודה זמן יום שנה ממשלה מחשב תוכנה מידע עיר ילדים
`);
const EL_WORDS = split(`
και το η ο του της να σε με για από που τα των είναι θα δεν τη οι στο στην ένα μια αυτό όταν πολύ
καλημέρα ευχαριστώ Ελλάδα κόσμος άνθρωπος γλώσσα ιστορία φιλοσοφία δημοκρατία θάλασσα ήλιος ζωή
χρόνος σπίτι πόλη αγάπη ελευθερία πρόγραμμα υπολογιστής κυβέρνηση οικονομία εταιρεία έρευνα
`);
const KA_WORDS = split(`
და არის რომ ეს არ მე ის ერთი ყველა საქართველო თბილისი გამარჯობა მადლობა სახლი წყალი ენა ქვეყანა
ხალხი დღე წელი სიყვარული მეგობარი ქალაქი წიგნი სკოლა მთავრობა კომპიუტერი
`);
const HY_WORDS = split(`
և է որ այս ես դու նա մենք Հայաստան Երևան բարև շնորհակալություն տուն ջուր լեզու երկիր մարդ օր
տարի սեր ընկեր քաղաք գիրք դպրոց կառավարություն համակարգիչ
`);
const HI_WORDS = split(`
और का की के है में से को यह एक पर हैं नहीं भी था कि वह लिए तो हो भारत दिल्ली नमस्ते धन्यवाद घर
पानी भाषा देश लोग दिन साल प्यार दोस्त शहर किताब स्कूल सरकार कंप्यूटर विकास जानकारी
`);
const TH_WORDS = split(`
และ ที่ เป็น ใน ของ มี ได้ ไม่ การ ว่า จะ ให้ กับ นี้ คน ประเทศไทย กรุงเทพ สวัสดี ขอบคุณ บ้าน น้ำ
ภาษา วัน ปี ความรัก เพื่อน เมือง หนังสือ โรงเรียน รัฐบาล คอมพิวเตอร์
`);
const HI_PROSE_WORDS = split(`
और का की के है में से को यह एक पर हैं नहीं भी था कि वह लिए तो हो गया किया करने कहा रहा रही
होता होती थे थी जो जा सकता सकते बहुत अपने अपनी कुछ सभी लेकिन क्योंकि अगर जब तक फिर अब यहाँ वहाँ
भारत दिल्ली मुंबई नमस्ते धन्यवाद घर पानी भाषा देश लोग दिन साल प्यार दोस्त शहर किताब स्कूल सरकार
कंप्यूटर विकास जानकारी समाज संस्कृति इतिहास विज्ञान प्रौद्योगिकी शिक्षा स्वास्थ्य अर्थव्यवस्था
परिवार बच्चे महिला पुरुष समय काम बात दुनिया ज़िंदगी प्रश्न उत्तर सूचना व्यवस्था प्रधानमंत्री
राष्ट्रीय अंतरराष्ट्रीय उद्योग कार्यक्रम संगठन निर्णय महत्वपूर्ण आवश्यक सुरक्षा न्यायालय
`);
const TH_PROSE_WORDS = split(`
และ ที่ เป็น ใน ของ มี ได้ ไม่ การ ว่า จะ ให้ กับ นี้ คน ก็ แต่ หรือ ซึ่ง เพราะ ถ้า เมื่อ แล้ว ยัง
ประเทศไทย กรุงเทพ สวัสดี ขอบคุณ บ้าน น้ำ ภาษา วัน ปี ความรัก เพื่อน เมือง หนังสือ โรงเรียน รัฐบาล
คอมพิวเตอร์ เศรษฐกิจ สังคม วัฒนธรรม ประวัติศาสตร์ วิทยาศาสตร์ เทคโนโลยี การศึกษา สุขภาพ ครอบครัว
เด็ก ผู้หญิง ผู้ชาย เวลา งาน โลก ชีวิต คำถาม คำตอบ ข้อมูล ระบบ นายกรัฐมนตรี แห่งชาติ ระหว่างประเทศ
อุตสาหกรรม โครงการ องค์กร การตัดสินใจ สำคัญ จำเป็น ความปลอดภัย ศาล พระราชบัญญัติ มหาวิทยาลัย
`);
const BG_WORDS = split(`
и в на да е се не за от с че той тя са по като това но ще как към при след още много беше има
България София здравей благодаря къща вода език страна хора ден година любов приятел град книга
училище правителство компютър развитие информация общество култура история наука технология
образование здраве семейство деца жена мъж време работа свят въпрос отговор система министър
национален международен промишленост програма организация решение важен необходим сигурност съд
Србија Београд хвала језик људи живот држава универзитет
`);
const FA_WORDS = split(`
و در به از که این را با است برای آن یک تا می شود بود کرد هم خود شده نیز ما او آنها اما اگر چون
ایران تهران سلام متشکرم خانه آب زبان کشور مردم روز سال عشق دوست شهر کتاب مدرسه دولت رایانه توسعه
اطلاعات جامعه فرهنگ تاریخ علم فناوری آموزش سلامت خانواده کودکان زن مرد زمان کار جهان پرسش پاسخ
سامانه وزیر ملی بین‌المللی صنعت برنامه سازمان تصمیم مهم ضروری امنیت دادگاه دانشگاه پژوهش
`);
const VI_WORDS = split(`
của và các có là được trong cho không người những với một này đã để khi từ năm theo về nhiều ra
như cũng đến nhà nước Việt Nam Hà Nội thành phố chính phủ phát triển kinh tế xã hội văn hóa lịch sử
giáo dục học sinh giáo viên bạn bè gia đình cảm ơn xin chào tiếng Việt máy tính phần mềm dữ liệu
hệ thống thông tin quan trọng ngày tháng buổi sáng đường phở cà phê bánh mì rất đẹp nhưng hoặc
`);
const ZH_WORDS = split(`
的 是 在 我们 他们 这个 一个 没有 中国 北京 上海 发展 经济 社会 问题 工作 时间 国家 人民 政府
公司 技术 系统 数据 服务器 文件 用户 程序 开发 研究 教育 学生 老师 学校 朋友 今天 明天 天气 非常
可以 因为 所以 但是 如果 已经 还是 知道 觉得 需要 应该 进行 通过 关于 重要 主要 世界 历史 文化
生活 环境 健康 医院 城市 市场 价格 银行 电脑 手机 网络 信息 安全 管理 质量 标准 能力 方法 结果
情况 过程 条件 影响 作用 关系 水平 部分 方面 内容 目标 计划 活动 组织 语言 文字 音乐 电影 故事
孩子 家庭 父母 春天 秋天 山 水 风 雨 花 树 鸟 猫 狗 龙 凤凰 麒麟 饕餮 鳞 甄嬛 貔貅 耄耋 囹圄
`);
const ZH_PUNCT = ["，", "。", "、", "；", "：", "？", "！", "“", "”", "（", "）", "《", "》"];
const JA_WORDS = split(`
は が を に で と の も です ます でした ました 私 東京 日本 今日 明日 会社 仕事 時間 電車 学校
先生 学生 友達 食べる 飲む 行く 来る 見る 言う する ある いる なる できる 思う 分かる
コンピュータ ソフトウェア データベース サーバー インターネット プログラム テスト ファイル
ユーザー システム コーヒー レストラン ホテル タクシー アメリカ ありがとう こんにちは さようなら
すみません とても ちょっと たくさん 美しい 新しい 大きい 小さい 天気 桜 富士山 新幹線 について
として ところ ために けれども しかし それから 鬱陶しい 薔薇 檸檬
`);
const KO_WORDS = split(`
나는 너는 우리는 그리고 하지만 그래서 한국 서울 안녕하세요 감사합니다 사람 시간 오늘 내일 회사
학교 선생님 학생 친구 컴퓨터 프로그램 데이터 서버 파일 사용자 시스템 개발 연구 경제 사회 문화
역사 정부 대통령 있다 없다 하다 되다 가다 오다 보다 먹다 좋아요 입니다 했습니다 합니다 에서
에게 으로 를 을 이 가 은 는 의 도 만 빨리 천천히 정말 아주 많이 똑똑한 괜찮아요 궤도 뷁
`);

const FIRST_NAMES = split(`
Alice Bob Carol David Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent
Victor Walter Yusuf Zoë José François Björn Søren Łukasz Ангелина Mei Hiroshi Priya Ahmed
`);
const LAST_NAMES = split(`
Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark
Müller Dubois Rossi Nakamura Kowalski Ivanov O'Brien
`);
const CITIES = split(`
London Paris Berlin Madrid Rome Tokyo Osaka Beijing Shanghai Seoul Moscow Cairo Lagos Nairobi
Sydney Toronto Vancouver Chicago Boston Seattle Denver Austin Lisbon Prague Vienna Zürich Kraków
São_Paulo Montréal Reykjavík
`).map((c) => c.replace("_", " "));

const IDENT_WORDS = split(`
user account order item product cart price total count index value key node tree list map set cache
buffer stream reader writer parser token page cursor budget limit offset config options request
response handler client server session state event message queue worker task job result error
status code path file dir root entry record field schema type name id data meta version hash
`);

// ---------------------------------------------------------------------------------------------
// Building blocks

function pseudoWord(rng) {
  let w = "";
  const n = rng.range(2, 4);
  for (let i = 0; i < n; i++) w += rng.pick(SYLLABLES);
  return w;
}

function capitalize(w) {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

function number(rng) {
  switch (rng.int(6)) {
    case 0:
      return String(rng.range(1900, 2030));
    case 1:
      return `${rng.range(1, 99)}%`;
    case 2:
      return `$${rng.range(1, 999)},${String(rng.int(1000)).padStart(3, "0")}.${String(rng.int(100)).padStart(2, "0")}`;
    case 3:
      return String(rng.range(2, 12));
    case 4:
      return `${rng.range(1, 28)}.${rng.range(1, 12)}.${rng.range(1990, 2030)}`;
    default:
      return String(rng.int(100000));
  }
}

/** A sentence of Latin-script (or other space-separated) words. */
function sentence(rng, words, opts = {}) {
  const {
    rare = [],
    pseudo = 0.03,
    numbers = 0.04,
    names = 0.03,
    end = [".", ".", ".", "?", "!"],
  } = opts;
  const n = rng.range(6, 24);
  const out = [];
  for (let i = 0; i < n; i++) {
    let w;
    const r = rng.next();
    if (r < pseudo) w = capitalize(pseudoWord(rng));
    else if (r < pseudo + numbers) w = number(rng);
    else if (r < pseudo + numbers + names) w = rng.pick(FIRST_NAMES);
    else if (rare.length > 0 && r < pseudo + numbers + names + 0.04) w = rng.pick(rare);
    else w = rng.zipf(words);
    if (i === 0) w = capitalize(w);
    if (i < n - 1 && rng.chance(0.08)) w += rng.pick([",", ",", ",", ";", ":", " —"]);
    if (rng.chance(0.02)) w = `(${w})`;
    if (rng.chance(0.02)) w = `"${w}"`;
    out.push(w);
  }
  return out.join(" ") + rng.pick(end);
}

function paragraph(rng, words, opts) {
  const n = rng.range(2, 7);
  const out = [];
  for (let i = 0; i < n; i++) out.push(sentence(rng, words, opts));
  return out.join(" ");
}

function prose(words, opts) {
  return (seed, approxChars, salt) =>
    build(new Rng(seed, salt), approxChars, (rng) => `${paragraph(rng, words, opts)}\n\n`);
}

/** Scripts written without spaces (Chinese, Japanese, Thai): words glued, native punctuation. */
function unspacedProse(words, punct, stop) {
  return (seed, approxChars, salt) =>
    build(new Rng(seed, salt), approxChars, (rng) => {
      let s = "";
      const n = rng.range(8, 30);
      for (let i = 0; i < n; i++) {
        s += rng.zipf(words);
        if (rng.chance(0.1)) s += rng.pick(punct);
        if (rng.chance(0.02)) s += number(rng);
        if (rng.chance(0.01)) s += rng.pick(EN_COMMON);
      }
      return s + stop + (rng.chance(0.2) ? "\n\n" : "");
    });
}

function camel(rng, parts = rng.range(1, 3)) {
  let s = rng.pick(IDENT_WORDS);
  for (let i = 1; i < parts; i++) s += capitalize(rng.pick(IDENT_WORDS));
  return s;
}

function snake(rng, parts = rng.range(1, 3)) {
  const out = [];
  for (let i = 0; i < parts; i++) out.push(rng.pick(IDENT_WORDS));
  return out.join("_");
}

function stringLiteral(rng) {
  switch (rng.int(5)) {
    case 0:
      return sentence(rng, EN_COMMON).slice(0, rng.range(8, 60));
    case 1:
      return `/api/v${rng.range(1, 3)}/${rng.pick(IDENT_WORDS)}s/${rng.int(1000)}`;
    case 2:
      return rng.uuid();
    case 3:
      return `${camel(rng)}.${rng.pick(["json", "ts", "txt", "md"])}`;
    default:
      return rng.pick(IDENT_WORDS);
  }
}

function jsonValue(rng, depth) {
  const r = rng.int(depth > 2 ? 6 : 9);
  switch (r) {
    case 0:
      return rng.int(100000);
    case 1:
      return Math.round(rng.next() * 1e6) / 100;
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
    case 5:
      return stringLiteral(rng);
    case 6: {
      const a = [];
      const n = rng.range(0, 5);
      for (let i = 0; i < n; i++) a.push(jsonValue(rng, depth + 1));
      return a;
    }
    default:
      return jsonObject(rng, depth + 1);
  }
}

function jsonObject(rng, depth = 0) {
  const o = {};
  const n = rng.range(2, 7);
  for (let i = 0; i < n; i++) {
    const key = rng.chance(0.5) ? camel(rng) : snake(rng);
    o[key] = jsonValue(rng, depth);
  }
  if (rng.chance(0.5)) o.id = rng.uuid();
  if (rng.chance(0.3)) o.createdAt = isoTime(rng);
  return o;
}

function isoTime(rng) {
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `20${p(rng.range(18, 26))}-${p(rng.range(1, 12))}-${p(rng.range(1, 28))}T${p(rng.int(24))}:${p(rng.int(60))}:${p(rng.int(60))}.${p(rng.int(1000), 3)}Z`;
}

function emailOf(rng) {
  return `${rng.pick(FIRST_NAMES).toLowerCase()}.${rng.pick(LAST_NAMES).toLowerCase()}${rng.chance(0.3) ? rng.int(100) : ""}@${rng.pick(["example.com", "mail.org", "corp.io", "uni.edu"])}`;
}

function comment(rng) {
  return sentence(rng, EN_COMMON, { end: ["", "."] }).slice(0, rng.range(20, 90));
}

function randomAstral(rng, lo, hi) {
  return String.fromCodePoint(rng.range(lo, hi));
}

// ---------------------------------------------------------------------------------------------
// Code

function tsBlock(rng) {
  const fn = camel(rng);
  const t = capitalize(camel(rng));
  switch (rng.int(4)) {
    case 0:
      return `export interface ${t} {\n${Array.from({ length: rng.range(2, 6) }, () => `  ${camel(rng)}${rng.chance(0.3) ? "?" : ""}: ${rng.pick(["string", "number", "boolean", `${t}[]`, "Record<string, unknown>", "readonly string[]"])};`).join("\n")}\n}\n`;
    case 1:
      return `/** ${comment(rng)} */\nexport async function ${fn}(${camel(rng)}: ${t}, options: { ${camel(rng)}?: number } = {}): Promise<${t} | undefined> {\n  const ${camel(rng)} = await this.#${camel(rng)}.get(${camel(rng)}.id);\n  if (!${fn} || ${camel(rng)}.length === 0) {\n    throw new PagewiseError("INVALID_ARGUMENT", \`${comment(rng)}: \${${camel(rng)}}\`);\n  }\n  for (let i = 0; i < ${camel(rng)}.length; i++) {\n    ${camel(rng)} += ${camel(rng)}[i] * ${rng.int(64)};\n  }\n  return { ...${camel(rng)}, ${camel(rng)}: ${rng.int(1000)} };\n}\n`;
    case 2:
      return `export class ${t} implements ${capitalize(camel(rng))} {\n  readonly #${camel(rng)} = new Map<string, ${capitalize(camel(rng))}>();\n  constructor(private readonly ${camel(rng)}: ${capitalize(camel(rng))}) {}\n\n  ${fn}(): void {\n    // ${comment(rng)}\n    this.#${camel(rng)}.set("${rng.pick(IDENT_WORDS)}", ${rng.chance(0.5) ? "null" : "undefined"} as never);\n  }\n}\n`;
    default:
      return `import { ${camel(rng)}, type ${t} } from "./${rng.pick(IDENT_WORDS)}/${rng.pick(IDENT_WORDS)}.js";\nconst ${snake(rng).toUpperCase()} = ${rng.int(1 << 20)};\nexport const ${fn} = (${camel(rng)}: string[]) => ${camel(rng)}.filter((x) => x !== "${stringLiteral(rng)}").map((x) => x.trim());\n`;
  }
}

function pyBlock(rng) {
  const fn = snake(rng);
  const cls = capitalize(camel(rng));
  switch (rng.int(3)) {
    case 0:
      return `def ${fn}(${snake(rng)}: ${rng.pick(["str", "int", "list[str]", "dict[str, Any]"])}, *, ${snake(rng)}: int = ${rng.int(100)}) -> ${rng.pick(["None", "bool", "Optional[str]"])}:\n    """${comment(rng)}"""\n    if not ${snake(rng)}:\n        raise ValueError(f"${comment(rng)}: {${snake(rng)}!r}")\n    for ${snake(rng, 1)} in range(len(${snake(rng)})):\n        ${snake(rng)}[${snake(rng, 1)}] = ${snake(rng)}.get("${rng.pick(IDENT_WORDS)}", ${rng.int(10)})\n    return ${snake(rng)}\n\n`;
    case 1:
      return `class ${cls}(${capitalize(camel(rng))}):\n    """${comment(rng)}\n\n    ${comment(rng)}\n    """\n\n    def __init__(self, ${snake(rng)}, ${snake(rng)}=None):\n        super().__init__()\n        self._${snake(rng)} = ${snake(rng)}\n        self.${snake(rng)} = [${rng.int(10)}, ${rng.int(100)}, ${rng.int(1000)}]\n\n    @property\n    def ${fn}(self):\n        return self._${snake(rng)} or {}\n\n`;
    default:
      return `import ${rng.pick(["os", "sys", "json", "re", "asyncio", "logging"])}\nfrom ${snake(rng)}.${snake(rng, 1)} import ${cls}, ${snake(rng)}\n\n${snake(rng).toUpperCase()} = ${rng.int(1 << 16)}  # ${comment(rng)}\nlogger = logging.getLogger(__name__)\n\n`;
  }
}

function goBlock(rng) {
  const t = capitalize(camel(rng));
  const fn = capitalize(camel(rng));
  return rng.chance(0.5)
    ? `// ${fn} ${comment(rng)}\nfunc (s *${t}) ${fn}(ctx context.Context, ${camel(rng)} string) (*${capitalize(camel(rng))}, error) {\n\t${camel(rng)}, err := s.${camel(rng)}.Get(ctx, ${camel(rng)})\n\tif err != nil {\n\t\treturn nil, fmt.Errorf("${comment(rng).toLowerCase()}: %w", err)\n\t}\n\tfor i := 0; i < len(${camel(rng)}); i++ {\n\t\t${camel(rng)} += ${camel(rng)}[i]\n\t}\n\treturn &${capitalize(camel(rng))}{ID: ${camel(rng)}, Count: ${rng.int(100)}}, nil\n}\n\n`
    : `type ${t} struct {\n${Array.from({ length: rng.range(2, 5) }, () => `\t${capitalize(camel(rng))} ${rng.pick(["string", "int64", "[]byte", "*sync.Mutex", "map[string]int", "time.Time"])} \`json:"${snake(rng)},omitempty"\``).join("\n")}\n}\n\n`;
}

function rustBlock(rng) {
  const t = capitalize(camel(rng));
  const fn = snake(rng);
  return rng.chance(0.5)
    ? `/// ${comment(rng)}\npub fn ${fn}<'a>(${snake(rng)}: &'a [u8], ${snake(rng)}: usize) -> Result<${t}<'a>, Error> {\n    let mut ${snake(rng)} = Vec::with_capacity(${rng.int(4096)});\n    match ${snake(rng)}.get(..${snake(rng)}) {\n        Some(bytes) if !bytes.is_empty() => Ok(${t}::new(bytes)),\n        Some(_) => Err(Error::Empty),\n        None => Err(Error::OutOfBounds { index: ${rng.int(100)} }),\n    }\n}\n\n`
    : `#[derive(Debug, Clone, PartialEq, Eq)]\npub struct ${t} {\n${Array.from({ length: rng.range(2, 5) }, () => `    pub ${snake(rng)}: ${rng.pick(["String", "u64", "Vec<u8>", "Option<Box<Self>>", "HashMap<String, i32>", "Arc<Mutex<()>>"])},`).join("\n")}\n}\n\nimpl ${t} {\n    pub fn ${fn}(&self) -> &str {\n        &self.${snake(rng)}\n    }\n}\n\n`;
}

function minify(code) {
  return code
    .replace(/\/\*\*[\s\S]*?\*\/|\/\/[^\n]*/g, "")
    .replace(/:\s*(string|number|boolean|void|Promise<[^>]*>)/g, "")
    .replace(/\s+/g, " ")
    .replace(/ ?([{}();,=:<>+*?|&]) ?/g, "$1");
}

// ---------------------------------------------------------------------------------------------
// JSON as programs write it

/** A semantic version as package manifests spell it. */
function semver(rng) {
  return `${rng.pick(["", "", "^", "~", ">="])}${rng.int(20)}.${rng.int(30)}.${rng.int(40)}${rng.chance(0.1) ? `-${rng.pick(["beta", "rc", "alpha"])}.${rng.int(5)}` : ""}`;
}

/** An npm package name, scoped or not. */
function packageName(rng) {
  const base = `${rng.pick(IDENT_WORDS)}${rng.chance(0.5) ? `-${rng.pick(IDENT_WORDS)}` : ""}`;
  return rng.chance(0.4) ? `@${rng.pick(IDENT_WORDS)}/${base}` : base;
}

/**
 * One record of an API response or a data dump: integers, decimals, booleans, nulls, short
 * strings, arrays of numbers (coordinates, series, matrices), empty arrays and objects. Pretty
 * printed, every scalar of an array is a line of its own (`JSON.stringify(x, null, 2)`).
 */
function dataRecord(rng) {
  const o = { id: rng.int(100000) };
  const fields = rng.range(3, 9);
  for (let i = 0; i < fields; i++) {
    const key = rng.chance(0.5) ? camel(rng, rng.range(1, 2)) : snake(rng, rng.range(1, 2));
    switch (rng.int(12)) {
      case 0:
        o[key] = rng.int(rng.pick([10, 1000, 1e6]));
        break;
      case 1:
        o[key] = Math.round(rng.next() * 10 ** rng.range(2, 6)) / 100;
        break;
      case 2:
        o[key] = rng.chance(0.5);
        break;
      case 3:
        o[key] = null;
        break;
      case 4:
        o[key] = rng.chance(0.5) ? rng.pick(IDENT_WORDS) : rng.pick(EN_COMMON);
        break;
      case 5:
        o[key] = Array.from({ length: rng.range(2, 12) }, () =>
          rng.int(rng.pick([10, 256, 10000])),
        );
        break;
      case 6:
        o[key] = [
          Math.round((rng.next() * 360 - 180) * 1e6) / 1e6,
          Math.round((rng.next() * 180 - 90) * 1e6) / 1e6,
        ];
        break;
      case 7:
        o[key] = Array.from({ length: rng.range(2, 4) }, () =>
          Array.from({ length: rng.range(2, 4) }, () => rng.int(10)),
        );
        break;
      case 8:
        o[key] = rng.pick([[], {}, ""]);
        break;
      case 9:
        o[key] = Array.from({ length: rng.range(1, 4) }, () => rng.pick(IDENT_WORDS));
        break;
      case 10:
        o[key] = { enabled: rng.chance(0.5), count: rng.int(100), ratio: rng.int(100) / 100 };
        break;
      default:
        o[key] = isoTime(rng);
    }
  }
  return o;
}

/** One configuration file: package.json, a package-lock.json entry, tsconfig, editor settings. */
function configDocument(rng) {
  switch (rng.int(4)) {
    case 0: {
      const deps = (n) =>
        Object.fromEntries(Array.from({ length: n }, () => [packageName(rng), semver(rng)]));
      return {
        name: packageName(rng),
        version: semver(rng).replace(/^[^0-9]+/, ""),
        private: rng.chance(0.5),
        description: sentence(rng, EN_COMMON).slice(0, rng.range(20, 90)),
        type: "module",
        main: `dist/${rng.pick(IDENT_WORDS)}.js`,
        scripts: Object.fromEntries(
          Array.from({ length: rng.range(2, 6) }, () => [
            rng.pick(["build", "test", "lint", "dev", "start", "format", "typecheck"]),
            `${rng.pick(["node", "tsc", "vitest", "eslint", "biome"])} ${rng.pick(["--watch", "run", "check .", "-p tsconfig.json", `scripts/${rng.pick(IDENT_WORDS)}.js`])}`,
          ]),
        ),
        engines: { node: `>=${rng.range(14, 22)}` },
        dependencies: deps(rng.range(2, 10)),
        devDependencies: deps(rng.range(2, 12)),
      };
    }
    case 1:
      return {
        [`node_modules/${packageName(rng)}`]: {
          version: semver(rng).replace(/^[^0-9]+/, ""),
          resolved: `https://registry.npmjs.org/${rng.pick(IDENT_WORDS)}/-/${rng.pick(IDENT_WORDS)}-${rng.int(10)}.${rng.int(10)}.${rng.int(10)}.tgz`,
          integrity: `sha512-${base64(rng.bytes(48))}`,
          dev: rng.chance(0.5),
          license: rng.pick(["MIT", "ISC", "Apache-2.0", "BSD-3-Clause"]),
          ...(rng.chance(0.5)
            ? {
                dependencies: Object.fromEntries(
                  Array.from({ length: rng.range(1, 4) }, () => [packageName(rng), semver(rng)]),
                ),
              }
            : {}),
          ...(rng.chance(0.3) ? { engines: { node: `>=${rng.range(8, 20)}` } } : {}),
        },
      };
    case 2:
      return {
        compilerOptions: {
          target: rng.pick(["ES2022", "ES2020", "ESNext"]),
          module: rng.pick(["NodeNext", "ESNext", "CommonJS"]),
          strict: true,
          noUncheckedIndexedAccess: rng.chance(0.5),
          declaration: rng.chance(0.5),
          outDir: "dist",
          rootDir: "src",
          lib: ["ES2022", ...(rng.chance(0.5) ? ["DOM"] : [])],
          paths: { [`@${rng.pick(IDENT_WORDS)}/*`]: [`src/${rng.pick(IDENT_WORDS)}/*`] },
        },
        include: ["src/**/*.ts"],
        exclude: ["node_modules", "dist"],
      };
    default:
      return Object.fromEntries(
        Array.from({ length: rng.range(4, 12) }, () => [
          `${rng.pick(["editor", "files", "search", "typescript", "eslint"])}.${camel(rng, rng.range(1, 2))}`,
          rng.pick([
            rng.chance(0.5),
            rng.int(200),
            rng.pick(IDENT_WORDS),
            { [`**/${rng.pick(IDENT_WORDS)}`]: true },
            [rng.pick(IDENT_WORDS), rng.pick(IDENT_WORDS)],
          ]),
        ]),
      );
  }
}

/** A JSON array of values from `make` of about `approxChars` units when pretty-printed. */
function jsonArrayOf(rng, approxChars, make) {
  const items = [];
  let length = 0;
  while (length < approxChars) {
    const item = make(rng);
    items.push(item);
    length += JSON.stringify(item, null, 2).length + 4;
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// The kinds

const gen = {
  english(seed, n) {
    return prose(EN_COMMON, { rare: EN_RARE })(seed, n, "english");
  },
  german(seed, n) {
    return prose(DE_WORDS)(seed, n, "german");
  },
  french(seed, n) {
    return prose(FR_WORDS)(seed, n, "french");
  },
  spanish(seed, n) {
    return prose(ES_WORDS, { end: [".", ".", "?", "!"] })(seed, n, "spanish");
  },
  polishCzech(seed, n) {
    return prose(PL_CS_WORDS)(seed, n, "polish");
  },
  typescript(seed, n) {
    return build(new Rng(seed, "ts"), n, (rng) => `${tsBlock(rng)}\n`);
  },
  python(seed, n) {
    return build(new Rng(seed, "py"), n, pyBlock);
  },
  go(seed, n) {
    return build(new Rng(seed, "go"), n, goBlock);
  },
  rust(seed, n) {
    return build(new Rng(seed, "rust"), n, rustBlock);
  },
  minifiedJs(seed, n) {
    return build(new Rng(seed, "minjs"), n, (rng) => minify(tsBlock(rng)));
  },
  jsonMinified(seed, n) {
    const rng = new Rng(seed, "jsonmin");
    const items = [];
    let len = 0;
    while (len < n) {
      const o = jsonObject(rng);
      items.push(o);
      len += JSON.stringify(o).length + 1;
    }
    return JSON.stringify({ data: items, total: items.length });
  },
  jsonPretty(seed, n) {
    const rng = new Rng(seed, "jsonpretty");
    const items = [];
    let len = 0;
    while (len < n) {
      const o = jsonObject(rng);
      items.push(o);
      len += JSON.stringify(o, null, 2).length + 6;
    }
    return JSON.stringify({ data: items, total: items.length }, null, 2);
  },
  jsonData(seed, n) {
    return JSON.stringify(jsonArrayOf(new Rng(seed, "jsondata"), n, dataRecord), null, 2);
  },
  jsonConfig(seed, n) {
    return JSON.stringify(jsonArrayOf(new Rng(seed, "jsonconfig"), n, configDocument), null, 2);
  },
  jsonl(seed, n) {
    return build(new Rng(seed, "jsonl"), n, (rng) => `${JSON.stringify(jsonObject(rng))}\n`);
  },
  csvNumbers(seed, n) {
    const rng = new Rng(seed, "csvnum");
    const cols = 8;
    const header = `${Array.from({ length: cols }, (_, i) => `col${i}`).join(",")}\n`;
    return (
      header +
      build(rng, n, (r) => {
        const row = [];
        for (let i = 0; i < cols; i++) {
          const k = r.int(4);
          row.push(
            k === 0
              ? String(r.int(1e9))
              : k === 1
                ? (r.next() * 1000 - 500).toFixed(r.range(1, 6))
                : k === 2
                  ? String(r.int(100))
                  : (r.next() * 1e6).toExponential(3),
          );
        }
        return `${row.join(",")}\n`;
      })
    );
  },
  csvMixed(seed, n) {
    const rng = new Rng(seed, "csvmixed");
    return (
      "id,name,email,city,joined,balance,note\n" +
      build(rng, n, (r) => {
        const note = sentence(r, EN_COMMON).slice(0, r.range(10, 70));
        return `${r.int(100000)},${r.pick(FIRST_NAMES)} ${r.pick(LAST_NAMES)},${emailOf(r)},${r.pick(CITIES)},${isoTime(r).slice(0, 10)},${(r.next() * 10000).toFixed(2)},"${note.replace(/"/g, '""')}"\n`;
      })
    );
  },
  markdownProse(seed, n) {
    return build(new Rng(seed, "mdprose"), n, (rng) => {
      switch (rng.int(6)) {
        case 0:
          return `## ${capitalize(camel(rng, 1))} ${rng.pick(EN_COMMON)} ${rng.pick(EN_COMMON)}\n\n`;
        case 1:
          return `${Array.from({ length: rng.range(2, 5) }, () => `- **${rng.pick(EN_COMMON)}**: ${sentence(rng, EN_COMMON)}`).join("\n")}\n\n`;
        case 2:
          return `See [the ${rng.pick(EN_COMMON)} guide](https://docs.example.com/${rng.pick(IDENT_WORDS)}/${rng.pick(IDENT_WORDS)}#${rng.pick(IDENT_WORDS)}) and run \`npm run ${rng.pick(IDENT_WORDS)}\`. ${sentence(rng, EN_COMMON)}\n\n`;
        case 3:
          return `\`\`\`ts\n${tsBlock(rng)}\`\`\`\n\n`;
        case 4:
          return `> ${sentence(rng, EN_COMMON)}\n\n`;
        default:
          return `${paragraph(rng, EN_COMMON, { rare: EN_RARE })}\n\n`;
      }
    });
  },
  markdownTable(seed, n) {
    return build(new Rng(seed, "mdtable"), n, (rng) => {
      const cols = rng.range(3, 7);
      const widths = Array.from({ length: cols }, () => rng.range(6, 18));
      const cell = (w) => {
        const k = rng.int(4);
        const s =
          k === 0
            ? String(rng.int(100000))
            : k === 1
              ? `${rng.pick(EN_COMMON)} ${rng.pick(EN_COMMON)}`
              : k === 2
                ? `\`${camel(rng)}\``
                : rng.pick(["✅", "❌", "yes", "no", "n/a", "—"]);
        return ` ${s.padEnd(w)} `;
      };
      let t = `|${widths.map((w) => ` ${capitalize(rng.pick(IDENT_WORDS)).padEnd(w)} `).join("|")}|\n`;
      t += `|${widths.map((w) => `${rng.chance(0.3) ? ":" : "-"}${"-".repeat(w)}${rng.chance(0.3) ? ":" : "-"}`).join("|")}|\n`;
      const rows = rng.range(4, 15);
      for (let i = 0; i < rows; i++) t += `|${widths.map(cell).join("|")}|\n`;
      return `${t}\n`;
    });
  },
  logs(seed, n) {
    return build(new Rng(seed, "logs"), n, (rng) => {
      const level = rng.pick(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]);
      return `${isoTime(rng)} ${level.padEnd(5)} [${rng.pick(IDENT_WORDS)}-${rng.pick(["worker", "api", "db"])}-${rng.int(16)}] trace_id=${rng.hex(32)} span_id=${rng.hex(16)} request_id=${rng.uuid()} user=${rng.uuid()} method=${rng.pick(["GET", "POST", "PUT", "DELETE"])} path=/api/v1/${rng.pick(IDENT_WORDS)}s/${rng.int(100000)} status=${rng.pick([200, 200, 201, 204, 400, 404, 500])} duration_ms=${(rng.next() * 500).toFixed(3)} msg="${comment(rng)}"\n`;
    });
  },
  stackTraces(seed, n) {
    return build(new Rng(seed, "stack"), n, (rng) => {
      switch (rng.int(3)) {
        case 0: {
          let s = `Exception in thread "main" java.lang.${rng.pick(["NullPointerException", "IllegalStateException", "IndexOutOfBoundsException"])}: ${comment(rng)}\n`;
          for (let i = 0; i < rng.range(5, 15); i++)
            s += `\tat com.${rng.pick(IDENT_WORDS)}.${rng.pick(IDENT_WORDS)}.${capitalize(camel(rng))}.${camel(rng)}(${capitalize(camel(rng))}.java:${rng.int(2000)})\n`;
          return `${s}\t... ${rng.int(40)} more\n`;
        }
        case 1: {
          let s = "Traceback (most recent call last):\n";
          for (let i = 0; i < rng.range(3, 10); i++)
            s += `  File "/usr/lib/python3.12/site-packages/${snake(rng)}/${snake(rng, 1)}.py", line ${rng.int(3000)}, in ${snake(rng)}\n    ${snake(rng)} = self.${snake(rng)}(${snake(rng, 1)}, **kwargs)\n`;
          return `${s}${rng.pick(["KeyError", "ValueError", "TypeError"])}: '${comment(rng)}'\n`;
        }
        default: {
          let s = `TypeError: Cannot read properties of undefined (reading '${camel(rng)}')\n`;
          for (let i = 0; i < rng.range(4, 12); i++)
            s += `    at ${capitalize(camel(rng))}.${camel(rng)} (file:///home/${rng.pick(FIRST_NAMES).toLowerCase()}/src/${rng.pick(IDENT_WORDS)}/${camel(rng)}.js:${rng.int(900)}:${rng.int(80)})\n`;
          return s;
        }
      }
    });
  },
  hexdump(seed, n) {
    let offset = 0;
    return build(new Rng(seed, "hexdump"), n, (rng) => {
      const bytes = rng.bytes(16);
      let hex = "";
      let ascii = "";
      for (let i = 0; i < 16; i++) {
        hex += bytes[i].toString(16).padStart(2, "0") + (i % 2 === 1 ? " " : "");
        ascii += bytes[i] >= 0x20 && bytes[i] < 0x7f ? String.fromCharCode(bytes[i]) : ".";
      }
      const line = `${offset.toString(16).padStart(8, "0")}: ${hex} ${ascii}\n`;
      offset += 16;
      return line;
    });
  },
  base64(seed, n) {
    const rng = new Rng(seed, "base64");
    const b = base64(rng.bytes(Math.ceil((n * 3) / 4)));
    return rng.chance(0.5) ? b : b.replace(/(.{76})/g, "$1\n");
  },
  urlsPaths(seed, n) {
    return build(new Rng(seed, "urls"), n, (rng) => {
      switch (rng.int(4)) {
        case 0:
          return `https://${rng.pick(["api", "www", "cdn", "docs"])}.${rng.pick(IDENT_WORDS)}${rng.pick([".com", ".io", ".org", ".dev"])}/${rng.pick(IDENT_WORDS)}/${rng.pick(IDENT_WORDS)}?${snake(rng, 1)}=${rng.int(1000)}&${camel(rng, 1)}=${rng.pick(IDENT_WORDS)}&utm_source=${rng.pick(IDENT_WORDS)}\n`;
        case 1:
          return `/home/${rng.pick(FIRST_NAMES).toLowerCase()}/projects/${rng.pick(IDENT_WORDS)}-${rng.pick(IDENT_WORDS)}/src/${rng.pick(IDENT_WORDS)}/${camel(rng)}.${rng.pick(["ts", "js", "py", "go", "rs", "md"])}\n`;
        case 2:
          return `C:\\Users\\${rng.pick(FIRST_NAMES)}\\AppData\\Local\\${capitalize(rng.pick(IDENT_WORDS))}\\${camel(rng)}.dll\n`;
        default:
          return `https://github.com/${rng.pick(IDENT_WORDS)}/${camel(rng)}/blob/${rng.hex(40)}/src/${snake(rng)}.ts#L${rng.int(500)}-L${rng.int(500) + 500}\n`;
      }
    });
  },
  sql(seed, n) {
    return build(new Rng(seed, "sql"), n, (rng) => {
      const t = snake(rng, rng.range(1, 2));
      switch (rng.int(3)) {
        case 0:
          return `CREATE TABLE IF NOT EXISTS ${t} (\n  id BIGSERIAL PRIMARY KEY,\n${Array.from({ length: rng.range(2, 6) }, () => `  ${snake(rng)} ${rng.pick(["TEXT NOT NULL", "INTEGER DEFAULT 0", "TIMESTAMPTZ", "VARCHAR(255)", "JSONB", "NUMERIC(12, 2)"])}`).join(",\n")}\n);\n\n`;
        case 1:
          return `SELECT ${snake(rng)}.id, ${snake(rng)}.${snake(rng, 1)}, COUNT(*) AS ${snake(rng, 1)}_count\nFROM ${t} AS t\nLEFT JOIN ${snake(rng)} u ON u.id = t.${snake(rng, 1)}_id\nWHERE t.created_at > '${isoTime(rng).slice(0, 10)}' AND t.${snake(rng, 1)} IN (${rng.int(100)}, ${rng.int(100)}, ${rng.int(100)})\nGROUP BY 1, 2\nORDER BY ${snake(rng, 1)}_count DESC\nLIMIT ${rng.int(1000)};\n\n`;
        default:
          return `INSERT INTO ${t} (name, email, amount) VALUES ('${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES).replace("'", "''")}', '${emailOf(rng)}', ${(rng.next() * 1000).toFixed(2)});\n`;
      }
    });
  },
  html(seed, n) {
    return build(new Rng(seed, "html"), n, (rng) => {
      const cls = `${rng.pick(IDENT_WORDS)}-${rng.pick(IDENT_WORDS)}`;
      return `<div class="${cls} ${rng.pick(["flex", "grid", "mt-4", "px-2", "text-sm"])}" id="${camel(rng)}" data-${rng.pick(IDENT_WORDS)}="${rng.int(1000)}">\n  <h2>${sentence(rng, EN_COMMON).slice(0, 40)}</h2>\n  <p>${sentence(rng, EN_COMMON)} <a href="/${rng.pick(IDENT_WORDS)}/${rng.int(100)}?ref=${rng.pick(IDENT_WORDS)}&amp;lang=en">${rng.pick(EN_COMMON)}</a> &mdash; &nbsp;${rng.int(100)}&nbsp;%</p>\n  <img src="/static/${rng.hex(12)}.png" alt="${rng.pick(EN_COMMON)}" width="${rng.int(800)}" height="${rng.int(600)}"/>\n</div>\n`;
    });
  },
  yaml(seed, n) {
    return build(new Rng(seed, "yaml"), n, (rng) => {
      const name = `${rng.pick(IDENT_WORDS)}-${rng.pick(IDENT_WORDS)}`;
      return `---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  labels:\n    app.kubernetes.io/name: ${name}\n    tier: ${rng.pick(["backend", "frontend", "cache"])}\nspec:\n  replicas: ${rng.range(1, 9)}\n  template:\n    spec:\n      containers:\n        - name: ${rng.pick(IDENT_WORDS)}\n          image: registry.example.com/${name}:${rng.range(1, 3)}.${rng.int(20)}.${rng.int(20)}@sha256:${rng.hex(64)}\n          args: ["--${rng.pick(IDENT_WORDS)}=${rng.int(100)}", "--verbose"]\n          env:\n            - name: ${snake(rng).toUpperCase()}\n              value: "${stringLiteral(rng)}"\n          resources:\n            limits: { cpu: ${rng.int(4000)}m, memory: ${rng.int(4096)}Mi }\n          # ${comment(rng)}\n`;
    });
  },
  latex(seed, n) {
    return build(new Rng(seed, "latex"), n, (rng) => {
      const g = () =>
        rng.pick(["\\alpha", "\\beta", "\\gamma", "\\lambda", "\\sigma", "\\theta", "x", "y", "n"]);
      switch (rng.int(3)) {
        case 0:
          return `\\section{${capitalize(rng.pick(EN_COMMON))} ${rng.pick(EN_COMMON)}}\\label{sec:${rng.pick(IDENT_WORDS)}}\n${paragraph(rng, EN_COMMON, { rare: EN_RARE })} See~\\cite{${rng.pick(LAST_NAMES).toLowerCase()}${rng.range(1990, 2024)}} and Eq.~\\eqref{eq:${rng.int(50)}}.\n\n`;
        case 1:
          return `\\begin{equation}\\label{eq:${rng.int(50)}}\n  ${g()}_{${rng.int(10)}} = \\frac{\\partial ${g()}}{\\partial ${g()}} + \\sum_{i=1}^{N} ${g()}_i^{${rng.int(4)}} \\cdot \\int_0^\\infty e^{-${g()} t}\\,\\mathrm{d}t\n\\end{equation}\n`;
        default:
          return `\\begin{itemize}\n  \\item \\textbf{${rng.pick(EN_COMMON)}}: ${sentence(rng, EN_COMMON)} ($${g()} \\leq ${rng.int(100)}$)\n  \\item \\emph{${rng.pick(EN_COMMON)}} \\\\ ${sentence(rng, EN_COMMON)}\n\\end{itemize}\n`;
      }
    });
  },
  diff(seed, n) {
    return build(new Rng(seed, "diff"), n, (rng) => {
      const file = `src/${rng.pick(IDENT_WORDS)}/${camel(rng)}.ts`;
      let s = `diff --git a/${file} b/${file}\nindex ${rng.hex(7)}..${rng.hex(7)} 100644\n--- a/${file}\n+++ b/${file}\n@@ -${rng.int(300)},${rng.range(5, 12)} +${rng.int(300)},${rng.range(5, 12)} @@ export class ${capitalize(camel(rng))} {\n`;
      const lines = tsBlock(rng).split("\n");
      for (const line of lines) s += `${rng.pick([" ", " ", " ", "+", "-"])}${line}\n`;
      return s;
    });
  },
  chinese(seed, n) {
    return unspacedProse(ZH_WORDS, ZH_PUNCT, "。")(seed, n, "chinese");
  },
  japanese(seed, n) {
    return unspacedProse(JA_WORDS, ["、", "、", "「", "」", "・"], "。")(seed, n, "japanese");
  },
  korean(seed, n) {
    return prose(KO_WORDS, { pseudo: 0, names: 0, end: [".", ".", "?"] })(seed, n, "korean");
  },
  cjkRare(seed, n) {
    return build(new Rng(seed, "cjkrare"), n, (rng) => {
      let s = "";
      const len = rng.range(5, 30);
      for (let i = 0; i < len; i++)
        s += rng.chance(0.5)
          ? randomAstral(rng, 0x3400, 0x4dbf)
          : randomAstral(rng, 0x20000, 0x2a6df);
      return s + rng.pick(["，", "。", "\n", " "]);
    });
  },
  cyrillic(seed, n) {
    return prose(RU_WORDS, { pseudo: 0.01 })(seed, n, "cyrillic");
  },
  arabicHebrew(seed, n) {
    const rng = new Rng(seed, "arhe-switch");
    return build(rng, n, (r) =>
      r.chance(0.5)
        ? `${paragraph(r, AR_WORDS, { pseudo: 0, names: 0, end: [".", "؟"] }).replace(/,/g, "،")}\n\n`
        : `${paragraph(r, HE_WORDS, { pseudo: 0, names: 0 })}\n\n`,
    );
  },
  vietnamese(seed, n) {
    return prose(VI_WORDS, { pseudo: 0.01 })(seed, n, "vietnamese");
  },
  greek(seed, n) {
    return prose(EL_WORDS, { pseudo: 0.01, end: [".", ";"] })(seed, n, "greek");
  },
  georgianArmenian(seed, n) {
    return build(new Rng(seed, "kahy"), n, (r) =>
      r.chance(0.5)
        ? `${paragraph(r, KA_WORDS, { pseudo: 0, names: 0 })}\n\n`
        : `${paragraph(r, HY_WORDS, { pseudo: 0, names: 0, end: ["։", "։", "՞"] })}\n\n`,
    );
  },
  devanagariThai(seed, n) {
    const thai = unspacedProse(TH_WORDS, [" ", " ", "ๆ"], " ");
    return build(new Rng(seed, "hith"), n, (r) =>
      r.chance(0.5)
        ? `${paragraph(r, HI_WORDS, { pseudo: 0, names: 0, end: ["।", "।", "?"] })}\n\n`
        : `${thai(r.int(1 << 30), 300, "thai")}\n\n`,
    );
  },
  hindi(seed, n) {
    return prose(HI_PROSE_WORDS, { pseudo: 0, names: 0.01, end: ["।", "।", "।", "?"] })(
      seed,
      n,
      "hindi",
    );
  },
  thai(seed, n) {
    return unspacedProse(TH_PROSE_WORDS, [" ", " ", " ", "ๆ", "\n"], " ")(seed, n, "thai");
  },
  bulgarian(seed, n) {
    return prose(BG_WORDS, { pseudo: 0.01 })(seed, n, "bulgarian");
  },
  persian(seed, n) {
    return prose(FA_WORDS, { pseudo: 0, names: 0, end: [".", ".", "؟"] })(seed, n, "persian")
      .replace(/,/g, "،")
      .replace(/[0-9]/g, (d) => String.fromCharCode(0x6f0 + Number(d)));
  },
  deepIndentation(seed, n) {
    return build(new Rng(seed, "deepindent"), n, (rng) => {
      const unit = rng.pick(["  ", "    ", "\t", "        "]);
      const depth = rng.range(0, 24);
      const lines = [];
      const count = rng.range(3, 12);
      for (let i = 0; i < count; i++) {
        const d = Math.max(0, depth + rng.range(-2, 2));
        const pad = unit.repeat(d);
        switch (rng.int(6)) {
          case 0:
            lines.push(
              `${pad}if (${camel(rng)} ${rng.pick(["===", "!==", ">", "<="])} ${rng.int(100)}) {`,
            );
            break;
          case 1:
            lines.push(`${pad}"${camel(rng)}": ${JSON.stringify(jsonValue(rng, 3))},`);
            break;
          case 2:
            lines.push(
              `${pad}<${rng.pick(["div", "span", "li", "td"])} class="${rng.pick(IDENT_WORDS)}">`,
            );
            break;
          case 3:
            lines.push(rng.chance(0.5) ? pad : "");
            break;
          case 4:
            lines.push(`${pad}${rng.pick(["}", "]", ")", "});", "</div>", "end"])}`);
            break;
          default:
            lines.push(
              `${pad}${snake(rng)} = ${snake(rng)}(${rng.int(10)})${" ".repeat(rng.int(3) === 0 ? rng.range(1, 12) : 0)}`,
            );
        }
      }
      return `${lines.join("\n")}\n`;
    });
  },
  emojiChat(seed, n) {
    const emoji = [
      "😀",
      "😂",
      "🤣",
      "😍",
      "🥰",
      "😎",
      "🤔",
      "🙄",
      "😭",
      "😡",
      "👍",
      "👎",
      "👏",
      "🙏",
      "💪",
      "🔥",
      "✨",
      "🎉",
      "❤️",
      "💔",
      "💯",
      "✅",
      "❌",
      "⚠️",
      "🚀",
      "🌟",
      "🍕",
      "🍺",
      "☕",
      "🐶",
      "🐱",
      "🦄",
      "🌈",
      "☀️",
      "🌧️",
      "👍🏽",
      "👋🏿",
      "👨‍👩‍👧‍👦",
      "🧑‍💻",
      "🏳️‍🌈",
      "🇺🇸",
      "🇯🇵",
      "🇫🇷",
      "🇩🇪",
      "🇧🇷",
    ];
    return build(new Rng(seed, "emoji"), n, (rng) => {
      let msg = `[${isoTime(rng).slice(11, 16)}] ${rng.pick(FIRST_NAMES)}: `;
      const words = rng.range(2, 12);
      for (let i = 0; i < words; i++) {
        msg += `${rng.zipf(EN_COMMON)} `;
        if (rng.chance(0.35)) {
          const k = rng.range(1, 4);
          for (let j = 0; j < k; j++)
            msg += rng.chance(0.7)
              ? rng.pick(emoji)
              : randomAstral(
                  rng,
                  rng.chance(0.5) ? 0x1f300 : 0x1f900,
                  rng.chance(0.5) ? 0x1f5ff : 0x1f9ff,
                );
          msg += " ";
        }
      }
      return `${msg.trim()}\n`;
    });
  },
  escapes(seed, n) {
    return build(new Rng(seed, "escapes"), n, (rng) => {
      switch (rng.int(6)) {
        case 0:
          return `"${rng.pick(IDENT_WORDS)}": "She said \\"${rng.pick(EN_COMMON)}\\" and left\\n"\n`;
        case 1:
          return `C:\\\\Program Files\\\\${capitalize(rng.pick(IDENT_WORDS))}\\\\${camel(rng)}.exe "${rng.pick(IDENT_WORDS)}" '${rng.pick(IDENT_WORDS)}'\n`;
        case 2:
          return `/^(?:[a-z0-9!#$%&'*+/=?^_\`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_\`{|}~-]+)*)@"${rng.int(10)}"$/\n`;
        case 3: {
          let s = "";
          for (let i = 0; i < rng.range(5, 30); i++)
            s += rng.chance(0.5)
              ? String.fromCharCode(rng.int(32))
              : rng.pick(['"', "\\", "'", "\t", "\r\n", "\x7f", "`"]);
          return `${s}${rng.pick(EN_COMMON)}\n`;
        }
        case 4:
          return `${JSON.stringify(JSON.stringify({ [camel(rng)]: stringLiteral(rng), nested: { q: '"x"', b: "\\" } }))}\n`;
        default:
          return `\x1b[${rng.int(50)}m${rng.pick(EN_COMMON)}\x1b[0m\t"${rng.pick(EN_COMMON)}"\t\\${rng.pick(["n", "t", "x41", "u00e9", "0"])}\n`;
      }
    });
  },
  whitespace(seed, n) {
    return build(new Rng(seed, "ws"), n, (rng) => {
      const indent = rng.chance(0.5) ? " ".repeat(rng.range(0, 40)) : "\t".repeat(rng.range(0, 8));
      const trailing = rng.chance(0.3) ? " ".repeat(rng.range(1, 10)) : "";
      const blank = rng.chance(0.2) ? "\n".repeat(rng.range(1, 4)) : "";
      const body = rng.chance(0.5)
        ? `${camel(rng)}${" ".repeat(rng.range(1, 30))}= ${rng.int(1000)};`
        : `${rng.pick(EN_COMMON)}\t\t${rng.pick(EN_COMMON)}\t${rng.int(100)}`;
      return `${indent}${body}${trailing}\n${blank}`;
    });
  },
  repeated(seed, n) {
    const units = [
      "a",
      "z",
      "Q",
      "0",
      "7",
      "-",
      "=",
      "*",
      "#",
      ".",
      " ",
      "\t",
      "\n",
      '"',
      "\\",
      "~",
      "é",
      "ж",
      "中",
      "😀",
      "ab",
      "01",
      "xo",
      "-=",
      "ha",
      "𠀀",
    ];
    return build(new Rng(seed, "rep"), n, (rng) => {
      const u = rng.pick(units);
      return `${u.repeat(rng.range(8, 400))}\n`;
    });
  },
  randomAscii(seed, n) {
    let printable = "";
    for (let c = 0x21; c < 0x7f; c++) printable += String.fromCharCode(c);
    return build(
      new Rng(seed, "rndascii"),
      n,
      (rng) => `${rng.chars(printable, rng.range(8, 64))}\n`,
    );
  },
  numbersSpaced(seed, n) {
    return build(new Rng(seed, "numspaced"), n, (rng) => {
      if (rng.chance(0.5)) {
        const cols = rng.range(3, 10);
        const row = [];
        for (let i = 0; i < cols; i++)
          row.push(
            rng.chance(0.5)
              ? String(rng.int(10 ** rng.range(1, 6)))
              : (rng.next() * 200 - 100).toFixed(rng.range(1, 4)),
          );
        return `${row.join(rng.pick([" ", "  ", "\t"]))}\n`;
      }
      return `${rng.pick(["root", "www-data", "postgres", "node"]).padEnd(9)} ${String(rng.int(99999)).padStart(6)} ${(rng.next() * 100).toFixed(1).padStart(5)} ${(rng.next() * 10).toFixed(1).padStart(4)} ${String(rng.int(9999999)).padStart(8)} ${String(rng.int(999999)).padStart(7)} pts/${rng.int(9)}    ${rng.pick(["Ss", "R+", "S", "Sl"]).padEnd(4)} ${String(rng.int(24)).padStart(2, "0")}:${String(rng.int(60)).padStart(2, "0")}   ${rng.int(60)}:${String(rng.int(60)).padStart(2, "0")} ${rng.pick(["node server.js", "/usr/bin/python3 -m http.server 8080", "postgres: writer", "bash"])}\n`;
    });
  },
  randomIds(seed, n) {
    const b32 = "abcdefghijklmnopqrstuvwxyz234567";
    const lower = "abcdefghijklmnopqrstuvwxyz";
    return build(new Rng(seed, "ids"), n, (rng) => {
      switch (rng.int(5)) {
        case 0:
          return `${rng.chars(`${ALNUM}_-`, 21)}\n`;
        case 1:
          return `ipfs://baf${rng.chars(b32, 56)}\n`;
        case 2:
          return `${rng.chars(lower, rng.range(6, 16))}.${rng.pick(["com", "net", "io"])}\n`;
        case 3:
          return `sk_live_${rng.chars(ALNUM, 32)}\n`;
        default:
          return `${rng.pick(IDENT_WORDS)}-${rng.chars(lower, 5)}-${rng.chars(lower, 5)}\n`;
      }
    });
  },
  codeWithCjk(seed, n) {
    return build(new Rng(seed, "codecjk"), n, (rng) => {
      const zh = unspacedProse(ZH_WORDS, ZH_PUNCT, "。")(rng.int(1 << 30), rng.range(10, 60), "c");
      return `// ${zh.trim()}\nconst ${camel(rng)} = "${unspacedProse(JA_WORDS, ["、"], "")(rng.int(1 << 30), rng.range(4, 20), "j")}"; // ${rng.int(100)}\n${tsBlock(rng)}\n`;
    });
  },
};

/**
 * The kinds most pages are made of (code, JSON, logs, English prose): the waste target is about these.
 */
export const COMMON_KINDS = [
  "english-prose",
  "typescript",
  "python",
  "go",
  "rust",
  "minified-js",
  "json-minified",
  "json-pretty",
  "json-data",
  "json-config",
  "jsonl",
  "logs",
];

// How each kind is laid out in files of its kind (see LAYOUTS): code by its indentation unit,
// JSON by its formatting, prose that can be hard-wrapped at spaces; everything by its line ends.
const CODE = (unit, tabs = true) => ({ family: "code", unit, tabs });
const JSON_DOC = (form) => ({ family: "json", form });
const PROSE = { family: "prose" };
const PLAIN = { family: "plain" };

/**
 * Every kind. `heldOut` kinds were excluded while tuning the `default` estimator's constants.
 * @type {ReadonlyArray<{name: string, heldOut: boolean, description: string, layout: {family: string, unit?: string, tabs?: boolean, form?: string}, generate: (seed: number, approxChars: number) => string}>}
 */
export const KINDS = [
  ["english-prose", false, "English prose, with rare words, names and numbers", gen.english, PROSE],
  ["german-prose", false, "German prose (umlauts, ß, long compounds)", gen.german, PROSE],
  ["french-prose", false, "French prose (accents, elisions)", gen.french, PROSE],
  ["spanish-prose", true, "Spanish prose", gen.spanish, PROSE],
  [
    "polish-czech-prose",
    false,
    "Polish and Czech prose (Latin Extended-A)",
    gen.polishCzech,
    PROSE,
  ],
  ["typescript", false, "TypeScript source", gen.typescript, CODE("  ")],
  ["python", false, "Python source", gen.python, CODE("    ")],
  ["go", false, "Go source (tabs)", gen.go, CODE("\t")],
  ["rust", true, "Rust source", gen.rust, CODE("    ")],
  ["minified-js", true, "minified JavaScript", gen.minifiedJs, PLAIN],
  ["json-minified", false, "minified JSON", gen.jsonMinified, JSON_DOC("minified")],
  ["json-pretty", false, "pretty-printed JSON (2 spaces)", gen.jsonPretty, JSON_DOC("pretty-2")],
  [
    "json-data",
    false,
    "JSON data as JSON.stringify(x, null, 2) writes it: numbers, booleans, nulls, number arrays, matrices, empty containers",
    gen.jsonData,
    JSON_DOC("pretty-2"),
  ],
  [
    "json-config",
    false,
    "JSON configuration: package.json, package-lock.json entries, tsconfig, editor settings",
    gen.jsonConfig,
    JSON_DOC("pretty-2"),
  ],
  ["jsonl", true, "JSON Lines", gen.jsonl, PLAIN],
  ["csv-numbers", false, "CSV of integers, decimals and exponents", gen.csvNumbers, PLAIN],
  [
    "numbers-spaced",
    false,
    "space- and tab-separated numbers, ps-style tables",
    gen.numbersSpaced,
    PLAIN,
  ],
  ["csv-mixed", false, "CSV of names, emails, cities, dates, notes", gen.csvMixed, PLAIN],
  [
    "markdown-prose",
    false,
    "Markdown: headings, lists, links, code fences",
    gen.markdownProse,
    PROSE,
  ],
  ["markdown-table", false, "Markdown pipe tables, padded cells", gen.markdownTable, PLAIN],
  ["logs", false, "log lines with UUIDs and hex trace ids", gen.logs, PLAIN],
  ["stack-traces", false, "Java, Python and Node stack traces", gen.stackTraces, PLAIN],
  ["hexdump", false, "xxd-style hex dump", gen.hexdump, PLAIN],
  ["base64", false, "base64 of random bytes", gen.base64, PLAIN],
  ["urls-paths", false, "URLs with query strings, Unix and Windows paths", gen.urlsPaths, PLAIN],
  ["sql", true, "SQL DDL and queries", gen.sql, CODE("  ")],
  ["html", false, "HTML with attributes and entities", gen.html, CODE("  ")],
  ["yaml", true, "YAML manifests", gen.yaml, CODE("  ", false)],
  ["chinese", false, "Chinese prose", gen.chinese, PLAIN],
  ["japanese", false, "Japanese (kanji, hiragana, katakana)", gen.japanese, PLAIN],
  ["korean", false, "Korean (Hangul)", gen.korean, PROSE],
  ["cjk-rare", false, "random rare CJK: Extension A and B", gen.cjkRare, PLAIN],
  ["cyrillic", false, "Russian and Ukrainian prose", gen.cyrillic, PROSE],
  ["arabic-hebrew", false, "Arabic and Hebrew prose", gen.arabicHebrew, PROSE],
  ["vietnamese", false, "Vietnamese prose (stacked diacritics)", gen.vietnamese, PROSE],
  ["greek", false, "Greek prose", gen.greek, PROSE],
  ["georgian-armenian", false, "Georgian and Armenian prose", gen.georgianArmenian, PROSE],
  ["devanagari-thai", false, "Hindi (Devanagari) and Thai", gen.devanagariThai, PROSE],
  ["hindi-prose", false, "Hindi prose (Devanagari, conjuncts, nukta)", gen.hindi, PROSE],
  ["thai-prose", false, "Thai prose (no spaces between words, tone marks)", gen.thai, PLAIN],
  [
    "bulgarian-serbian-prose",
    false,
    "Bulgarian and Serbian prose (Cyrillic)",
    gen.bulgarian,
    PROSE,
  ],
  [
    "persian-prose",
    false,
    "Persian prose (Arabic script, Persian digits, ZWNJ)",
    gen.persian,
    PROSE,
  ],
  [
    "emoji-chat",
    false,
    "chat lines with emoji, skin tones, ZWJ sequences, flags",
    gen.emojiChat,
    PLAIN,
  ],
  ["escapes", false, "quotes, backslashes, control characters, ANSI codes", gen.escapes, PLAIN],
  ["whitespace", false, "indentation, tabs, aligned columns, blank lines", gen.whitespace, PLAIN],
  [
    "deep-indentation",
    false,
    "code, JSON and markup nested 0–26 levels deep (2, 4, 8 spaces or tabs), blank and whitespace-only lines",
    gen.deepIndentation,
    PLAIN,
  ],
  ["repeated", false, "long runs of one character or pair", gen.repeated, PLAIN],
  ["random-ascii", false, "random printable ASCII (keys, passwords)", gen.randomAscii, PLAIN],
  [
    "random-ids",
    false,
    "random ids: nanoid, base32, random lowercase names, API keys",
    gen.randomIds,
    PLAIN,
  ],
  ["latex", true, "LaTeX with math", gen.latex, CODE("  ")],
  ["diff", false, "unified diffs of TypeScript", gen.diff, PLAIN],
  [
    "code-with-cjk",
    true,
    "TypeScript with Chinese comments and Japanese strings",
    gen.codeWithCjk,
    CODE("  "),
  ],
].map(([name, heldOut, description, generate, layout]) =>
  Object.freeze({
    name,
    heldOut,
    description,
    layout,
    generate: (seed, n) => generate(seed, n),
  }),
);

// ---------------------------------------------------------------------------------------------
// Layouts

/** Indentation units by layout name, and back. */
const INDENT_UNITS = { "indent-2": "  ", "indent-4": "    ", "indent-tab": "\t" };
const PRETTY_INDENTS = { "pretty-2": 2, "pretty-4": 4, "pretty-tab": "\t" };
/** Columns prose is hard-wrapped at, one picked per file (editors, `fmt`, git commit messages). */
const WRAP_COLUMNS = [72, 76, 80];

/** The form a kind's generator writes (its native layout, before line ends). */
function nativeForm(layout) {
  if (layout.family === "code") {
    return Object.keys(INDENT_UNITS).find((k) => INDENT_UNITS[k] === layout.unit);
  }
  if (layout.family === "json") return layout.form;
  return layout.family === "prose" ? "paragraphs" : "as-generated";
}

/** Every form a kind can take, native first. */
function formsOf(layout) {
  const native = nativeForm(layout);
  let forms = [native];
  if (layout.family === "code") {
    forms = Object.keys(INDENT_UNITS).filter((k) => layout.tabs || k !== "indent-tab");
  } else if (layout.family === "json") {
    forms = ["minified", ...Object.keys(PRETTY_INDENTS)];
  } else if (layout.family === "prose") {
    forms = ["paragraphs", "wrapped"];
  }
  return [native, ...forms.filter((f) => f !== native)];
}

/** Leading whitespace of every line re-expressed in `to`, one level per `from` unit. */
function reindent(text, from, to) {
  return text.replace(/^[ \t]+/gm, (lead) => {
    let levels = 0;
    let at = 0;
    while (lead.startsWith(from, at)) {
      levels++;
      at += from.length;
    }
    return to.repeat(levels) + lead.slice(at);
  });
}

/** Lines longer than `columns` broken at spaces (lines of code, tables and quotes left alone). */
function wrap(text, columns) {
  return text
    .split("\n")
    .map((line) => {
      if (line.length <= columns || /^[\s|`#>]/.test(line)) return line;
      const out = [];
      let current = "";
      for (const word of line.split(" ")) {
        if (current.length > 0 && current.length + 1 + word.length > columns) {
          out.push(current);
          current = word;
        } else {
          current = current.length > 0 ? `${current} ${word}` : word;
        }
      }
      out.push(current);
      return out.join("\n");
    })
    .join("\n");
}

/** `text` (what the kind's generator wrote) in `form`. */
function applyForm(kind, form, text, seed) {
  const { layout } = kind;
  if (form === nativeForm(layout)) return text;
  if (layout.family === "code") return reindent(text, layout.unit, INDENT_UNITS[form]);
  if (layout.family === "json") {
    const value = JSON.parse(text);
    return form === "minified"
      ? JSON.stringify(value)
      : JSON.stringify(value, null, PRETTY_INDENTS[form]);
  }
  if (form === "wrapped") return wrap(text, new Rng(seed, `wrap:${kind.name}`).pick(WRAP_COLUMNS));
  throw new Error(`${kind.name} has no form ${form}`);
}

/**
 * Each kind in the layouts files of its kind come in: code re-indented with 2 spaces, 4 spaces or
 * tabs (YAML: spaces only); JSON minified or pretty-printed with 2 spaces, 4 spaces or tabs;
 * prose as generated (a paragraph per line) or hard-wrapped at 72–80 columns; and each of these
 * with LF and with CRLF line ends (minified JSON has none). The first layout of each kind is its
 * native one (what `generate` writes, LF). `layout` is `form/lf` or `form/crlf`.
 * @type {ReadonlyArray<{name: string, kind: string, form: string, lineEnds: string, layout: string, heldOut: boolean, common: boolean, generate: (seed: number, approxChars: number) => string}>}
 */
export const VARIANTS = KINDS.flatMap((kind) =>
  formsOf(kind.layout).flatMap((form, i) =>
    (form === "minified" ? ["lf"] : ["lf", "crlf"]).map((lineEnds) =>
      Object.freeze({
        name: i === 0 && lineEnds === "lf" ? kind.name : `${kind.name}~${form}~${lineEnds}`,
        kind: kind.name,
        form,
        lineEnds,
        layout: `${form}/${lineEnds}`,
        heldOut: kind.heldOut,
        common: COMMON_KINDS.includes(kind.name),
        generate: (seed, n) => {
          const text = applyForm(kind, form, kind.generate(seed, n), seed);
          return lineEnds === "crlf" ? text.replace(/\r?\n/g, "\r\n") : text;
        },
      }),
    ),
  ),
);

/** Envelope fields shaped like a real page, for in-process simulation: `JSON.stringify` of it is what the model sees. */
export function fakeEnvelope(seed, kindName, content, hasMore) {
  const rng = new Rng(seed, `envelope:${kindName}`);
  return {
    uri: `file:///tmp/pagewise-bench-${rng.chars("abcdefghijklmnopqrstuvwxyz0123456789", 6)}/${kindName}.txt`,
    content,
    version: rng.pick([rng.hex(16), rng.chars(B64URL, 11), `sha256:${rng.hex(64)}`]),
    // as the server's `read` gives it: where the page starts in the file, and the file's size
    position: {
      line: rng.range(1, 4000),
      byte: rng.int(1 << 20),
      size: rng.range(1 << 17, 1 << 21),
    },
    has_more: hasMore,
    next_cursor: hasMore ? rng.chars(B64URL, rng.range(40, 100)) : null,
  };
}
