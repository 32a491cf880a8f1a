//! Rule recognizers for quasi-identifiers no validator covers: street addresses, dates, ages,
//! postcodes, vehicle registrations, honorific titles and nationality/religion/politics (NRP).
//!
//! Cost model: one byte loop finds ASCII digit runs and everything numeric is decided in small
//! bounded windows around each run (anchored regexes, a tiny word tokenizer); one Aho-Corasick
//! pass finds weekday and NRP words; honorifics are checked only at '.' bytes. No step looks
//! further than a few hundred bytes from its trigger, so a scan stays linear.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use regex::Regex;

use super::types::push_rule as push;
use super::types::{ceil_boundary, floor_boundary, Candidate, Recognizer, Tier};

const DETECTOR: &str = "rules";

// ---------------------------------------------------------------------------------------------
// Lexicons (structure words only: street types, months, demonyms; no place names).
// ---------------------------------------------------------------------------------------------

/// Street-type words written before the name ("Via Roma 1", "Rue de Tanger", "ul. Grochowa").
const STREET_PRE: &[&str] = &[
    "via",
    "viale",
    "piazza",
    "piazzale",
    "corso",
    "largo",
    "vicolo",
    "calle",
    "avenida",
    "avda",
    "av",
    "avd",
    "plaza",
    "paseo",
    "camino",
    "carrera",
    "carretera",
    "ronda",
    "rambla",
    "rua",
    "travessa",
    "praça",
    "praca",
    "estrada",
    "alameda",
    "rodovia",
    "rue",
    "avenue",
    "boulevard",
    "bd",
    "bld",
    "bvd",
    "chemin",
    "allée",
    "allee",
    "impasse",
    "quai",
    "route",
    "cours",
    "place",
    "ul",
    "ulica",
    "al",
    "aleja",
    "pl",
    "plac",
    "os",
    "osiedle",
    "ulitsa",
    "prospekt",
    "strada",
    "calea",
    "bulevardul",
    "splaiul",
    "carrer",
    "passeig",
    "avinguda",
    "jalan",
    "jl",
    "λεωφόρος",
    "οδός",
    "πλατεία",
    "leoforos",
    "odos",
    "postbox",
    "postfach",
];

/// Title-case street-type words written after the name ("Baker Street", "Glyn St").
const STREET_POST_EN: &[&str] = &[
    "street",
    "st",
    "avenue",
    "ave",
    "av",
    "road",
    "rd",
    "lane",
    "ln",
    "boulevard",
    "blvd",
    "drive",
    "dr",
    "way",
    "court",
    "ct",
    "place",
    "pl",
    "terrace",
    "tce",
    "close",
    "crescent",
    "cres",
    "square",
    "sq",
    "parkway",
    "pkwy",
    "highway",
    "hwy",
    "circle",
    "cir",
    "trail",
    "row",
    "gardens",
    "grove",
    "hill",
    "hills",
    "park",
    "walk",
    "mews",
    "alley",
    "plaza",
    "loop",
    "turnpike",
    "route",
    "expressway",
    "crossing",
    "crossroad",
    "parade",
    "esplanade",
    "gateway",
    "mall",
    "prairie",
    "forge",
    "forges",
    "flats",
    "point",
    "cove",
    "coves",
    "parks",
    "summit",
    "greens",
    "mill",
    "mills",
    "bridge",
    "forks",
    "dale",
    "extension",
    "extensions",
    "courts",
    "heights",
    "harbor",
    "harbour",
    "haven",
    "hollow",
    "junction",
    "knoll",
    "landing",
    "manor",
    "meadow",
    "meadows",
    "motorway",
    "orchard",
    "oval",
    "pike",
    "plains",
    "ranch",
    "ridge",
    "shore",
    "shores",
    "springs",
    "trace",
    "track",
    "viaduct",
    "vista",
    "wharf",
    "causeway",
    "circuit",
    "creek",
    "crest",
    "estate",
    "estates",
    "expy",
    "falls",
    "ferry",
    "fort",
    "freeway",
    "glen",
    "green",
    "lakes",
    "lodge",
    "mount",
    "overpass",
    "rapids",
    "skyway",
    "squares",
    "stravenue",
    "streets",
    "throughway",
    "tunnel",
    "underpass",
    "valley",
    "villages",
    "wells",
    "straße",
    "strasse",
    "str",
    "weg",
    "platz",
    "allee",
    "gasse",
    "damm",
    "ufer",
];

/// Lower-case street-type words after the name (Nordic, Hungarian, Turkish, Estonian...).
const STREET_POST_LC: &[&str] = &[
    "gate",
    "gata",
    "gatan",
    "gaten",
    "vej",
    "vejen",
    "vei",
    "veien",
    "veg",
    "vegen",
    "gade",
    "stræde",
    "straat",
    "laan",
    "plein",
    "utca",
    "u",
    "út",
    "útja",
    "tér",
    "tere",
    "rkp",
    "krt",
    "körút",
    "sokak",
    "sokağı",
    "caddesi",
    "cad",
    "sk",
    "bulvarı",
    "tee",
    "tänav",
    "mnt",
    "põik",
    "str",
    "straße",
    "strasse",
    "weg",
    "platz",
    "allee",
    "gasse",
    "náměstí",
    "nám",
];

/// Street-type endings glued to the name ("Parijsstraat", "Snellmaninkatu", "Nybyvägen").
const STREET_SUFFIX: &[&str] = &[
    "straße", "strasse", "weg", "platz", "allee", "gasse", "damm", "ufer", "straat", "laan",
    "plein", "gracht", "dijk", "kade", "singel", "steeg", "vej", "vejen", "gade", "stræde", "vei",
    "veien", "vegen", "gata", "gatan", "gaten", "vägen", "väg", "gränd", "torget", "katu", "tie",
    "kuja", "polku", "kaari", "rinne", "utca", "útja", "tänav", "braut", "vegur", "stræti",
    "sokak", "sokağı", "caddesi", "ulica", "ulice",
];

/// Words that start a unit ("Apt. 5"): they end a street name.
const UNIT_WORDS: &[&str] = &[
    "apt",
    "apartment",
    "suite",
    "ste",
    "unit",
    "flat",
    "floor",
    "fl",
    "room",
    "rm",
    "bldg",
    "building",
];

/// Lower-case joining words allowed inside street and place names.
const PARTICLES: &[&str] = &[
    "de", "du", "des", "la", "le", "les", "del", "della", "delle", "dei", "degli", "di", "da",
    "do", "dos", "das", "van", "von", "der", "den", "het", "ten", "ter", "y", "e", "i", "z", "al",
    "el", "d'", "l'", "na", "nad", "pod", "u", "am", "an", "im", "sur", "en",
];

/// Words that end a street name: function words never part of one.
const STOPWORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "in", "on", "at", "to", "for", "with", "from", "by", "is",
    "are", "was", "were", "be", "my", "your", "his", "her", "our", "their", "its", "this", "that",
    "these", "those", "it", "i", "we", "you", "he", "she", "they", "me", "him", "us", "them",
    "not", "no", "but", "if", "so", "as", "then", "than", "there", "here", "when", "where", "what",
    "who", "which", "more", "most", "some", "any", "all", "each", "every", "other", "about",
    "after", "before", "over", "into", "near", "per", "only", "just", "also", "has", "have", "had",
    "during", "since", "until", "will", "would", "can", "could", "should", "may", "might", "must",
];

/// Capitalized words that head numbered things that are not streets ("Table 2", "Windows 10").
const NOT_STREET_HEAD: &[&str] = &[
    "table", "figure", "fig", "chapter", "section", "page", "step", "part", "version", "windows",
    "level", "room", "model", "series", "iphone", "android", "python", "java", "rule", "article",
    "item", "question", "day", "week", "year", "grade", "class", "phase", "stage", "round", "game",
    "episode", "season", "volume", "vol", "no", "nr", "number", "psalm", "psalms", "verse", "line",
    "option", "ios", "macos", "ubuntu", "debian", "office", "build", "release", "issue", "pr",
    "ticket", "appendix", "exhibit", "note", "footnote", "slide", "lesson", "unit", "module",
    "floor", "gate", "terminal", "platform", "flight", "bus", "route", "channel", "apollo",
    "covid", "top", "under", "over", "over-", "list", "box", "suite", "apt", "flat",
];

/// Words that cannot start a city/region segment after an address.
const NOT_PLACE: &[&str] = &[
    "the",
    "i",
    "it",
    "its",
    "please",
    "mobile",
    "phone",
    "tel",
    "fax",
    "email",
    "e-mail",
    "office",
    "desk",
    "name",
    "date",
    "when",
    "where",
    "address",
    "dear",
    "hi",
    "hello",
    "thanks",
    "thank",
    "regards",
    "and",
    "but",
    "we",
    "you",
    "he",
    "she",
    "they",
    "my",
    "our",
    "your",
    "this",
    "that",
    "there",
    "if",
    "in",
    "on",
    "at",
    "to",
    "for",
    "from",
    "personal",
    "info",
    "web",
    "website",
    "url",
    "cell",
    "home",
    "work",
    "best",
    "sincerely",
    "cheers",
    "is",
    "was",
    "a",
    "an",
    "as",
    "so",
    "see",
    "call",
    "note",
    "ps",
    "p.s",
    "meet",
    "let",
    "after",
    "before",
    "tomorrow",
    "today",
    "yesterday",
    "who",
    "what",
    "how",
    "why",
    "can",
    "could",
    "would",
];

/// Context words that make a nearby street-like phrase an address.
const ADDRESS_CONTEXT: &[&str] = &[
    "address",
    "live at",
    "lives at",
    "living at",
    "live on",
    "lives on",
    "located",
    "reside",
    "sent to",
    "send to",
    "ship to",
    "shipping",
    "deliver",
    "mail to",
    "meet me at",
    "moved to",
    "is at",
    "is on",
    "return to",
    "arrived at",
    "off at",
    "billing",
    "postal",
    "residence",
    "house at",
    "home at",
    "street",
    "corner of",
    "enter on",
    "visit us",
    "find us",
    "adresse",
    "dirección",
    "indirizzo",
    "endereço",
    "anschrift",
    "wohnhaft",
    "taxi to",
    "lived in",
    "live in",
    "office",
];

const MONTHS_TITLE: &str = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec|JANUARY|FEBRUARY|MARCH|APRIL|MAY|JUNE|JULY|AUGUST|SEPTEMBER|OCTOBER|NOVEMBER|DECEMBER|JAN|FEB|MAR|APR|JUN|JUL|AUG|SEPT|SEP|OCT|NOV|DEC";
const WEEKDAYS_TITLE: &str = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun";
pub(crate) const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Nationalities/demonyms, religions and political affiliations (singular; plural "-s" handled).
const NRP_WORDS: &[&str] = &[
    "afghan",
    "albanian",
    "algerian",
    "american",
    "andorran",
    "angolan",
    "argentine",
    "argentinian",
    "armenian",
    "australian",
    "austrian",
    "azerbaijani",
    "bahamian",
    "bahraini",
    "bangladeshi",
    "barbadian",
    "belarusian",
    "belgian",
    "belizean",
    "beninese",
    "bhutanese",
    "bolivian",
    "bosnian",
    "botswanan",
    "brazilian",
    "british",
    "bruneian",
    "bulgarian",
    "burkinabe",
    "burmese",
    "burundian",
    "cambodian",
    "cameroonian",
    "canadian",
    "chadian",
    "chechen",
    "chilean",
    "chinese",
    "colombian",
    "congolese",
    "rican",
    "croatian",
    "cuban",
    "cypriot",
    "czech",
    "danish",
    "djiboutian",
    "dominican",
    "dutch",
    "ecuadorian",
    "ecuadorean",
    "egyptian",
    "emirati",
    "english",
    "eritrean",
    "estonian",
    "ethiopian",
    "fijian",
    "filipino",
    "finnish",
    "french",
    "gabonese",
    "gambian",
    "georgian",
    "german",
    "ghanaian",
    "greek",
    "grenadian",
    "guatemalan",
    "guinean",
    "guyanese",
    "haitian",
    "honduran",
    "hungarian",
    "icelandic",
    "icelander",
    "indian",
    "indonesian",
    "iranian",
    "iraqi",
    "irish",
    "israeli",
    "italian",
    "ivorian",
    "jamaican",
    "japanese",
    "jordanian",
    "kazakh",
    "kenyan",
    "korean",
    "kosovar",
    "kuwaiti",
    "kyrgyz",
    "laotian",
    "latvian",
    "lebanese",
    "liberian",
    "libyan",
    "lithuanian",
    "luxembourgish",
    "macedonian",
    "malagasy",
    "malawian",
    "malaysian",
    "maldivian",
    "malian",
    "maltese",
    "mauritanian",
    "mauritian",
    "mexican",
    "moldovan",
    "monegasque",
    "mongolian",
    "montenegrin",
    "moroccan",
    "mozambican",
    "namibian",
    "nepalese",
    "nepali",
    "nicaraguan",
    "nigerian",
    "nigerien",
    "norwegian",
    "omani",
    "pakistani",
    "palestinian",
    "panamanian",
    "paraguayan",
    "peruvian",
    "polish",
    "portuguese",
    "qatari",
    "romanian",
    "russian",
    "rwandan",
    "salvadoran",
    "samoan",
    "saudi",
    "scottish",
    "senegalese",
    "serbian",
    "leonean",
    "singaporean",
    "slovak",
    "slovakian",
    "slovenian",
    "somali",
    "african",
    "spanish",
    "lankan",
    "sudanese",
    "surinamese",
    "swazi",
    "swedish",
    "swiss",
    "syrian",
    "taiwanese",
    "tajik",
    "tanzanian",
    "thai",
    "togolese",
    "tongan",
    "trinidadian",
    "tunisian",
    "turkish",
    "turkmen",
    "ugandan",
    "ukrainian",
    "uruguayan",
    "uzbek",
    "venezuelan",
    "vietnamese",
    "welsh",
    "yemeni",
    "zambian",
    "zimbabwean",
    "kurdish",
    "tibetan",
    "uyghur",
    "tamil",
    "punjabi",
    "sikh",
    "hispanic",
    "latino",
    "latina",
    "arab",
    "persian",
    "pashtun",
    "basque",
    "catalan",
    "flemish",
    "walloon",
    "greenlandic",
    // religions
    "christian",
    "catholic",
    "protestant",
    "muslim",
    "moslem",
    "islamic",
    "jewish",
    "hindu",
    "buddhist",
    "jain",
    "shinto",
    "taoist",
    "atheist",
    "agnostic",
    "mormon",
    "evangelical",
    "baptist",
    "methodist",
    "lutheran",
    "anglican",
    "presbyterian",
    "pentecostal",
    "shia",
    "shiite",
    "shii",
    "sunni",
    "sufi",
    "zoroastrian",
    "bahai",
    "rastafarian",
    "quaker",
    "amish",
    // politics
    "democrat",
    "republican",
    "socialist",
    "communist",
    "libertarian",
    "marxist",
    "fascist",
    "tory",
    "labourite",
    "anarchist",
];

/// Indian state/UT codes used on registration plates.
const IN_STATES: &[&str] = &[
    "AN", "AP", "AR", "AS", "BR", "CG", "CH", "DD", "DL", "DN", "GA", "GJ", "HP", "HR", "JH", "JK",
    "KA", "KL", "LA", "LD", "MH", "ML", "MN", "MP", "MZ", "NL", "OD", "OR", "PB", "PY", "RJ", "SK",
    "TN", "TR", "TS", "UK", "UP", "WB", "BH",
];

// ---------------------------------------------------------------------------------------------

/// FNV-1a: the word sets are probed with short keys on every candidate, where SipHash's
/// DoS resistance buys nothing (the keys are fixed lexicon words).
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type WordSet = HashSet<&'static str, BuildHasherDefault<Fnv>>;

/// Finds STREET_ADDRESS, DATE_TIME, AGE, postcodes, vehicle registrations, TITLE and NRP.
pub struct QuasiRecognizer {
    pre: WordSet,
    post_en: WordSet,
    post_lc: WordSet,
    particles: WordSet,
    stop: WordSet,
    not_head: WordSet,
    not_place: WordSet,
    // addresses
    re_unit: Regex,
    re_sep: Regex,
    re_postcode: Regex,
    re_region: Regex,
    re_place: Regex,
    re_place_lc: Regex,
    re_military: Regex,
    re_ship: Regex,
    re_pobox_end: Regex,
    // dates
    re_iso: Regex,
    re_numdate: Regex,
    re_monthyear_num: Regex,
    re_daymonth_num: Regex,
    re_day_month_name: Regex,
    re_month_before: Regex,
    re_month_first: Regex,
    re_time_after: Regex,
    // ages
    re_age_after: Regex,
    re_age_before: Regex,
    // postcodes, plates
    re_zip_ctx: Regex,
    re_uk_postcode: Regex,
    re_uk_plate: Regex,
    re_uk_plate_prefix: Regex,
    re_tr_plate: Regex,
    re_in_plate: Regex,
    re_ng_plate: Regex,
    re_de_plate: Regex,
    /// Weekday and NRP words, lower-case, looked up per capitalized word.
    words: HashMap<&'static str, WordKind, BuildHasherDefault<Fnv>>,
    /// Bit set over (length, first letter, last letter) of `words`, see `maybe_word`.
    word_filter: Vec<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum WordKind {
    Weekday,
    Nrp,
}

impl Default for QuasiRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

fn re(p: &str) -> Regex {
    // Patterns are constants of this file; a failure is a programming error caught by tests.
    Regex::new(p).unwrap_or_else(|e| panic!("quasi regex {p}: {e}"))
}

impl QuasiRecognizer {
    pub fn new() -> Self {
        let capw = r"\p{Lu}[\p{L}\p{M}'’\-]*";
        let parts = "(?:de|du|des|la|le|del|della|di|da|do|dos|das|van|von|der|den|nad|pod|u|am|an|im|sur|en|y)";
        let mut words = HashMap::default();
        for w in WEEKDAYS {
            words.insert(*w, WordKind::Weekday);
        }
        for w in NRP_WORDS {
            words.insert(*w, WordKind::Nrp);
        }
        let mut word_filter = vec![0u64; (17usize * 26 * 26).div_ceil(64)];
        for w in words.keys() {
            let wb = w.as_bytes();
            if let (Some(&f), Some(&l)) = (wb.first(), wb.last()) {
                if wb.len() < 17 && f.is_ascii_lowercase() && l.is_ascii_lowercase() {
                    let k = (wb.len() * 26 + usize::from(f - b'a')) * 26 + usize::from(l - b'a');
                    word_filter[k / 64] |= 1u64 << (k % 64);
                }
            }
        }
        QuasiRecognizer {
            pre: STREET_PRE.iter().copied().collect(),
            post_en: STREET_POST_EN.iter().copied().collect(),
            post_lc: STREET_POST_LC.iter().copied().collect(),
            particles: PARTICLES.iter().copied().collect(),
            stop: STOPWORDS.iter().copied().collect(),
            not_head: NOT_STREET_HEAD.iter().copied().collect(),
            not_place: NOT_PLACE.iter().copied().collect(),
            re_unit: re(
                r"(?i)\A\.?[ \t]*,?[ \t]*(?:\r?\n[ \t>?]*)?(?:apt\.?|apartment|suite|ste\.?|unit|flat|floor|fl\.|room|rm\.?|bldg\.?|building|#)[ \t]*#?\d{1,5}[a-z]?\b",
            ),
            re_sep: re(
                r"\A(?:[ \t]*,[ \t]*(?:\r?\n[ \t>?]*)?|[ \t]*\r?\n[ \t>?]*(?:,[ \t]*)?|[ \t]+)",
            ),
            re_postcode: re(
                r"\A(?:\d{4,5}(?:-\d{4})?|\d{3} \d{2}|\d{2}-\d{3}|[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}|[A-Z]\d[A-Z] ?\d[A-Z]\d)",
            ),
            re_region: re(r"\A(?:[A-Z]{2,3}|\d{1,2}|nan|[a-z]{2})"),
            re_place: re(&format!(
                r"\A{capw}(?:[ \t]+(?:{parts}[ \t]+)*{capw}){{0,3}}(?:[ \t]+\([^()\n]{{1,30}}\))?"
            )),
            re_place_lc: re(r"\A\p{Ll}[\p{L}\p{M}'’\-]*(?:[ \t]+\p{Ll}[\p{L}\p{M}'’\-]*){0,2}"),
            re_military: re(
                r"(?i)\A(?:PSC|Unit|CMR)[ \t]+\d{3,5},?[ \t]+Box[ \t]+\d{3,5}[ \t]*,?[ \t]*\r?\n?[ \t]*[ADF]PO[ \t]+A[AEP][ \t]+\d{5}\b",
            ),
            re_ship: re(
                r"(?i)(?:USNS|USNV|USS|USCGC)[ \t]+[\p{L}\p{M}'’\-]+(?:[ \t]+[\p{L}\p{M}'’\-]+)?[ \t]*,?[ \t]*\r?\n?[ \t]*FPO[ \t]+A[AEP][ \t]+\z",
            ),
            re_pobox_end: re(
                r"(?i)(?:P\.?[ \t]?O\.?[ \t]*Box|Post[ \t]?box|Postfach|Apartado|Caixa[ \t]+Postal|Case[ \t]+postale)[ \t]+\z",
            ),
            re_iso: re(
                r"\A\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?",
            ),
            re_numdate: re(r"\A(\d{1,4})([/.\-])(\d{1,2})([/.\-])(\d{4}|\d{2})"),
            re_monthyear_num: re(r"\A(\d{1,2})[/.](\d{4})"),
            re_daymonth_num: re(r"\A(\d{1,2})/(\d{1,2})"),
            re_day_month_name: re(&format!(
                r"\A(\d{{1,2}})(?:st|nd|rd|th)?(?:[ \t]+of)?[ \t]+(?:{MONTHS_TITLE})\b\.?(?:,?[ \t]+(\d{{4}}))?"
            )),
            re_month_before: re(&format!(
                r"(?:(?:{WEEKDAYS_TITLE})\.?,?[ \t]+(?:the[ \t]+)?)?(?:{MONTHS_TITLE})\.?,?[ \t]+\z"
            )),
            re_month_first: re(r"\A(\d{1,4})(?:st|nd|rd|th)?\b(?:,?[ \t]+(\d{4})\b)?"),
            re_time_after: re(
                r"\A(?:,?[ \t]+(?:at[ \t]+)?|T)(?:[01]?\d|2[0-3])[:.][0-5]\d(?::[0-5]\d)?(?:[ \t]*(?:[AaPp]\.?[Mm]\.?))?\b",
            ),
            re_age_after: re(
                r"(?i)\A(\d{1,3})(?:(?:[ \t]*-[ \t]*|[ \t]+)(?:years?|yrs?|yo)(?:[ \t]*-[ \t]*|[ \t]+)old\b|[ \t]*(?:y/o|y\.o\.|yo|yrs? old)(?:\b|[ \t.,]|\z)|-year-old\b)",
            ),
            re_age_before: re(
                r"(?i)(?:(aged|age[ \t]*(?:of|is|was|:|=|-)?|ages)|(turned|turns|turn|turning)|(i'?m|i[ \t]+am|im)|(when[ \t]+(?:he|she|i|they)[ \t]+was|(?:he|she)[ \t]+is))[ \t]+\z",
            ),
            re_zip_ctx: re(
                r"(?i)(?:(zip(?:[ \t]?code)?|postal[ \t]?code|post[ \t]?code|postcode|código[ \t]+postal|code[ \t]+postal|cep)|(plz|postleitzahl))[ \t]*(?:is|:|#|=|-|\.)?[ \t]*\z",
            ),
            re_uk_postcode: re(
                r"\A(?:[A-PR-UWYZ](?:\d[A-HJKPSTUW\d]?|[A-HK-Y]\d[ABEHMNPRVWXY\d]?))( ?)\d[ABD-HJLNP-UW-Z]{2}",
            ),
            re_uk_plate: re(r"(?i)\A([A-HJ-PR-Y]{2})(\d{2})( ?)([A-HJ-PR-Z]{3})"),
            re_uk_plate_prefix: re(r"\A[A-HJ-NP-Y]\d{1,3} ?[A-HJ-PR-Y]{3}"),
            re_tr_plate: re(r"(?i)\A(0[1-9]|[1-7]\d|8[01])( ?)([A-Z]{1,3})( ?)(\d{2,4})"),
            re_in_plate: re(r"\A([A-Z]{2})[ -]?(\d{1,2})[ -]?([A-Z]{1,3})[ -]?(\d{4})"),
            re_ng_plate: re(r"\A[A-Z]{3}([- ]?)\d{3}[A-Z]{2}"),
            re_de_plate: re(r"\A[A-ZÄÖÜ]{1,3}-[A-Z]{1,2}[ -]?[1-9]\d{0,3}[EH]?"),
            words,
            word_filter,
        }
    }
}

impl Recognizer for QuasiRecognizer {
    fn name(&self) -> &'static str {
        DETECTOR
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        let first = out.len();
        self.digit_pass(text, out);
        let dates: Vec<(usize, usize)> = out[first..]
            .iter()
            .filter(|c| c.label == "DATE_TIME")
            .map(|c| (c.start, c.end))
            .collect();
        self.word_pass(text, &dates, out);
        self.title_pass(text, out);
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers (all work on char boundaries; none index into the middle of a char).
// ---------------------------------------------------------------------------------------------

fn char_before(text: &str, i: usize) -> Option<char> {
    text.get(..i).and_then(|s| s.chars().next_back())
}

fn char_at(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|s| s.chars().next())
}

fn alnum_before(text: &str, i: usize) -> bool {
    char_before(text, i).is_some_and(|c| c.is_alphanumeric())
}

fn alnum_at(text: &str, i: usize) -> bool {
    char_at(text, i).is_some_and(|c| c.is_alphanumeric())
}

fn lower_before(text: &str, i: usize, radius: usize) -> String {
    let b = floor_boundary(text, i.saturating_sub(radius));
    text[b..i].to_lowercase()
}

fn contains_any(hay: &str, words: &[&str]) -> bool {
    words.iter().any(|w| hay.contains(w))
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn parse_u32(s: &str) -> u32 {
    s.bytes().take(9).fold(0u32, |a, d| {
        a.saturating_mul(10)
            .saturating_add(u32::from(d.wrapping_sub(b'0') % 10))
    })
}

fn is_title(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_uppercase())
}

fn has_upper(w: &str) -> bool {
    w.chars().any(|c| c.is_uppercase())
}

/// A word token: letters with inner `-`, `'`, `’`; returns its end (exclusive), without a dot.
fn word_at(text: &str, i: usize) -> Option<usize> {
    let mut it = text.get(i..)?.char_indices();
    let (_, c0) = it.next()?;
    if !c0.is_alphabetic() {
        return None;
    }
    let mut end = i + c0.len_utf8();
    for (off, c) in it {
        if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
            end = i + off + c.len_utf8();
        } else {
            break;
        }
    }
    // Do not end on a joiner ("Smith-").
    while end > i && matches!(text.as_bytes()[end - 1], b'-' | b'\'') {
        end -= 1;
    }
    Some(end)
}

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF)
}

/// A house number token at `i`: 1-5 digits and an optional letter ("12a"); returns its end.
fn house_num_at(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let e = digits_end(b, i);
    if e == i || e - i > 5 {
        return None;
    }
    let mut end = e;
    if end < b.len() && b[end].is_ascii_alphabetic() && !alnum_at(text, end + 1) {
        end += 1;
    }
    if alnum_at(text, end) {
        return None;
    }
    Some(end)
}

/// Index of the first byte in `b[from..]` within `lo..=hi` (ASCII bounds). Eight bytes at a
/// time (SWAR): this scan touches every byte of the text, so it sets the recognizer's speed.
fn find_in_range(b: &[u8], from: usize, lo: u8, hi: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= b.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        let x = u64::from_le_bytes(w);
        let low7 = x & !HIGH;
        // Per byte, neither sum carries: high bit set iff low7 >= lo, and iff low7 <= hi.
        let ge = low7.wrapping_add(ONES * u64::from(0x80 - lo));
        let le = (ONES * u64::from(0x80 + hi)).wrapping_sub(low7);
        let m = ge & le & !x & HIGH;
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?
        .iter()
        .position(|c| (lo..=hi).contains(c))
        .map(|o| i + o)
}

/// ASCII case-insensitive search of `needle` in `b[from..to]`, without allocating.
fn window_has_ci(b: &[u8], from: usize, to: usize, needle: &[u8]) -> bool {
    let to = to.min(b.len());
    from < to
        && b[from..to]
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Like [`window_has_ci`] for several needles in one pass.
fn window_has_any_ci(b: &[u8], from: usize, to: usize, needles: &[&[u8]]) -> bool {
    let to = to.min(b.len());
    (from..to).any(|i| {
        let c = b[i] | 0x20;
        needles
            .iter()
            .any(|n| n[0] == c && i + n.len() <= to && b[i..i + n.len()].eq_ignore_ascii_case(n))
    })
}

/// Whether the digit run at `p..q` can be part of a letter-led plate or postcode: upper-case
/// letters glued before it ("AB51", "SW1A"), or before one separator ("APP-456CV"), or the two
/// lower-case letters of a current UK plate ("aa02 aaa").
fn plate_letters_before(b: &[u8], p: usize, q: usize) -> bool {
    if p == 0 {
        return false;
    }
    let mut k = p;
    while k > 0 && p - k < 4 && b[k - 1].is_ascii_alphabetic() {
        k -= 1;
    }
    if k < p {
        let run = &b[k..p];
        return run.iter().all(u8::is_ascii_uppercase) || (run.len() == 2 && q - p == 2);
    }
    if matches!(b[p - 1], b' ' | b'-') && p >= 2 {
        let mut j = p - 1;
        while j > 0 && (p - 1) - j < 4 && b[j - 1].is_ascii_uppercase() {
            j -= 1;
        }
        return j < p - 1
            && (j == 0
                || !b[j - 1].is_ascii_alphanumeric()
                || b[j - 1] == b'-'
                || b[j - 1] >= 0x80);
    }
    false
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

struct Word {
    start: usize,
    end: usize, // including an abbreviation dot when it belongs to the word
    lower: String,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum StreetKind {
    Typed,
    Untyped,
    LowerTyped,
}

impl QuasiRecognizer {
    /// Cheap pre-check before hashing: is there a lexicon word of this length with these first
    /// and last letters (plural "-s" included)?
    fn maybe_word(&self, w: &[u8]) -> bool {
        let (Some(&f), Some(&l)) = (w.first(), w.last()) else {
            return false;
        };
        let bit = |len: usize, f: u8, l: u8| -> Option<usize> {
            let (f, l) = (
                f.to_ascii_lowercase().wrapping_sub(b'a'),
                l.to_ascii_lowercase().wrapping_sub(b'a'),
            );
            (len < 17 && f < 26 && l < 26)
                .then(|| (len * 26 + usize::from(f)) * 26 + usize::from(l))
        };
        let probe = |k: Option<usize>| {
            k.is_some_and(|k| self.word_filter[k / 64] & (1u64 << (k % 64)) != 0)
        };
        probe(bit(w.len(), f, l))
            || (l | 0x20 == b's' && w.len() > 1 && probe(bit(w.len() - 1, f, w[w.len() - 2])))
    }

    /// Looks up an ASCII word, case-insensitively, allowing a plural "-s" for NRP words.
    fn lookup_word(&self, w: &[u8]) -> Option<WordKind> {
        let mut buf = [0u8; 16];
        if w.len() > buf.len() {
            return None;
        }
        for (d, c) in buf.iter_mut().zip(w) {
            *d = c.to_ascii_lowercase();
        }
        let lw = std::str::from_utf8(&buf[..w.len()]).ok()?;
        if let Some(k) = self.words.get(lw) {
            return Some(*k);
        }
        let stem = lw.strip_suffix('s')?;
        match self.words.get(stem) {
            Some(WordKind::Nrp) => Some(WordKind::Nrp),
            _ => None,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Digit-driven pass: dates, ages, postcodes, plates, addresses.
    // -----------------------------------------------------------------------------------------

    fn digit_pass(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let mut i = 0;
        let mut covered = 0usize;
        while i < b.len() {
            // Cheap scan to the next ASCII digit.
            match find_in_range(b, i, b'0', b'9') {
                Some(at) => i = at,
                None => break,
            }
            let p = i;
            let q = digits_end(b, p);
            i = q;
            if p < covered {
                continue;
            }
            if let Some(end) = self.at_digits(text, p, q, out) {
                covered = end;
                i = i.max(end);
            }
        }
    }

    /// Tries every numeric recognizer at the digit run `p..q`; returns the end of what it found.
    fn at_digits(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let b = text.as_bytes();
        let prev = char_before(text, p);
        let glued_letter = prev.is_some_and(|c| c.is_alphabetic());
        // Tokens that start with letters: plates and UK postcodes ("AB51 ABC", "SW1A 1AA").
        if plate_letters_before(b, p, q) {
            if let Some(e) = self.letter_led(text, p, out) {
                return Some(e);
            }
        }
        if glued_letter || prev.is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        let money = prev.is_some_and(|c| matches!(c, '$' | '€' | '£' | '¥' | '₹'))
            || (prev == Some(' ') && matches!(char_before(text, p - 1), Some('$' | '€' | '£')));
        if money {
            return None;
        }
        let before_ci = |w: &[u8]| p >= w.len() && b[p - w.len()..p].eq_ignore_ascii_case(w);
        if before_ci(b"psc ")
            || before_ci(b"unit ")
            || before_ci(b"cmr ")
            || (q - p == 5 && window_has_ci(b, p.saturating_sub(8), p, b"po a"))
        {
            if let Some(e) = self.military(text, p, q, out) {
                return Some(e);
            }
        }
        if let Some(e) = self.date(text, p, q, out) {
            return Some(e);
        }
        if let Some(e) = self.age(text, p, q, out) {
            return Some(e);
        }
        let w0 = p.saturating_sub(28);
        if window_has_any_ci(b, w0, p, &[b"zip", b"post", b"plz", b"cep", b"code"]) {
            if let Some(e) = self.zip_with_context(text, p, q, out) {
                return Some(e);
            }
        }
        if q - p == 2 && q + 1 < b.len() && (b[q] == b' ' || b[q].is_ascii_alphabetic()) {
            if let Some(e) = self.plate_digit_led(text, p, out) {
                return Some(e);
            }
        }
        if let Some(e) = self.address(text, p, out) {
            return Some(e);
        }
        if let Some(e) = self.bare_year(text, p, q, out) {
            return Some(e);
        }
        None
    }

    // ----- dates ------------------------------------------------------------------------------

    fn date(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let rest = &text[p..];
        let dob = |s: usize| -> bool {
            let before = lower_before(text, s, 40);
            contains_any(
                &before,
                &[
                    "born", "birth", "dob", "d.o.b", "birthday", "geboren", "née", "né le",
                ],
            )
        };
        let finish = |s: usize, e: usize, score: f32, out: &mut Vec<Candidate>| -> usize {
            let mut end = e;
            if let Some(m) = self.re_time_after.find(&text[end..]) {
                if !alnum_at(text, end + m.end()) {
                    end += m.end();
                }
            }
            let score = if dob(s) { score.max(0.95) } else { score };
            push(out, s, end, "DATE_TIME", Tier::QuasiIdentifier, score);
            end
        };
        let ok_end = |e: usize| -> bool {
            // Not followed by more digits or by a version-like continuation ("1.2.3.4").
            let nb = text.as_bytes();
            if alnum_at(text, e) {
                return false;
            }
            if e + 1 < nb.len()
                && matches!(nb[e], b'.' | b'/' | b'-' | b':')
                && nb[e + 1].is_ascii_digit()
            {
                return false;
            }
            true
        };
        let prevc = char_before(text, p);
        if prevc.is_some_and(|c| matches!(c, '.' | '/' | ':' | '-' | '+' | '#' | '_')) {
            return None;
        }
        let b = text.as_bytes();
        let nxt = b.get(q).copied().unwrap_or(b'\n');
        // Month name before the number ("March 3rd, 1987", "Monday, June 5", "May 2020").
        let wb = floor_boundary(text, p.saturating_sub(32));
        let month_shape = p >= 4
            && matches!(b[p - 1], b' ' | b'\t' | b',')
            && (b[p - 2].is_ascii_alphabetic() || b[p - 2] == b'.' || b[p - 2] == b',');
        if let Some(m) = if month_shape {
            self.re_month_before.find(&text[wb..p])
        } else {
            None
        } {
            let s = wb + m.start();
            if !alnum_before(text, s) {
                if let Some(c) = self.re_month_first.captures(rest) {
                    let n = c.get(1).map_or("", |x| x.as_str());
                    let e = p + c.get(0).map_or(0, |x| x.end());
                    let v = parse_u32(n);
                    if ok_end(e) {
                        if n.len() <= 2 && (1..=31).contains(&v) {
                            let score = if c.get(2).is_some() { 0.85 } else { 0.65 };
                            return Some(finish(s, e, score, out));
                        }
                        if n.len() == 4 && (1000..=2199).contains(&v) {
                            return Some(finish(s, e, 0.65, out));
                        }
                    }
                }
            }
        }
        if !matches!(nxt, b'-' | b'/' | b'.' | b' ' | b's' | b'n' | b'r' | b't') {
            return None;
        }
        if let Some(m) = self.re_iso.find(rest) {
            let e = p + m.end();
            if ok_end(e) {
                return Some(finish(p, e, 0.85, out));
            }
        }
        if let Some(c) = self.re_numdate.captures(rest) {
            let (a, s1, bb, s2, y) = (&c[1], &c[2], &c[3], &c[4], &c[5]);
            let e = p + c.get(0).map_or(0, |x| x.end());
            if s1 == s2 && ok_end(e) {
                let (va, vb, vy) = (parse_u32(a), parse_u32(bb), parse_u32(y));
                let valid = if a.len() == 4 {
                    // 2021/05/21 style: year first.
                    y.len() <= 2
                        && (1..=12).contains(&vb)
                        && (1..=31).contains(&vy)
                        && (1800..=2199).contains(&va)
                } else {
                    let dm = (1..=31).contains(&va) && (1..=12).contains(&vb);
                    let md = (1..=12).contains(&va) && (1..=31).contains(&vb);
                    (dm || md) && (y.len() == 2 || (1800..=2199).contains(&vy))
                };
                if valid {
                    let score = if y.len() == 4 || a.len() == 4 {
                        0.8
                    } else if s1 == "/" {
                        0.65
                    } else {
                        0.5
                    };
                    return Some(finish(p, e, score, out));
                }
            }
        }
        let name_shape = q - p <= 2 && rest.len() > 4 && {
            let k = skip_blanks(
                b,
                q + if matches!(nxt, b's' | b'n' | b'r' | b't') {
                    2
                } else {
                    0
                },
            );
            k > q
                && b.get(k)
                    .is_some_and(|c| c.is_ascii_uppercase() || *c == b'o')
        };
        if let Some(c) = if name_shape {
            self.re_day_month_name.captures(rest)
        } else {
            None
        } {
            let d = parse_u32(&c[1]);
            let e = p + c.get(0).map_or(0, |x| x.end());
            if (1..=31).contains(&d) && !alnum_at(text, e) {
                let score = if c.get(2).is_some() { 0.85 } else { 0.65 };
                return Some(finish(p, e, score, out));
            }
        }
        if let Some(c) = self.re_monthyear_num.captures(rest) {
            let e = p + c.get(0).map_or(0, |x| x.end());
            let (m, y) = (parse_u32(&c[1]), parse_u32(&c[2]));
            if (1..=12).contains(&m) && (1900..=2099).contains(&y) && ok_end(e) {
                return Some(finish(p, e, 0.55, out));
            }
        }
        if let Some(c) = self.re_daymonth_num.captures(rest) {
            let e = p + c.get(0).map_or(0, |x| x.end());
            let (a, bb) = (parse_u32(&c[1]), parse_u32(&c[2]));
            let valid = ((1..=12).contains(&a) && (1..=31).contains(&bb))
                || ((1..=31).contains(&a) && (1..=12).contains(&bb));
            if valid && ok_end(e) {
                // "1/2" is as often a fraction: only with date words around.
                let before = lower_before(text, p, 24);
                let ctx = contains_any(
                    &before,
                    &[
                        "today",
                        "date",
                        "dated",
                        "due",
                        "deadline",
                        "until",
                        "till",
                        "since",
                        "born",
                        "dob",
                        "appointment",
                        "scheduled",
                        "tomorrow",
                        "on the",
                    ],
                );
                if ctx {
                    return Some(finish(p, e, 0.55, out));
                }
            }
        }
        None
    }

    fn bare_year(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        if q - p != 4 {
            return None;
        }
        let y = parse_u32(&text[p..q]);
        if !(1900..=2039).contains(&y) {
            return None;
        }
        let b = text.as_bytes();
        // Part of a digit group (IBAN, phone) or an expression: not a year.
        if q < b.len()
            && matches!(b[q], b'%' | b':' | b'/' | b'.' | b',' | b'-' | b'x' | b's')
            && q + 1 < b.len()
            && b[q + 1].is_ascii_alphanumeric()
        {
            return None;
        }
        if alnum_at(text, q) {
            return None;
        }
        if q + 1 < b.len() && b[q] == b' ' && b[q + 1].is_ascii_digit() {
            return None;
        }
        if p >= 2 && b[p - 1] == b' ' && b[p - 2].is_ascii_digit() {
            return None;
        }
        if let Some(c) = char_before(text, p) {
            if matches!(c, '.' | ',' | '/' | ':' | '-' | '#' | '+' | '=' | '_') {
                return None;
            }
        }
        let before = lower_before(text, p, 20);
        let trimmed = before.trim_end();
        let ends_word = |w: &str| {
            trimmed.ends_with(w)
                && !trimmed[..trimmed.len() - w.len()]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric())
        };
        let mut score = 0.35;
        // Words after which a four-digit number is nearly always a year.
        let strong = [
            "since",
            "during",
            "of",
            "until",
            "till",
            "circa",
            "year",
            "born",
            "early",
            "late",
            "mid",
            "spring",
            "summer",
            "autumn",
            "winter",
            "throughout",
        ]
        .iter()
        .any(|w| ends_word(w));
        // Words after which it may be a count ("in 2000 cases", "by 2000 votes").
        let weak = ["in", "from", "by", "before", "after", "around", "fall"]
            .iter()
            .any(|w| ends_word(w));
        if strong {
            score = 0.5;
        } else if weak {
            let after = &text[q..ceil_boundary(text, q + 16)];
            let plural_next = after.strip_prefix(' ').is_some_and(|w| {
                let word: String = w.chars().take_while(|c| c.is_alphabetic()).collect();
                word.len() > 3
                    && word.ends_with('s')
                    && word.chars().all(|c| c.is_lowercase())
                    && !matches!(word.as_str(), "was" | "has" | "does" | "goes")
            });
            if !plural_next {
                score = 0.5;
            }
        }
        if before.contains("born") {
            score = 0.75;
        }
        push(out, p, q, "DATE_TIME", Tier::QuasiIdentifier, score);
        Some(q)
    }

    // ----- ages -------------------------------------------------------------------------------

    fn age(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        if q - p > 3 {
            return None;
        }
        let v = parse_u32(&text[p..q]);
        if v > 125 {
            return None;
        }
        let b = text.as_bytes();
        let after_shape = b
            .get(q)
            .is_some_and(|c| matches!(c, b' ' | b'-' | b'y' | b'Y' | b'\t'));
        if after_shape && self.re_age_after.is_match(&text[p..]) {
            push(out, p, q, "AGE", Tier::QuasiIdentifier, 0.85);
            return Some(q);
        }
        if p < 3 || !matches!(b[p - 1], b' ' | b'\t') {
            return None;
        }
        let wb = floor_boundary(text, p.saturating_sub(24));
        if !self.re_age_before.is_match(&text[wb..p]) {
            return None;
        }
        let caps = self.re_age_before.captures(&text[wb..p])?;
        let m0 = caps.get(0)?;
        if alnum_before(text, wb + m0.start()) {
            return None;
        }
        // Only a number that ends the clause is an age ("I'm 5 minutes away" is not).
        let end_ok = q >= b.len()
            || matches!(
                b[q],
                b'.' | b',' | b'!' | b'?' | b';' | b')' | b'\n' | b'\r'
            )
            || text[q..].starts_with(" and ")
            || text[q..].starts_with(" now")
            || text[q..].starts_with(" next")
            || text[q..].starts_with(" this")
            || text[q..].starts_with(" today")
            || text[q..].starts_with(" in ")
            || text[q..].starts_with(" on ");
        if q < b.len() && b[q] == b'.' && q + 1 < b.len() && b[q + 1].is_ascii_digit() {
            return None;
        }
        if !end_ok {
            return None;
        }
        let score = if caps.get(1).is_some() {
            0.85
        } else if caps.get(2).is_some() {
            0.7
        } else if caps.get(3).is_some() {
            0.65
        } else {
            0.55
        };
        if v == 0 {
            return None;
        }
        push(out, p, q, "AGE", Tier::QuasiIdentifier, score);
        Some(q)
    }

    // ----- postcodes --------------------------------------------------------------------------

    fn zip_with_context(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        let wb = floor_boundary(text, p.saturating_sub(28));
        let caps = self.re_zip_ctx.captures(&text[wb..p])?;
        let b = text.as_bytes();
        let n = q - p;
        let mut end = q;
        if n == 5
            && q + 5 <= b.len()
            && b[q] == b'-'
            && b[q + 1..q + 5].iter().all(u8::is_ascii_digit)
            && !alnum_at(text, q + 5)
        {
            end = q + 5;
        } else if n == 3
            && q + 3 <= b.len()
            && b[q] == b' '
            && b[q + 1..q + 3].iter().all(u8::is_ascii_digit)
            && !alnum_at(text, q + 3)
        {
            end = q + 3; // Swedish/Czech "340 12"
        }
        if alnum_at(text, end) || !(3..=6).contains(&n) {
            return None;
        }
        if caps.get(2).is_some() {
            let v = parse_u32(&text[p..q]);
            if n == 5 && (1001..=99998).contains(&v) {
                push(out, p, q, "DE_PLZ", Tier::QuasiIdentifier, 0.85);
                return Some(q);
            }
            return None;
        }
        push(
            out,
            p,
            end,
            "ZIP_CODE",
            Tier::QuasiIdentifier,
            if n == 5 { 0.85 } else { 0.75 },
        );
        Some(end)
    }

    fn plate_context(&self, text: &str, s: usize, e: usize) -> bool {
        let before = lower_before(text, s, 40);
        let after = text[e..ceil_boundary(text, e + 16)].to_lowercase();
        let words = [
            "plate",
            "registration",
            "reg.",
            "reg no",
            "reg:",
            "kennzeichen",
            "plaka",
            "vehicle",
            "vrn",
            "number plate",
            "car ",
            "licence",
            "license",
            "motorbike",
            "bike",
            "truck",
            "van ",
        ];
        contains_any(&before, &words) || contains_any(&after, &["plate", "registered"])
    }

    /// Tokens that begin with letters before the digit run: plates, UK postcodes.
    fn letter_led(&self, text: &str, p: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let b = text.as_bytes();
        // Candidate starts: the letters glued to the run, or letters before one separator.
        let mut starts: [usize; 3] = [usize::MAX; 3];
        let mut k = p;
        while k > 0 && p - k < 3 && b[k - 1].is_ascii_alphabetic() {
            k -= 1;
        }
        if k < p {
            starts[0] = k;
        } else if p >= 2 && matches!(b[p - 1], b' ' | b'-') {
            let mut j = p - 1;
            while j > 0 && (p - 1) - j < 3 && b[j - 1].is_ascii_alphabetic() {
                j -= 1;
            }
            if j < p - 1 {
                starts[0] = j;
            }
            // German "B-AB-1234": one more letter group before a hyphen.
            if j >= 2 && j < p - 1 && b[j - 1] == b'-' {
                let mut h = j - 1;
                while h > 0
                    && (j - 1) - h < 3
                    && (b[h - 1].is_ascii_uppercase() || b[h - 1] >= 0xC3)
                {
                    h -= 1;
                }
                if h < j - 1 && text.is_char_boundary(h) {
                    starts[1] = h;
                }
            }
        }
        let mut best: Option<(usize, usize, &'static str, f32)> = None;
        for &s in starts.iter().filter(|&&s| s != usize::MAX) {
            if alnum_before(text, s) || !text.is_char_boundary(s) {
                continue;
            }
            if let Some((e, label, score)) = self.token_plate(text, s) {
                if e > p && best.is_none_or(|bst| score > bst.3) {
                    best = Some((s, e, label, score));
                }
            }
        }
        let (s, e, label, score) = best?;
        push(out, s, e, label, Tier::QuasiIdentifier, score);
        Some(e)
    }

    /// Best plate or UK postcode that starts exactly at `s` and ends on a token boundary.
    fn token_plate(&self, text: &str, s: usize) -> Option<(usize, &'static str, f32)> {
        let rest = &text[s..];
        let mut best: Option<(usize, &'static str, f32)> = None;
        let mut consider = |e: usize, label: &'static str, score: f32| {
            if !alnum_at(text, s + e) && best.is_none_or(|b| score > b.2) {
                best = Some((s + e, label, score));
            }
        };
        let ctx = |e: usize| self.plate_context(text, s, s + e);
        if let Some(m) = self.re_uk_postcode.captures(rest) {
            let e = m.get(0).map_or(0, |x| x.end());
            let spaced = !m[1].is_empty();
            let before = lower_before(text, s, 40);
            let c = contains_any(
                &before,
                &[
                    "postcode",
                    "post code",
                    "postal",
                    "address",
                    "from",
                    " to ",
                    "london",
                    "uk",
                    "live",
                ],
            );
            let score = match (spaced, c) {
                (true, true) => 0.85,
                (true, false) => 0.7,
                (false, true) => 0.7,
                (false, false) => 0.5,
            };
            consider(e, "UK_POSTCODE", score);
        }
        if let Some(m) = self.re_uk_plate.captures(rest) {
            let age = parse_u32(&m[2]);
            let e = m.get(0).map_or(0, |x| x.end());
            if (2..=25).contains(&age) || (51..=75).contains(&age) {
                let upper = m[1].bytes().all(|c| c.is_ascii_uppercase())
                    && m[4].bytes().all(|c| c.is_ascii_uppercase());
                let mixed = !upper && m[0].bytes().any(|c| c.is_ascii_uppercase());
                if !mixed {
                    let score = if ctx(e) {
                        0.85
                    } else if upper {
                        if m[3].is_empty() {
                            0.55
                        } else {
                            0.65
                        }
                    } else {
                        0.5
                    };
                    consider(e, "UK_VEHICLE_REGISTRATION", score);
                }
            }
        }
        if let Some(m) = self.re_uk_plate_prefix.find(rest) {
            let e = m.end();
            consider(e, "UK_VEHICLE_REGISTRATION", if ctx(e) { 0.8 } else { 0.5 });
        }
        if let Some(c) = self.re_in_plate.captures(rest) {
            let e = c.get(0).map_or(0, |x| x.end());
            if IN_STATES.contains(&&c[1]) {
                consider(
                    e,
                    "IN_VEHICLE_REGISTRATION",
                    if ctx(e) { 0.85 } else { 0.6 },
                );
            }
        }
        if let Some(c) = self.re_ng_plate.captures(rest) {
            let e = c.get(0).map_or(0, |x| x.end());
            let score = if ctx(e) {
                0.85
            } else if &c[1] == "-" {
                0.55
            } else if &c[1] == " " {
                0.5
            } else {
                0.4
            };
            consider(e, "NG_VEHICLE_REGISTRATION", score);
        }
        if let Some(m) = self.re_de_plate.find(rest) {
            let e = m.end();
            consider(e, "DE_KFZ", if ctx(e) { 0.85 } else { 0.55 });
        }
        best
    }

    /// Turkish plates start with the province number ("34 ABC 1234").
    fn plate_digit_led(&self, text: &str, p: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        if char_before(text, p).is_some_and(|c| matches!(c, '-' | '.' | '/' | ':' | ',')) {
            return None;
        }
        let c = self.re_tr_plate.captures(&text[p..])?;
        let e = p + c.get(0)?.end();
        if alnum_at(text, e) {
            return None;
        }
        let letters = &c[3];
        let upper = letters.bytes().all(|x| x.is_ascii_uppercase());
        if !upper && letters.bytes().any(|x| x.is_ascii_uppercase()) {
            return None;
        }
        let (sp1, sp2) = (!c[2].is_empty(), !c[4].is_empty());
        if sp1 != sp2 {
            return None;
        }
        let ll = letters.to_ascii_uppercase();
        if matches!(
            ll.as_str(),
            "AM" | "PM"
                | "A"
                | "I"
                | "AD"
                | "BC"
                | "AN"
                | "AT"
                | "IN"
                | "ON"
                | "OF"
                | "TO"
                | "OR"
                | "BY"
                | "KG"
                | "KM"
                | "CM"
                | "MM"
                | "MB"
                | "GB"
                | "KB"
                | "TB"
                | "MG"
                | "ML"
        ) && !self.plate_context(text, p, e)
        {
            return None;
        }
        let score = if self.plate_context(text, p, e) {
            0.85
        } else if !upper {
            0.5
        } else if !sp1 {
            0.6
        } else if letters.len() >= 2 {
            0.55
        } else {
            0.5
        };
        push(out, p, e, "TR_LICENSE_PLATE", Tier::QuasiIdentifier, score);
        Some(e)
    }

    // ----- addresses --------------------------------------------------------------------------

    fn military(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        // "PSC 0413, Box 8144\nAPO AA 42323", "Unit 7349 Box 6067\nDPO AE 99081"
        let wb = floor_boundary(text, p.saturating_sub(6));
        let pre = &text[wb..p];
        let lp = pre.to_ascii_lowercase();
        if let Some(k) = ["psc ", "unit ", "cmr "].iter().find_map(|w| lp.rfind(w)) {
            let s = wb + k;
            if !alnum_before(text, s) {
                if let Some(m) = self.re_military.find(&text[s..]) {
                    let e = s + m.end();
                    push(out, s, e, "STREET_ADDRESS", Tier::Contact, 0.9);
                    return Some(e);
                }
            }
        }
        // "USNS Møller\nFPO AA 85844": triggered at the final five digits.
        if q - p == 5 && !alnum_at(text, q) {
            let wb = floor_boundary(text, p.saturating_sub(64));
            if let Some(m) = self.re_ship.find(&text[wb..p]) {
                let s = wb + m.start();
                if !alnum_before(text, s) {
                    push(out, s, q, "STREET_ADDRESS", Tier::Contact, 0.9);
                    return Some(q);
                }
            }
        }
        None
    }

    /// Reads up to `max` words on one line starting at `i` (blanks between them only).
    fn words_from(&self, text: &str, mut i: usize, max: usize) -> Vec<Word> {
        let b = text.as_bytes();
        let mut words = Vec::new();
        while words.len() < max {
            let Some(e) = word_at(text, i) else { break };
            let mut end = e;
            let lower = text[i..e].to_lowercase();
            if UNIT_WORDS.contains(&lower.as_str()) {
                break;
            }
            // An abbreviation's dot belongs to the word ("St.", "ul.", "u.").
            if e < b.len()
                && b[e] == b'.'
                && lower.chars().count() <= 4
                && (self.post_en.contains(lower.as_str())
                    || self.post_lc.contains(lower.as_str())
                    || self.pre.contains(lower.as_str()))
            {
                end = e + 1;
            }
            words.push(Word {
                start: i,
                end,
                lower,
            });
            let n = skip_blanks(b, end);
            if n == end || n >= b.len() || !char_at(text, n).is_some_and(|c| c.is_alphabetic()) {
                break;
            }
            i = n;
        }
        words
    }

    fn has_suffix(&self, w: &str) -> bool {
        let n = w.chars().count();
        STREET_SUFFIX
            .iter()
            .any(|s| w.ends_with(s) && n >= s.chars().count() + 2)
    }

    /// A street-type word after the name: English ones title-case ("Road"; "road" only in an
    /// all-lower-case address), the Nordic/Hungarian/... ones lower-case ("gate", "utca").
    fn is_post(&self, text: &str, w: &Word, all_lower: bool) -> bool {
        let raw = &text[w.start..w.end];
        let key = w.lower.as_str();
        (is_title(raw) && self.post_en.contains(key))
            || (!has_upper(raw)
                && (self.post_lc.contains(key) || (all_lower && self.post_en.contains(key))))
    }

    /// Classifies `words` as a street name; `None` when they cannot be one.
    fn classify(&self, text: &str, words: &[Word]) -> Option<StreetKind> {
        if words.is_empty() {
            return None;
        }
        let first_pre = self.pre.contains(words[0].lower.as_str());
        let last = &words[words.len() - 1];
        let all_lower = words.iter().all(|w| !has_upper(&text[w.start..w.end]));
        let post = words.len() >= 2 && self.is_post(text, last, all_lower);
        let suffix = self.has_suffix(&last.lower) && is_title(&text[last.start..last.end]);
        let mut lower_name = false;
        for (k, w) in words.iter().enumerate() {
            let raw = &text[w.start..w.end];
            let key = w.lower.as_str();
            if self.stop.contains(key) && !(k > 0 && self.particles.contains(key)) {
                return None;
            }
            // A joining word cannot open a name ("der Hauptstraße 5" is "Hauptstraße 5").
            if k == 0 && self.particles.contains(key) && !is_title(raw) {
                return None;
            }
            let type_word = (k == 0 && first_pre) || (k + 1 == words.len() && post);
            if !is_title(raw) && !self.particles.contains(key) && !type_word {
                lower_name = true;
            }
        }
        // A street name needs a name besides its type word.
        if words.len() == 1 && first_pre {
            return None;
        }
        if first_pre && words.len() >= 2 {
            return Some(if lower_name {
                StreetKind::LowerTyped
            } else {
                StreetKind::Typed
            });
        }
        if lower_name {
            return if post || suffix {
                Some(StreetKind::LowerTyped)
            } else {
                None
            };
        }
        if post || suffix {
            return Some(StreetKind::Typed);
        }
        if self.not_head.contains(words[0].lower.as_str()) {
            return None;
        }
        Some(StreetKind::Untyped)
    }

    fn address(&self, text: &str, p: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let b = text.as_bytes();
        let (fwd_ok, bwd_ok) = self.address_shape(text, p);
        if !fwd_ok && !bwd_ok {
            return None;
        }
        let fwd = if fwd_ok {
            self.address_forward(text, p)
        } else {
            None
        };
        let bwd = if bwd_ok {
            self.address_backward(text, p)
        } else {
            None
        };
        let core = match (fwd, bwd) {
            // "Λεωφόρος Συγγρού 119 Nino Point": a typed name before the number and more after.
            (Some(f), Some(bk)) if bk.2 == StreetKind::Typed && bk.0 < f.0 => {
                Some((bk.0, f.1.max(bk.1), StreetKind::Typed, f.3))
            }
            (Some(f), _) => Some(f),
            (None, bk) => bk,
        };
        let (mut s, mut e, kind, lead) = core?;
        let mut score: f32 = match kind {
            StreetKind::Typed => {
                if lead {
                    0.7
                } else {
                    0.65
                }
            }
            StreetKind::LowerTyped => 0.45,
            StreetKind::Untyped => {
                if lead {
                    0.45
                } else {
                    0.35
                }
            }
        };
        // "the corner of X and Y"
        let ends_ci =
            |w: &[u8]| s >= w.len() && text.as_bytes()[s - w.len()..s].eq_ignore_ascii_case(w);
        if ends_ci(b"corner of ") {
            let cut = if ends_ci(b"the corner of ") { 14 } else { 10 };
            s -= cut;
            let after_and = if text[e..].starts_with(" and ") {
                Some(e + 5)
            } else {
                None
            };
            if let Some(a) = after_and {
                let ws = self.words_from(text, a, 4);
                let n = ws
                    .iter()
                    .take_while(|w| {
                        is_title(&text[w.start..w.end]) || self.particles.contains(w.lower.as_str())
                    })
                    .count();
                if n > 0 {
                    e = ws[n - 1].end;
                }
            }
            score += 0.25;
        }
        // A unit written before the street ("Apt. 675 62314 Mellemvej 32").
        let pre = &text[floor_boundary(text, s.saturating_sub(16))..s];
        if let Some(m) = self.re_unit.find_iter(pre).last() {
            let ms = s - pre.len() + m.start();
            let tail_blank = text[ms + m.len()..s]
                .bytes()
                .all(|c| c == b' ' || c == b'\t');
            if tail_blank && !text[ms..ms + m.len()].contains('\n') {
                let trimmed = ms + (m.len() - m.as_str().trim_start().len());
                s = trimmed;
                score += 0.15;
            }
        }
        // "on Hoge Wei 32 St.", "lives on Grössgstötten 50 street": a street word right after.
        let after = &text[e..ceil_boundary(text, e + 8)];
        if after.starts_with(" St.") || after.starts_with(" street") || after.starts_with(" Street")
        {
            score += 0.15;
        }
        // Units after the street.
        let mut units = 0;
        while units < 3 {
            let Some(m) = self.re_unit.find(&text[e..]) else {
                break;
            };
            e += m.end();
            units += 1;
        }
        if units > 0 {
            score += 0.15;
        }
        // City, region, postcode, country that follow directly.
        let core_lower = !has_upper(&text[s..e]);
        let (te, postcode, segs) = self.tail(text, e, core_lower);
        if te > e {
            e = te;
            score += if postcode {
                0.2
            } else if segs >= 2 {
                0.15
            } else {
                0.1
            };
        }
        let ctx_before = lower_before(text, s, 48);
        if contains_any(&ctx_before, ADDRESS_CONTEXT) {
            score += 0.15;
        }
        let _ = b;
        // Weak findings are not emitted, so they cannot shadow a date or age in the same place.
        if score < 0.5 {
            return None;
        }
        push(out, s, e, "STREET_ADDRESS", Tier::Contact, score.min(0.95));
        Some(e)
    }

    /// Cheap look at the words around a number before any real parsing: can it start an
    /// address (next word capitalized, a number, or a street-type word) or end one (previous word
    /// capitalized, an abbreviation, or a street-type word)?
    fn address_shape(&self, text: &str, p: usize) -> (bool, bool) {
        let b = text.as_bytes();
        let typed = |w: &str| -> bool {
            if w.len() > 12 {
                return false;
            }
            let mut buf = [0u8; 12];
            let lw: &str = if w.is_ascii() {
                for (d, s) in buf.iter_mut().zip(w.bytes()) {
                    *d = s.to_ascii_lowercase();
                }
                std::str::from_utf8(&buf[..w.len()]).unwrap_or("")
            } else {
                return self.pre.contains(w.to_lowercase().as_str())
                    || self.post_lc.contains(w.to_lowercase().as_str());
            };
            self.pre.contains(lw) || self.post_lc.contains(lw)
        };
        let fwd = house_num_at(text, p).is_some_and(|e| {
            let n = skip_blanks(b, e);
            n > e
                && match char_at(text, n) {
                    Some(c) if c.is_ascii_digit() || c.is_uppercase() => true,
                    Some(c) if c.is_alphabetic() => {
                        word_at(text, n).is_some_and(|we| typed(&text[n..we]))
                    }
                    _ => false,
                }
        });
        let bwd = p >= 2 && matches!(b[p - 1], b' ' | b'\t') && {
            let mut j = p - 1;
            if b[j - 1] == b'.' {
                j -= 1;
            }
            let mut st = j;
            while let Some(c) = char_before(text, st) {
                if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
                    st -= c.len_utf8();
                } else {
                    break;
                }
            }
            st < j && (is_title(&text[st..j]) || typed(&text[st..j]) || j < p - 1)
        };
        (fwd, bwd)
    }

    /// Number first: "[12] 34 Main Street", "12 Via Roma 5", "29 Rue de Tanger", "20789 Allika 46".
    fn address_forward(&self, text: &str, p: usize) -> Option<(usize, usize, StreetKind, bool)> {
        let b = text.as_bytes();
        let mut pos = p;
        let mut nums = 0;
        while nums < 2 {
            let Some(e) = house_num_at(text, pos) else {
                break;
            };
            let n = skip_blanks(b, e);
            if n == e {
                break;
            }
            nums += 1;
            pos = n;
            if !b.get(pos).is_some_and(u8::is_ascii_digit) {
                break;
            }
        }
        if nums == 0 || !char_at(text, pos).is_some_and(|c| c.is_alphabetic()) {
            return None;
        }
        let words = self.words_from(text, pos, 6);
        if words.is_empty() {
            return None;
        }
        let wend = words[words.len() - 1].end;
        // Name then its own number: "Via Franscini 71" after a leading number.
        let n = skip_blanks(b, wend);
        if n > wend {
            if let Some(ne) = house_num_at(text, n) {
                if let Some(k) = self.classify(text, &words) {
                    return Some((p, ne, k, true));
                }
            }
        }
        // Otherwise the longest prefix of words that ends in a street type ("12 Main St").
        for k in (1..=words.len()).rev() {
            let ws = &words[..k];
            let last = &ws[k - 1];
            let all_lower = ws.iter().all(|w| !has_upper(&text[w.start..w.end]));
            let typed_end =
                k >= 2 && self.is_post(text, last, all_lower) || self.has_suffix(&last.lower);
            let pre_led = self.pre.contains(words[0].lower.as_str()) && k >= 2;
            if typed_end || (pre_led && k == words.len()) {
                if let Some(kind) = self.classify(text, ws) {
                    if kind != StreetKind::Untyped {
                        return Some((p, ws[k - 1].end, kind, nums == 2));
                    }
                }
            }
        }
        // Prefix-typed names followed by more words: cut at the first stop word.
        if self.pre.contains(words[0].lower.as_str()) {
            let k = words
                .iter()
                .position(|w| self.stop.contains(w.lower.as_str()))
                .unwrap_or(words.len())
                .min(4);
            if k >= 2 {
                if let Some(kind) = self.classify(text, &words[..k]) {
                    return Some((p, words[k - 1].end, kind, nums == 2));
                }
            }
        }
        None
    }

    /// Name first: "Parijsstraat 8", "Via dei Fiorentini 17", "P.O. Box 242", "Allika 46".
    fn address_backward(&self, text: &str, p: usize) -> Option<(usize, usize, StreetKind, bool)> {
        let b = text.as_bytes();
        let ne = house_num_at(text, p)?;
        if p == 0 || !matches!(b[p - 1], b' ' | b'\t') {
            return None;
        }
        let wb = floor_boundary(text, p.saturating_sub(20));
        if let Some(m) = self.re_pobox_end.find(&text[wb..p]) {
            let s = wb + m.start();
            if !alnum_before(text, s) {
                return Some((s, ne, StreetKind::Typed, false));
            }
        }
        // Collect up to five words before the number on the same line.
        let mut starts: Vec<usize> = Vec::new();
        let mut i = p;
        while starts.len() < 5 {
            let mut j = i;
            while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
                j -= 1;
            }
            if j == i || j == 0 {
                break;
            }
            // Walk back over one word (letters, joiners, an abbreviation dot).
            let mut k = j;
            if b[k - 1] == b'.' {
                k -= 1;
            }
            let mut st = k;
            while let Some(c) = char_before(text, st) {
                if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
                    st -= c.len_utf8();
                } else {
                    break;
                }
            }
            if st == k || !char_at(text, st).is_some_and(|c| c.is_alphabetic()) {
                break;
            }
            starts.push(st);
            i = st;
        }
        if starts.is_empty() {
            return None;
        }
        starts.reverse();
        // Prefer the span that starts at a prefix street type; else the longest valid tail.
        let words: Vec<Word> = self
            .words_from(text, starts[0], 6)
            .into_iter()
            .filter(|w| w.end <= p)
            .collect();
        if words.is_empty() {
            return None;
        }
        for k in 0..words.len() {
            if self.pre.contains(words[k].lower.as_str()) && words.len() - k >= 2 {
                if let Some(kind) = self.classify(text, &words[k..]) {
                    return Some((words[k].start, ne, kind, false));
                }
            }
        }
        for k in 0..words.len() {
            if let Some(kind) = self.classify(text, &words[k..]) {
                if kind == StreetKind::LowerTyped {
                    continue;
                }
                return Some((words[k].start, ne, kind, false));
            }
        }
        None
    }

    /// City / region / postcode / country segments after an address; returns (end, had
    /// postcode, segments).
    fn tail(&self, text: &str, start: usize, lower_ok: bool) -> (usize, bool, usize) {
        let b = text.as_bytes();
        let mut pos = start;
        let mut segs = 0;
        let mut postcode = false;
        let mut first_plain = false;
        let mut after_postcode_newline = false;
        while segs < 6 && pos - start < 200 {
            let Some(sep) = self.re_sep.find(&text[pos..]) else {
                break;
            };
            let sep_s = sep.as_str();
            let plain = !sep_s.contains(',') && !sep_s.contains('\n');
            if postcode && sep_s.contains('\n') {
                after_postcode_newline = true;
            }
            if after_postcode_newline {
                break;
            }
            let a = pos + sep.end();
            if a >= b.len() {
                break;
            }
            let rest = &text[a..];
            let seg_end = if let Some(m) = self.re_postcode.find(rest) {
                let e = a + m.end();
                let bad = alnum_at(text, e)
                    || (e + 1 < b.len()
                        && matches!(b[e], b' ' | b'-' | b'.')
                        && b[e + 1].is_ascii_digit());
                if bad {
                    None
                } else {
                    Some((e, true))
                }
            } else {
                None
            };
            let seg_end = seg_end.or_else(|| {
                if segs == 0 {
                    return None;
                }
                let m = self.re_region.find(rest)?;
                let e = a + m.end();
                if alnum_at(text, e) {
                    return None;
                }
                // A region code ends the line or precedes the postcode.
                let nxt = b.get(e).copied();
                let then_pc = self
                    .re_sep
                    .find(&text[e..])
                    .is_some_and(|s| self.re_postcode.is_match(&text[e + s.end()..]));
                if nxt.is_none()
                    || matches!(
                        nxt,
                        Some(b'\n' | b'\r' | b',' | b'.' | b';' | b'!' | b'?' | b')')
                    )
                    || then_pc
                {
                    Some((e, false))
                } else {
                    None
                }
            });
            let seg_end = seg_end.or_else(|| {
                let m = self.re_place.find(rest).or_else(|| {
                    if lower_ok && !plain {
                        self.re_place_lc.find(rest)
                    } else {
                        None
                    }
                })?;
                let e = a + m.end();
                let first: String = m
                    .as_str()
                    .chars()
                    .take_while(|c| c.is_alphabetic() || *c == '-')
                    .collect::<String>()
                    .to_lowercase();
                // A lone street word ("Sludevej 13 St.") is not a city; "St Georges" is.
                let lone_type = self.post_en.contains(first.as_str())
                    && first.len() + 1 >= m.as_str().trim_end_matches('.').len();
                if self.not_place.contains(first.as_str())
                    || lone_type
                    || b.get(e) == Some(&b':')
                    || alnum_at(text, e)
                {
                    return None;
                }
                if b.get(e) == Some(&b'@')
                    || (b.get(e) == Some(&b'.')
                        && b.get(e + 1).is_some_and(|c| c.is_ascii_alphabetic()))
                {
                    return None;
                }
                Some((e, false))
            });
            let Some((e, pc)) = seg_end else { break };
            if segs == 0 {
                first_plain = plain;
            }
            segs += 1;
            postcode |= pc;
            pos = e;
        }
        if segs == 0 {
            return (start, false, 0);
        }
        // A tail joined by a blank only must end its clause, or it is the next sentence.
        if first_plain && !postcode {
            let nxt = b.get(pos).copied();
            if !(nxt.is_none()
                || matches!(
                    nxt,
                    Some(b'\n' | b'\r' | b'.' | b',' | b';' | b'!' | b'?' | b')')
                ))
            {
                return (start, false, 0);
            }
        }
        (pos, postcode, segs)
    }

    // -----------------------------------------------------------------------------------------
    // Word pass: weekdays and NRP words (one Aho-Corasick scan).
    // -----------------------------------------------------------------------------------------

    /// Weekdays and NRP words. Capitalized words are found by a byte scan and looked up in a
    /// hash set (an automaton over every byte cost more than the rest of this recognizer);
    /// lower-case ones are checked only after "am", "are", "'m" ("I am cambodian").
    fn word_pass(&self, text: &str, dates: &[(usize, usize)], out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let mut hits: Vec<(usize, usize, WordKind)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match find_in_range(b, i, b'A', b'Z') {
                Some(at) => i = at,
                None => break,
            }
            let s = i;
            let mut e = s + 1;
            while e < b.len() && b[e].is_ascii_alphabetic() {
                e += 1;
            }
            i = e;
            if (4..=15).contains(&(e - s))
                && self.maybe_word(&b[s..e])
                && !alnum_before(text, s)
                && !alnum_at(text, e)
            {
                if let Some(k) = self.lookup_word(&b[s..e]) {
                    hits.push((s, e, k));
                }
                continue;
            }
            // "I am cambodian", "We are proud saudis": lower-case NRP words after a self-description.
            let cue = match &b[s..e] {
                b"I" if b[e..].starts_with(b" am ") => Some(e + 4),
                b"I" if b[e..].starts_with(b"'m ") || b[e..].starts_with("’m ".as_bytes()) => {
                    Some(e + if b[e] == b'\'' { 3 } else { 5 })
                }
                b"We" | b"They" if b[e..].starts_with(b" are ") => Some(e + 5),
                _ => None,
            };
            if let Some(m) = cue {
                let mut s = m;
                for _ in 0..2 {
                    let mut e = s;
                    while e < b.len() && b[e].is_ascii_lowercase() {
                        e += 1;
                    }
                    if e == s || alnum_at(text, e) {
                        break;
                    }
                    if let Some(WordKind::Nrp) = self.lookup_word(&b[s..e]) {
                        hits.push((s, e, WordKind::Nrp));
                        break;
                    }
                    s = skip_blanks(b, e);
                }
            }
        }
        hits.sort_unstable_by_key(|h| h.0);
        hits.dedup_by_key(|h| h.0);
        let mut di = 0;
        for (s, e, kind) in hits {
            let raw = &text[s..e];
            let title = raw.chars().next().is_some_and(|c| c.is_uppercase());
            match kind {
                WordKind::Weekday => {
                    while di < dates.len() && dates[di].1 <= s {
                        di += 1;
                    }
                    if di < dates.len() && dates[di].0 <= s {
                        continue;
                    }
                    if title {
                        push(out, s, e, "DATE_TIME", Tier::QuasiIdentifier, 0.5);
                    }
                }
                WordKind::Nrp => {
                    let before = |w: &str| {
                        s >= w.len() && b[s - w.len()..s].eq_ignore_ascii_case(w.as_bytes())
                    };
                    let personal = [
                        "i am ",
                        "i'm ",
                        "we are ",
                        "he is ",
                        "she is ",
                        "they are ",
                        "proud ",
                        "as a ",
                        "as an ",
                        "i was ",
                        "he was ",
                        "she was ",
                        "being ",
                        "fellow ",
                        "am a ",
                        "am an ",
                        "is a ",
                        "is an ",
                    ]
                    .iter()
                    .any(|w| before(w));
                    let nx = skip_blanks(b, e);
                    let after = |w: &str| {
                        b.len() >= nx + w.len()
                            && b[nx..nx + w.len()].eq_ignore_ascii_case(w.as_bytes())
                    };
                    // Languages, country names and document types are not a person's group.
                    let language = [
                        "in ",
                        "speak ",
                        "speaks ",
                        "speaking ",
                        "learn ",
                        "learning ",
                        "into ",
                        "study ",
                        "studying ",
                        "studied ",
                        "teach ",
                        "teaching ",
                        "taught ",
                        "(",
                    ]
                    .iter()
                    .any(|w| before(w))
                        || [
                            "language",
                            "translation",
                            "version",
                            "subtitle",
                            "word",
                            "text",
                            "keyboard",
                            "dictionary",
                            "course",
                            "class",
                            "lesson",
                            "republic",
                            "islands",
                            "passport",
                            "id ",
                            "id.",
                            "identity",
                            "national",
                            "tax",
                            "phone",
                            "social",
                            "driver",
                            "licen",
                            "number",
                            "card",
                            "visa",
                            "resident",
                            "registration",
                        ]
                        .iter()
                        .any(|w| after(w))
                        || b.get(e) == Some(&b')');
                    let all_upper = raw.len() > 3 && raw.chars().all(|c| !c.is_lowercase());
                    let mut score: f32 = if title && !all_upper { 0.5 } else { 0.3 };
                    if personal {
                        score += 0.3;
                    }
                    if language {
                        score = score.min(0.3);
                    }
                    push(out, s, e, "NRP", Tier::QuasiIdentifier, score);
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Honorifics: found at '.' bytes ("Mr.", "Mrs.", "Ms.", "Dr.", "Prof.") plus "Miss".
    // -----------------------------------------------------------------------------------------

    fn title_pass(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let followed_by_name = |e: usize| -> bool {
            let n = skip_blanks(b, e);
            n > e && char_at(text, n).is_some_and(|c| c.is_uppercase())
        };
        for d in memchr::memchr_iter(b'.', b) {
            let s = (d.saturating_sub(4)..d).find(|&s| {
                let w = &b[s..d];
                matches!(
                    w,
                    b"Mr"
                        | b"Mrs"
                        | b"Ms"
                        | b"Dr"
                        | b"Prof"
                        | b"Mx"
                        | b"MR"
                        | b"MRS"
                        | b"MS"
                        | b"DR"
                )
            });
            let Some(s) = s else { continue };
            if alnum_before(text, s) || !followed_by_name(d + 1) {
                continue;
            }
            // "Cheriton Dr. Apt": a street type after a capitalized word, not a title.
            if &b[s..d] == b"Dr" {
                let mut j = s;
                while j > 0 && b[j - 1] == b' ' {
                    j -= 1;
                }
                if j < s && char_before(text, j).is_some_and(|c| c.is_alphabetic()) {
                    let mut k = j;
                    while let Some(c) = char_before(text, k) {
                        if c.is_alphabetic() {
                            k -= c.len_utf8()
                        } else {
                            break;
                        }
                    }
                    if text[k..j].chars().next().is_some_and(|c| c.is_uppercase()) {
                        continue;
                    }
                }
            }
            push(out, s, d + 1, "TITLE", Tier::QuasiIdentifier, 0.6);
        }
        for m in memchr::memmem::find_iter(b, b"Miss ") {
            if !alnum_before(text, m) && followed_by_name(m + 4) {
                push(out, m, m + 4, "TITLE", Tier::QuasiIdentifier, 0.55);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Vec<(String, &'static str, f32)> {
        let r = QuasiRecognizer::new();
        let mut out = Vec::new();
        r.find(text, &mut out);
        out.into_iter()
            .filter(|c| c.score >= 0.5)
            .map(|c| (text[c.start..c.end].to_string(), c.label, c.score))
            .collect()
    }

    fn has(text: &str, value: &str, label: &str) -> bool {
        find(text).iter().any(|(v, l, _)| v == value && *l == label)
    }

    fn none_of(text: &str, label: &str) -> bool {
        !find(text).iter().any(|(_, l, _)| *l == label)
    }

    #[test]
    fn addresses_english_order() {
        assert!(has(
            "Jacob lives on 90 Whitchurch Road street.",
            "90 Whitchurch Road",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Meet me at 224 4966 Bond Street\n Suite 413\n Warwick\n United States",
            "224 4966 Bond Street\n Suite 413\n Warwick\n United States",
            "STREET_ADDRESS"
        ));
        assert!(
            has(
                "Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500.",
                "1600 Pennsylvania Avenue",
                "STREET_ADDRESS"
            ) || find("Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500.")
                .iter()
                .any(
                    |(v, l, _)| *l == "STREET_ADDRESS" && v.starts_with("1600 Pennsylvania Avenue")
                )
        );
        assert!(has(
            "Please return to 19902 Dobrovského 1394 Apt. 066\nSt Georges, QC 54256 in case",
            "19902 Dobrovského 1394 Apt. 066\nSt Georges, QC 54256",
            "STREET_ADDRESS"
        ));
    }

    #[test]
    fn addresses_other_locales() {
        assert!(has(
            "Timotea lives on Via dei Fiorentini 17 street.",
            "Via dei Fiorentini 17",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Pedestrians must enter on Sludevej 13 St. the first",
            "Sludevej 13",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "address: 3482 Via Franscini 71 Suite 838\n   Tujetsch\n    nan\n    7188",
            "3482 Via Franscini 71 Suite 838\n   Tujetsch\n    nan\n    7188",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Wir wohnen in der Hauptstraße 5, 10115 Berlin.",
            "Hauptstraße 5, 10115 Berlin",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Il mio indirizzo: 29 Rue de Tanger, Paris",
            "29 Rue de Tanger, Paris",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "at ul. Chrzanowska 61, 02-495 Warszawa",
            "ul. Chrzanowska 61, 02-495 Warszawa",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "The address is PSC 0413, Box 8144\nAPO AA 42323",
            "PSC 0413, Box 8144\nAPO AA 42323",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "I'll meet you at USS Mahler\nFPO AA 70489 after",
            "USS Mahler\nFPO AA 70489",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "The bus station is on P.O. Box 104",
            "P.O. Box 104",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "it is the corner of Dalbraut 99 and Frederikke Coves",
            "the corner of Dalbraut 99 and Frederikke Coves",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Tosh Olsen lives at 172 Maneeži 75, Saareküla",
            "172 Maneeži 75, Saareküla",
            "STREET_ADDRESS"
        ));
    }

    #[test]
    fn address_lookalikes() {
        for t in [
            "See Table 2 and Figure 3 for details.",
            "We upgraded to Windows 10 Pro 2 weeks ago.",
            "we need 3 more road trips this year",
            "I walked 5 blocks down the street.",
            "The price is $1,975 for 12 Wisdom Teeth Removal kits.",
            "Call me at +44 20 7946 0958 tomorrow.",
            "Version 2.3.1 was released in Python 3 Cookbook.",
            "In 2019 Apple sold 300 Million phones.",
            "Capitalized Words Like Wisdom 12 appear here.",
        ] {
            assert!(none_of(t, "STREET_ADDRESS"), "{t}: {:?}", find(t));
        }
    }

    #[test]
    fn dates() {
        assert!(has(
            "She was born on 10/5/1971. Her",
            "10/5/1971",
            "DATE_TIME"
        ));
        assert!(has(
            "Date: 1978-04-13 12:20:39\nName",
            "1978-04-13 12:20:39",
            "DATE_TIME"
        ));
        assert!(has(
            "Today is 2024-03-15T14:30:00-05:00 or not?",
            "2024-03-15T14:30:00-05:00",
            "DATE_TIME"
        ));
        assert!(has("Today is 21.5.2021", "21.5.2021", "DATE_TIME"));
        assert!(has("Today is 5/2021", "5/2021", "DATE_TIME"));
        assert!(has("Today is 5/21", "5/21", "DATE_TIME"));
        assert!(has(
            "It happened on March 3rd, 1987 at 10:30 am.",
            "March 3rd, 1987 at 10:30 am",
            "DATE_TIME"
        ));
        assert!(has(
            "It happened on 3 March 1987.",
            "3 March 1987",
            "DATE_TIME"
        ));
        assert!(has(
            "Due Monday, June 5, 2023.",
            "Monday, June 5, 2023",
            "DATE_TIME"
        ));
        assert!(has("We'll meet Thursday at noon", "Thursday", "DATE_TIME"));
        assert!(has(
            "Orchestra was founded in 1973. Since",
            "1973",
            "DATE_TIME"
        ));
        let dob = find("Date of birth: 12/31/1999");
        assert!(dob
            .iter()
            .any(|(v, l, s)| v == "12/31/1999" && *l == "DATE_TIME" && *s >= 0.9));
    }

    #[test]
    fn date_lookalikes() {
        for t in [
            "Today is2024-06-05T09:15:30.500-07:00",
            "Today is5/21",
            "Upgrade to v1.2.3 or 1.2.3.4 now",
            "Add 1/2 cup of sugar",
            "The IBAN AT61 1904 3002 3457 3201 is mine",
            "It costs $1999 and weighs 2000 grams",
            "Call 555-12-2020 please",
            "Version 13.45.2021 is out",
            "We processed 2000 records",
        ] {
            assert!(none_of(t, "DATE_TIME"), "{t}: {:?}", find(t));
        }
    }

    #[test]
    fn ages() {
        assert!(has("He just turned 46 years old", "46", "AGE"));
        assert!(has("Patient is a 62-year-old male", "62", "AGE"));
        assert!(has("father retired at the age of 45", "45", "AGE"));
        assert!(has("and i'm 23 y/o.", "23", "AGE"));
        assert!(has("aged 42, she moved", "42", "AGE"));
        assert!(has("I am 42.", "42", "AGE"));
        assert!(none_of("I'm 5 minutes away", "AGE"));
        assert!(none_of("I am 300 miles away and 12 people came", "AGE"));
        assert!(none_of("The 42 files were copied", "AGE"));
    }

    #[test]
    fn postcodes() {
        assert!(has(
            "My address is SW1A 1AA in London",
            "SW1A 1AA",
            "UK_POSTCODE"
        ));
        assert!(has("W1A 1HQ", "W1A 1HQ", "UK_POSTCODE"));
        assert!(has("my zip code is 35350", "35350", "ZIP_CODE"));
        assert!(has("ZIP: 94105-1234", "94105-1234", "ZIP_CODE"));
        assert!(has("PLZ 80331", "80331", "DE_PLZ"));
        for t in ["QA1 1AA", "VA1 1AA", "M1 1CA", "1A1 1AA", "ABCM11AADEF"] {
            assert!(none_of(t, "UK_POSTCODE"), "{t}: {:?}", find(t));
        }
        assert!(none_of("PLZ 00000", "DE_PLZ"));
        assert!(none_of("The order 35350 shipped", "ZIP_CODE"));
    }

    #[test]
    fn plates() {
        assert!(has(
            "Vehicles AB51 ABC and BD62XYZ were seen",
            "AB51 ABC",
            "UK_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "Vehicles AB51 ABC and BD62XYZ were seen",
            "BD62XYZ",
            "UK_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "License plate 34 ABC 1234",
            "34 ABC 1234",
            "TR_LICENSE_PLATE"
        ));
        assert!(has(
            "Bike's registration number is OD02BA2341 with",
            "OD02BA2341",
            "IN_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "Plates: APP-456CV and KJA-999PZ",
            "KJA-999PZ",
            "NG_VEHICLE_REGISTRATION"
        ));
        assert!(has("B-AB-1234", "B-AB-1234", "DE_KFZ"));
        for t in [
            "AQ51 ABC",
            "AB49 ABC",
            "AB51 AIB",
            "I123 BCD",
            "ABCD-123EF",
            "AB-12CD",
            "123-456AB",
            "B 1234",
            "BXYZ AB 1234",
            "at 10 AM 2020",
        ] {
            let f = find(t);
            assert!(
                !f.iter().any(|(_, l, _)| l.contains("VEHICLE")
                    || l.contains("PLATE")
                    || *l == "DE_KFZ"),
                "{t}: {f:?}"
            );
        }
    }

    #[test]
    fn titles_and_nrp() {
        assert!(has("Hello, this is Dr. Kyle Kuefer.", "Dr.", "TITLE"));
        assert!(has("correct it to Mrs. Baker", "Mrs.", "TITLE"));
        assert!(none_of("1737 Cheriton Dr. Reuquén", "TITLE"));
        assert!(none_of("Mr. is an abbreviation", "TITLE"));
        assert!(has(
            "I am cambodian but I live in the UK.",
            "cambodian",
            "NRP"
        ));
        assert!(has("We are proud saudis", "saudis", "NRP"));
        assert!(has(
            "the Italian government formally began",
            "Italian",
            "NRP"
        ));
        assert!(none_of("The text is written in English.", "NRP"));
        assert!(none_of("A jeweler and a mundane thing", "NRP"));
    }

    #[test]
    fn never_panics_on_odd_utf8() {
        let r = QuasiRecognizer::new();
        let mut out = Vec::new();
        for t in [
            "",
            "1",
            "é1",
            "1é",
            "ΠΑΦΟΣ 12",
            "12 Μεγάλη Άμμος 184, ΠΑΦΟΣ",
            "Straße 5\u{301}",
            "\u{10FFFF}9 a",
            "9\u{0300}9",
            "PSC 12é",
            "Mr.",
            "2024-",
            "March 3",
            "💡12 Main St💡",
        ] {
            r.find(t, &mut out);
        }
        for c in &out {
            assert!(c.start <= c.end);
        }
        // Every suffix of a mixed-script address block, cut at each char boundary.
        let block = "Λεωφόρος Συγγρού 119 Nino Point\n Apt. 658\n ΑΓΙΟΣ ∆ΟΜΕΤΙΟΣ\n Cyprus (Greek) 25572, İ corner of 5 Straße 3. 12/5/2020 Mr. X aged 4 SW1A 1AA";
        for (i, _) in block.char_indices() {
            out.clear();
            r.find(&block[i..], &mut out);
            for c in &out {
                assert!(
                    block[i..].is_char_boundary(c.start)
                        && block[i..].is_char_boundary(c.end)
                        && c.start < c.end
                );
            }
        }
    }
}
