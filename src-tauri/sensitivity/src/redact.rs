//! Fragments and redaction: splits scanned text into sentence-sized fragments, rates each, and
//! renders the text exactly as a cloud provider would receive it (maskable spans replaced by
//! placeholders, `local_only` fragments withheld).

use super::pseudonym::Pseudonymizer;
use super::{is_content, Provenance, ScanReport, Scanner, Span, Verdict};
use serde::Serialize;

/// A sentence-sized piece of a scanned text, in code point offsets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fragment {
    pub start: usize,
    pub end: usize,
    pub verdict: Verdict,
    /// Indices into the report's `spans` that lie in this fragment.
    pub spans: Vec<usize>,
}

/// Splits at sentence boundaries (`sentences`: UAX #29, fast for ASCII), never inside a span: a span that crosses a
/// boundary (a multi-line address) joins the fragments it touches.
pub fn fragments(text: &str, report: &ScanReport, provenance: Provenance) -> Vec<Fragment> {
    let mut bounds: Vec<(usize, usize)> = Vec::new(); // code points
    let mut cp = 0usize;
    for (s, e) in super::sentences::sentence_bounds(text) {
        let piece = &text[s..e];
        // Code points; the byte length is the count for ASCII (almost every sentence).
        let n = if piece.is_ascii() {
            piece.len()
        } else {
            piece.chars().count()
        };
        bounds.push((cp, cp + n));
        cp += n;
    }
    // Merge fragments that a span crosses. Spans are sorted by start and do not overlap, so
    // one forward pointer keeps this linear.
    let spans = &report.spans;
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(bounds.len());
    let mut k = 0usize;
    for (s, e) in bounds {
        let crossing = match merged.last() {
            Some(&(_, last_end)) => {
                while k < spans.len() && spans[k].end <= last_end {
                    k += 1;
                }
                k < spans.len() && spans[k].start < last_end
            }
            None => false,
        };
        match merged.last_mut() {
            Some(last) if crossing => last.1 = e,
            _ => merged.push((s, e)),
        }
    }
    let masked = report.mask_flags();
    let mut k = 0usize;
    let mut out: Vec<Fragment> = merged
        .into_iter()
        .map(|(start, end)| {
            while k < spans.len() && spans[k].end <= start {
                k += 1;
            }
            let mut idx = Vec::new();
            let mut j = k;
            while j < spans.len() && spans[j].start < end {
                idx.push(j);
                j += 1;
            }
            let verdict = if provenance == Provenance::SensitiveSource
                || idx.iter().any(|&i| is_content(&spans[i].label))
            {
                Verdict::LocalOnly
            } else if idx.iter().any(|&i| masked[i]) {
                Verdict::Maskable
            } else {
                Verdict::Public
            };
            Fragment {
                start,
                end,
                verdict,
                spans: idx,
            }
        })
        .collect();
    keep_quoted_records_whole(text, spans, &mut out);
    out
}

/// A private matter inside a quoted record — a JSON string value, a quoted note, one message of
/// an exported conversation — makes the whole record private, not only its sentence: "Lucas
/// shows signs of improvement with the new treatment plan. Regular check-ins monitor his
/// progress." is one patient's file, and the second sentence says as much about him as the
/// first. Records are delimited by unescaped double quotes; text outside quotes (a prompt's
/// prose) is judged sentence by sentence as before, so "I have diabetes. What should I eat?"
/// still asks its question in the cloud.
fn keep_quoted_records_whole(text: &str, spans: &[Span], frags: &mut [Fragment]) {
    if !frags.iter().any(|f| f.verdict == Verdict::LocalOnly) || !text.contains('"') {
        return;
    }
    // Code point positions of unescaped '"'.
    let mut quotes = Vec::new();
    let mut prev = '\0';
    for (cp, c) in text.chars().enumerate() {
        if c == '"' && prev != '\\' {
            quotes.push(cp);
        }
        prev = c;
    }
    let mut records: Vec<(usize, usize)> = Vec::new();
    for f in frags.iter().filter(|f| f.verdict == Verdict::LocalOnly) {
        for &i in &f.spans {
            let at = spans[i].start;
            if !is_content(&spans[i].label) {
                continue;
            }
            // Inside a record when an odd number of quotes precede it and one follows.
            let before = quotes.partition_point(|&q| q < at);
            if before % 2 == 1 && before < quotes.len() {
                records.push((quotes[before - 1] + 1, quotes[before]));
            }
        }
    }
    for f in frags.iter_mut() {
        if records.iter().any(|&(s, e)| f.start < e && s < f.end) {
            f.verdict = Verdict::LocalOnly;
        }
    }
}

/// What leaves the device for one text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Redaction {
    /// The text as the cloud sees it.
    pub text: String,
    /// Number of spans replaced by placeholders.
    pub masked: usize,
    /// Number of fragments withheld because their meaning is private.
    pub withheld: usize,
    pub fragments: Vec<Fragment>,
}

/// Marker put where a `local_only` fragment was withheld, so the cloud model knows something
/// was there without learning what.
pub const WITHHELD: &str = "[WITHHELD]";

/// The one masking decision for one text: its fragments, each with its class and the spans a
/// pseudonymizer replaces in it. The plan makes it once per fragment of a turn
/// (`router::plan`); the sanitizer applies it (`apply`) and decides nothing of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub provenance: Provenance,
    pub fragments: Vec<Decided>,
    /// Whether names, places, links and codes are masked in this text (`masks_entities`).
    pub personal: bool,
    /// The scanner's verdict over the whole text and its reasons.
    pub verdict: Verdict,
    pub reasons: Vec<String>,
}

/// One fragment of a `Decision`: code point offsets into the text, its class, and (unless it is
/// withheld) the spans to mask, relative to the fragment's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub start: usize,
    pub end: usize,
    pub class: Verdict,
    pub masks: Vec<Span>,
}

/// A plan's decisions by text: what the sanitizer applies to each part of a draft. A part the
/// plan never saw (a role, a header, an abstract written later in the turn) is decided when it
/// is sanitized, by the same `decide`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decisions(std::sync::Arc<Vec<(String, Decision)>>);

impl Decisions {
    pub fn new(decided: Vec<(String, Decision)>) -> Self {
        Self(std::sync::Arc::new(decided))
    }

    /// The decision made for exactly `text` read with `provenance`.
    pub fn get(&self, text: &str, provenance: Provenance) -> Option<&Decision> {
        self.0
            .iter()
            .find(|(t, d)| d.provenance == provenance && t == text)
            .map(|(_, d)| d)
    }

    /// These decisions and `more` (decisions made later in the turn, for text the plan never
    /// saw: an abstract the local model wrote of private material).
    pub fn with(&self, more: Vec<(String, Decision)>) -> Self {
        let mut all = (*self.0).clone();
        all.extend(more);
        Self::new(all)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Scans `text` and decides what of it may leave (`personal`: mask names, places, links and
/// codes whatever the text reads like; policy private asks that). CPU work.
pub fn decide(scanner: &Scanner, text: &str, provenance: Provenance, personal: bool) -> Decision {
    decide_material(scanner, text, provenance, personal, false)
}

/// `decide` for material the user brought to a personal request (`material`: an attachment
/// of a request that reads as the user's own, `Scanner::scan_request`): its health, money and
/// legal terms count without a personal word beside them.
pub fn decide_material(
    scanner: &Scanner,
    text: &str,
    provenance: Provenance,
    personal: bool,
    material: bool,
) -> Decision {
    let report = scanner.scan_request(text, provenance, material);
    decide_report(text, &report, provenance, personal)
}

/// `decide` for a text already scanned.
pub fn decide_report(
    text: &str,
    report: &ScanReport,
    provenance: Provenance,
    personal: bool,
) -> Decision {
    let frags = fragments(text, report, provenance);
    // An exam question keeps the public names, ages and dates it asks about
    // (`exam_public_spans`), and a text that is not the user's own the famous people it names
    // (`figure_spans`); everything else the scanner found is masked as anywhere.
    let exam = exam_question(text);
    let mut public = if personal || (!exam && reads_personal(text)) {
        None
    } else {
        public_spans(text, report, exam)
    };
    // (A famous person's name kept above does not make the text personal; a text personal for
    // another finding, "Nani is 8 years old", masks it like any other name.)
    let personal = personal
        || masks_entities_but(text, report, |i| {
            public.as_ref().is_some_and(|p| p.get(i) == Some(&true))
        });
    if personal && !exam {
        public = None;
    }
    let (mask, reasons) = match &public {
        Some(public) if public.iter().any(|&p| p) => {
            let mask = report.mask_flags_keeping(public);
            let told: Vec<Span> = report
                .spans
                .iter()
                .zip(&mask)
                .filter(|(s, &m)| m || is_content(&s.label))
                .map(|(s, _)| s.clone())
                .collect();
            let mut reasons = super::reasons_for(&told, report.verdict, provenance);
            reasons.retain(|r| r != super::NOTHING_FOUND);
            let n = public.iter().filter(|&&p| p).count();
            reasons.push(if exam {
                format!("an exam question: {n} public name(s), age(s) or date(s) in it are what it asks about and leave as written")
            } else {
                format!("{n} well-known person's name(s) (public figures) leave as written: the text is not about you")
            });
            (mask, reasons)
        }
        _ => (report.mask_flags(), report.reasons.clone()),
    };
    let known = if personal {
        super::entities::names_in(text)
    } else {
        Vec::new()
    };
    // Decided once for the whole text, not per fragment: texts that are neither the user's own
    // material nor an exam question lose the names that are not public (below).
    let impersonal = if personal {
        None
    } else {
        super::CommonWords::system().filter(|_| !exam_question(text))
    };
    let world = impersonal.is_some() && asks_about_the_world(text);
    let mut chars = text.chars();
    let fragments = frags
        .iter()
        .map(|f| {
            let piece: String = chars.by_ref().take(f.end - f.start).collect();
            if f.verdict == Verdict::LocalOnly {
                return Decided {
                    start: f.start,
                    end: f.end,
                    class: Verdict::LocalOnly,
                    masks: Vec::new(),
                };
            }
            let mut local: Vec<Span> = f
                .spans
                .iter()
                .filter(|&&i| mask[i])
                .map(|&i| &report.spans[i])
                .filter(|s| s.start >= f.start && s.end <= f.end)
                .map(|s| Span {
                    start: s.start - f.start,
                    end: s.end - f.start,
                    ..s.clone()
                })
                .collect();
            if personal {
                add_entities(&piece, &known, &mut local);
                add_unknown_words(&piece, &mut local);
            } else if let Some(words) = impersonal {
                // Not the user's own material, not an exam. A name that is one everyday word
                // ("Rust") or a listed technology ("Python", "RFC 3339") names a thing, not a
                // person, and stays. A question about the world also keeps the names a
                // dictionary knows (what it asks about: "Plovdiv", "Tehran"); a task on a
                // named place or company ("an ad for moving from Belgium to Spain", "a plan
                // for Rostelecom") loses them (PUPA counts such names as the user's context),
                // and so does a name no dictionary knows ("Jeddah", "Point Nemo"). A person's
                // name (a listed name and more: "Maria Keller") is kept only as a famous
                // person's (`figures`, below), whatever the dictionary knows of its words.
                let public = |w: &str| {
                    let parts: Vec<&str> = w
                        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
                        .filter(|p| !p.is_empty())
                        .collect();
                    let person = parts.len() > 1 && super::person::listed_name(parts[0]);
                    // A single everyday word used as a name ("Rust", "Excel") names a thing;
                    // several ("Epic Systems", "Taco Bell") name a company.
                    (world && !person && parts.iter().any(|p| words.knows_name(p)))
                        || (!parts.is_empty()
                            && parts.iter().all(|p| {
                                public_term(p)
                                    || (parts.len() == 1 && words.knows(p) && !words.knows_name(p))
                            }))
                };
                let mut found = super::entities::find(&piece, &[]);
                // The user's employer, or the one they apply to, is theirs whatever its name
                // says ("Why would you like to join Intuit?" leaves as "[COMPANY_1]"). A famous
                // person's name stays, as the scanner's finding on it did.
                let figure = |a: usize, b: usize| super::figures::public_figure_at(&piece, a, b);
                found.retain(|e| {
                    !figure(e.start, e.end)
                        && (e.label == "NAME"
                            || (e.label == "ENTITY" && after_employer_cue(&piece, e.start, e.end))
                            || !public(&piece[e.start..e.end]))
                });
                add_found(&piece, found, &mut local);
                let chars: Vec<char> = piece.chars().collect();
                let bytes = char_to_byte(&piece);
                let unknown: Vec<Span> = unknown_word_spans(&piece)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|&(a, b)| {
                        !public(&chars[a..b].iter().collect::<String>())
                            && !figure(bytes[a], bytes[b])
                    })
                    .map(|(a, b)| word_span(&chars, a, b))
                    .collect();
                add_spans(unknown, &mut local);
            }
            // Tandem's own placeholders (`[IBAN_1]`, left in a link the cloud wrote, or in a
            // tool call's address argument) hold nothing private: masking them again would
            // only turn `[IBAN_1]` into `[[CODE_1]]`.
            let ours = placeholder_ranges(&piece);
            if !ours.is_empty() {
                local.retain(|s| !ours.iter().any(|&(a, b)| s.start >= a && s.end <= b));
            }
            Decided {
                start: f.start,
                end: f.end,
                class: if local.is_empty() {
                    Verdict::Public
                } else {
                    Verdict::Maskable
                },
                masks: local,
            }
        })
        .collect();
    Decision {
        provenance,
        fragments,
        personal,
        verdict: report.verdict,
        reasons,
    }
}

/// The verdict on a text about to leave (the egress door's last-line check) and the findings
/// behind it: the scanner's, except that what an exam question keeps on purpose and famous
/// people's names (`public_spans`, the same rule the plan applied) do not count.
pub fn leaving_verdict<'a>(text: &str, report: &'a ScanReport) -> (Verdict, Vec<&'a Span>) {
    // (A famous person's name counts as public in any payload: the plan keeps one only in a
    // text that is not the user's own, and a listed name identifies no private person.)
    let public = public_spans(text, report, exam_question(text));
    let Some(public) = public.filter(|p| p.iter().any(|&k| k)) else {
        return (report.verdict, report.spans.iter().collect());
    };
    let left: Vec<&Span> = report
        .spans
        .iter()
        .zip(&public)
        .filter(|(_, &p)| !p)
        .map(|(s, _)| s)
        .collect();
    let verdict = super::verdict_of(left.iter().map(|s| s.label.as_str()), Provenance::Content);
    (verdict, left)
}

/// Which of the scanner's findings leave as written: in an exam question `exam_public_spans`,
/// and anywhere the names of famous people (`figure_spans`). `None` when none would.
fn public_spans(text: &str, report: &ScanReport, exam: bool) -> Option<Vec<bool>> {
    let figures = figure_spans(text, report);
    let exam = if exam {
        exam_public_spans(text, report)
    } else {
        None
    };
    let public: Vec<bool> = match exam {
        Some(e) => e.iter().zip(&figures).map(|(&a, &b)| a || b).collect(),
        None => figures,
    };
    public.iter().any(|&p| p).then_some(public)
}

/// Which of the scanner's findings are a famous person's name (`figures::public_figure_at`):
/// "Sigmund Freud", "Marie Curie", not "Maria Keller" or "Phil Jones".
fn figure_spans(text: &str, report: &ScanReport) -> Vec<bool> {
    let bytes = char_to_byte(text);
    report
        .spans
        .iter()
        .map(|s| {
            s.label == "PERSON"
                && match (bytes.get(s.start), bytes.get(s.end)) {
                    (Some(&a), Some(&b)) => super::figures::public_figure_at(text, a, b),
                    _ => false,
                }
        })
        .collect()
}

/// Byte offset of every char of `text`, and of its end.
fn char_to_byte(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(text.len()))
        .collect()
}

/// Which of the scanner's findings in an exam question (`exam_question`) name public things
/// and stay: a person or group whose last word a general dictionary spells as a proper noun
/// ("John Stuart Mill", "Lenin", "Hindu" — public knowledge, as in `asks_about_the_world`), an
/// age ("a 45-year-old woman presents with …") and the context-only labels (dates, titles),
/// which identify nobody once no private name is left beside them. A name no dictionary knows
/// ("Emily Chen" in a teacher's quiz) is masked, and so is every identifier, address and
/// secret. `None` without a word list (nothing can be judged public).
fn exam_public_spans(text: &str, report: &ScanReport) -> Option<Vec<bool>> {
    let words = super::CommonWords::system()?;
    let chars: Vec<char> = text.chars().collect();
    // An answer option's line ("B. 400 N", "C. 298 Kelvin") is a choice, not a letter's
    // address block: a street address found starting on it is the exam's, not the user's.
    let mut options: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        let n = line.chars().count();
        if option_line(line) {
            options.push((at, at + n));
        }
        at += n + 1;
    }
    let on_option = |s: &Span| options.iter().any(|&(a, b)| a <= s.start && s.start < b);
    Some(
        report
            .spans
            .iter()
            .map(|s| {
                let span: String = chars
                    .get(s.start..s.end)
                    .map(|c| c.iter().collect())
                    .unwrap_or_default();
                match s.label.as_str() {
                    "AGE" => true,
                    "STREET_ADDRESS" => on_option(s),
                    "PERSON" | "NRP" => span
                        .split(|c: char| !c.is_alphanumeric())
                        .rfind(|w| !w.is_empty())
                        .is_some_and(|w| words.knows_name(w)),
                    l => super::is_context_only(l),
                }
            })
            .collect(),
    )
}

/// Where Tandem's placeholders (`[KIND_N]`) sit in `text`, in characters.
fn placeholder_ranges(text: &str) -> Vec<(usize, usize)> {
    static P: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = P
        .get_or_init(|| regex::Regex::new(r"\[[A-Z][A-Z]*(?:_[A-Z]+)*_\d{1,6}\]").ok())
        .as_ref()
    else {
        return Vec::new();
    };
    re.find_iter(text)
        .map(|m| {
            let start = text[..m.start()].chars().count();
            (start, start + m.as_str().chars().count())
        })
        .collect()
}

/// Renders `text` as the cloud receives it under `decision`: masks replaced by placeholders
/// (consistent within `pseudonymizer`), local-only fragments withheld. Decides nothing of its
/// own; the vault masks again the values it already holds wherever they recur
/// (`Pseudonymizer::mask`).
pub fn apply(pseudonymizer: &mut Pseudonymizer, text: &str, decision: &Decision) -> Redaction {
    let mut out = String::with_capacity(text.len());
    let (mut masked, mut withheld) = (0, 0);
    let mut chars = text.chars();
    let mut prev_withheld = false;
    for f in &decision.fragments {
        let piece: String = chars.by_ref().take(f.end - f.start).collect();
        match f.class {
            Verdict::LocalOnly => {
                if !prev_withheld {
                    out.push_str(WITHHELD);
                    // Keep the fragment's trailing whitespace so the layout survives.
                    let trail: String = piece
                        .chars()
                        .rev()
                        .take_while(|c| c.is_whitespace())
                        .collect();
                    out.extend(trail.chars().rev());
                    if trail.is_empty() {
                        out.push(' ');
                    }
                }
                withheld += 1;
                prev_withheld = true;
            }
            _ => {
                prev_withheld = false;
                let m = pseudonymizer.mask(&piece, &f.masks.iter().collect::<Vec<_>>());
                // (The plan's masks, and the values the vault already holds where they recur.)
                masked += m.replacements.len();
                out.push_str(&m.text);
            }
        }
    }
    Redaction {
        text: out,
        masked,
        withheld,
        fragments: decision
            .fragments
            .iter()
            .map(|f| Fragment {
                start: f.start,
                end: f.end,
                verdict: f.class,
                spans: Vec::new(),
            })
            .collect(),
    }
}

/// Scans `text` and renders what a cloud provider would receive (`decide` then `apply`).
pub fn redact(
    scanner: &Scanner,
    pseudonymizer: &mut Pseudonymizer,
    text: &str,
    provenance: Provenance,
) -> Redaction {
    apply(
        pseudonymizer,
        text,
        &decide(scanner, text, provenance, false),
    )
}

/// `redact` for a text already scanned.
pub fn redact_report(
    pseudonymizer: &mut Pseudonymizer,
    text: &str,
    report: &ScanReport,
    provenance: Provenance,
) -> Redaction {
    apply(
        pseudonymizer,
        text,
        &decide_report(text, report, provenance, false),
    )
}

/// Organisation and place names, links and codes identify people next to a personal
/// identifier, and in the user's own material: redaction masks them in such texts. A
/// question about the world ("Where is Plovdiv?") keeps them.
///
/// An exam question (lettered options) is about the world even when the scanner finds
/// something in it ("C. Morris Worm", "a 32-year-old man", a false address on "B. 400 N"): its
/// other names and terms are what it asks about and stay ("Love Bug", "SQL Slammer"); masking
/// them too left 285 of 1,410 dev MMLU questions with unanswerable placeholders. (What the
/// scanner found is judged by `exam_public_spans`.) Nor do its length (a case vignette, a
/// quoted passage) or its first-person words (a textbook's "we", a quoted speech, a moral
/// scenario's "I") make it the user's own material. Policy private still masks everything
/// (`decide`'s `personal`).
pub fn masks_entities(text: &str, report: &ScanReport) -> bool {
    masks_entities_but(text, report, |_| false)
}

/// `masks_entities`, with the findings `kept(i)` says leave as written not counted.
fn masks_entities_but(text: &str, report: &ScanReport, kept: impl Fn(usize) -> bool) -> bool {
    if exam_question(text) {
        return false;
    }
    reads_personal(text)
        || report
            .spans
            .iter()
            .enumerate()
            .any(|(i, s)| !super::is_context_only(&s.label) && !is_content(&s.label) && !kept(i))
}

/// Whether a text is a short question about the world ("Which river flows through Plovdiv?",
/// "Who founded Rostelecom?"): interrogative, at most `WORLD_QUESTION_WORDS` words, not the
/// user's own material (`reads_personal`). Its names are what it asks about and stay; every
/// other text — a task on a named company, an ad for a town's shop, a translation — loses its
/// names to placeholders (PUPA counts such names as the user's private context).
pub fn asks_about_the_world(text: &str) -> bool {
    const ASK: &[&str] = &[
        "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "was",
        "were", "does", "do", "did", "can", "could", "name",
    ];
    if reads_personal(text) {
        return false;
    }
    if exam_question(text) {
        return true;
    }
    let words = text.split_whitespace().count();
    if words == 0 || words > WORLD_QUESTION_WORDS {
        return false;
    }
    // A link or a reference code is the user's own material, and a numbered list ("1. Epic
    // Systems 2. Cerner …") is a batch of the user's names, not one question.
    let numbered = text
        .split_whitespace()
        .filter(|w| {
            w.len() > 1 && w.ends_with('.') && w[..w.len() - 1].chars().all(|c| c.is_ascii_digit())
        })
        .count();
    if numbered >= 2
        || super::entities::find_named(text)
            .iter()
            .any(|e| !matches!(e.label, "ENTITY" | "NAME"))
    {
        return false;
    }
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    text.trim_end().ends_with('?') || ASK.contains(&first.as_str())
}

/// Names of technologies that name no one ("Python", "Kubernetes", "RFC"): data, one per line.
const PUBLIC_TERMS: &str = include_str!("data/public_terms.txt");

/// Whether `word` names a technology listed in `PUBLIC_TERMS` (any case).
fn public_term(word: &str) -> bool {
    static SET: std::sync::OnceLock<rustc_hash::FxHashSet<String>> = std::sync::OnceLock::new();
    SET.get_or_init(|| data_list(PUBLIC_TERMS))
        .contains(&word.to_lowercase())
}

/// The entries of a data list (one per line, `#` comments), lowercased.
fn data_list(text: &str) -> rustc_hash::FxHashSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect()
}

/// An exam's question: lettered options ("A. …", "(B) …") on their own lines. It asks about
/// the world whatever its length, and its names and terms are what it asks about.
pub fn exam_question(text: &str) -> bool {
    text.lines().filter(|l| option_line(l)).count() >= 2
}

/// A line that opens with an answer option's letter: "A. …", "(B) …", "C) …".
fn option_line(line: &str) -> bool {
    let l = line.trim_start().trim_start_matches('(');
    let mut c = l.chars();
    matches!(c.next(), Some('A'..='H')) && matches!(c.next(), Some('.' | ')'))
}

/// The longest question `asks_about_the_world` reads as one about the world (MMLU's longer
/// questions carry reading passages: their names are masked and restored).
pub const WORLD_QUESTION_WORDS: usize = 25;

/// Whether a text reads as the user's own material rather than a question about the world:
/// first-person words ("my", "we", "I'm"), a letter's greeting or closing, or pasted material
/// (80 words or more: a CV, a press release, an email thread). Measured on the development
/// sets: 66% of PUPA's private requests read so, 5% of GSM8K and 23% of MMLU questions
/// (long reading passages mostly) — those lose their names to placeholders, the price of not
/// sending the user's names, places and organisations (bench/RESULTS.md, "Delegation").
pub fn reads_personal(text: &str) -> bool {
    const FIRST_PERSON: &[&str] = &[
        "I", "I'm", "I've", "I'd", "I'll", "me", "my", "My", "mine", "myself", "we", "We", "our",
        "Our", "ours", "us", "we're", "We're", "we've", "We've",
    ];
    const LETTER: &[&str] = &["Dear", "Regards", "Sincerely"];
    let mut words = 0usize;
    for w in text.split_whitespace() {
        words += 1;
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
        let w = w.trim_end_matches(['\'', '’']);
        let straight = w.replace('’', "'");
        if FIRST_PERSON.contains(&straight.as_str()) || LETTER.contains(&w) {
            return true;
        }
    }
    words >= 80
}

/// Code point ranges of the entities `masks_entities` texts lose to placeholders.
pub fn entity_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    add_found(text, super::entities::find_named(text), &mut spans);
    spans.into_iter().map(|s| (s.start, s.end)).collect()
}

/// Code point ranges of the words of `text` no everyday-word list knows (names the capital
/// letter rules cannot see: "linkedin", "belarus", other scripts, codes), everyday acronyms
/// ("IBAN", "USA") excepted; `None` when the system has no word list.
pub fn unknown_word_spans(text: &str) -> Option<Vec<(usize, usize)>> {
    let words = super::CommonWords::system()?;
    let spans = words.unknown_spans(text);
    if spans.is_empty() {
        return Some(spans);
    }
    let chars: Vec<char> = text.chars().collect();
    Some(
        spans
            .into_iter()
            .filter(|&(a, b)| {
                let w: String = chars[a..b].iter().collect();
                !super::entities::is_plain_word(&w)
            })
            .collect(),
    )
}

/// Adds the words of `piece` no everyday-word list knows as entity spans where no span lies.
fn add_unknown_words(piece: &str, spans: &mut Vec<Span>) {
    let chars: Vec<char> = piece.chars().collect();
    let words = unknown_word_spans(piece)
        .unwrap_or_default()
        .into_iter()
        .map(|(a, b)| word_span(&chars, a, b))
        .collect();
    add_spans(words, spans);
}

/// Countries by name: data, one per line.
const COUNTRIES: &str = include_str!("data/countries.txt");
/// Cities of at least 500,000 people that are no everyday word (GeoNames, CC BY 4.0;
/// `scripts/gen-cities.py`): data, one per line.
const CITIES: &str = include_str!("data/cities.txt");

/// The placeholder kind for a masked name: `COUNTRY` for a country and, where it would
/// otherwise be a bare `ENTITY`, `CITY` for a large city (the cloud still knows what kind of
/// thing it works on: "flights from [CITY_1] to [CITY_2]"), else `default`. Names of persons
/// keep their kind ("Aden" may be either).
fn kind_of(name: &str, default: &str) -> String {
    static SETS: std::sync::OnceLock<[rustc_hash::FxHashSet<String>; 2]> =
        std::sync::OnceLock::new();
    let [countries, cities] = SETS.get_or_init(|| [data_list(COUNTRIES), data_list(CITIES)]);
    let lower = name.to_lowercase().replace('’', "'");
    let bare = lower.strip_suffix("'s").unwrap_or(&lower);
    let bare = bare.strip_prefix("the ").unwrap_or(bare);
    // A dotted name reaches here without its last full stop ("U.S" of "U.S.").
    if countries.contains(bare) || (bare.contains('.') && countries.contains(&format!("{bare}."))) {
        "COUNTRY".to_string()
    } else if default == "ENTITY" && cities.contains(bare) {
        "CITY".to_string()
    } else if let Some(kind) = matches!(default, "ENTITY" | "NAME")
        .then(|| kind_by_head(bare))
        .flatten()
    {
        kind.to_string()
    } else {
        default.to_string()
    }
}

/// The generic words names of a kind end in ("… Hospital", "… Inc") or open with before "of"
/// ("Bank of …"), and their placeholder kinds: data (`data/kinds.toml`).
#[derive(serde::Deserialize, Default)]
struct KindsFile {
    heads: rustc_hash::FxHashMap<String, String>,
    employer: Employer,
}

/// The words after which a name is an employer (`kinds.toml`'s `[employer]`).
#[derive(serde::Deserialize, Default)]
struct Employer {
    cues: Vec<String>,
    clause_cues: Vec<String>,
}

fn kinds_file() -> &'static KindsFile {
    static FILE: std::sync::OnceLock<KindsFile> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        // Embedded data, validated by `kinds_data_is_well_formed`; a broken file would fail
        // that test, so an empty table here only drops the generalization, never a mask.
        toml::from_str::<KindsFile>(include_str!("data/kinds.toml")).unwrap_or_default()
    })
}

fn kind_heads() -> &'static rustc_hash::FxHashMap<String, String> {
    &kinds_file().heads
}

/// Whether the name at bytes `start..end` of `text` follows an employer cue ("work at",
/// "interview with", `kinds.toml`; "join" only when the name ends the clause): the user's
/// employer, or the one they apply to.
fn after_employer_cue(text: &str, start: usize, end: usize) -> bool {
    // Only the last words before the name matter (the longest cue is under 40 bytes).
    let before = text[..start].trim_end();
    let before = before[super::types::floor_boundary(before, before.len().saturating_sub(40))..]
        .to_lowercase();
    let follows = |c: &String| {
        before.strip_suffix(c.as_str()).is_some_and(|rest| {
            rest.chars()
                .next_back()
                .is_none_or(|ch| !ch.is_alphanumeric())
        })
    };
    let employer = &kinds_file().employer;
    if employer.cues.iter().any(follows) {
        return true;
    }
    let after = text[end..].trim_start();
    let ends_clause = after.is_empty()
        || after.starts_with(['.', '?', '!', ',', ';', ':'])
        || after
            .get(..3)
            .is_some_and(|w| w.eq_ignore_ascii_case("as "));
    ends_clause && employer.clause_cues.iter().any(follows)
}

/// The kind a lower-cased name shows by its own generic words: its last one to three words
/// ("mount sinai hospital", "acme robotics inc.", "first credit union") or its first ones
/// before "of" ("bank of america"), with at least one other word left (the name itself).
fn kind_by_head(name: &str) -> Option<&'static str> {
    let heads = kind_heads();
    let words: Vec<&str> = name
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let n = words.len();
    for k in (1..n.min(4)).rev() {
        if let Some(kind) = heads.get(&words[n - k..].join(" ")) {
            return Some(kind);
        }
    }
    for k in (1..n.min(4)).rev() {
        if words.get(k) == Some(&"of") && k + 1 < n {
            if let Some(kind) = heads.get(&words[..k].join(" ")) {
                return Some(kind);
            }
        }
    }
    None
}

/// An unknown word's span (code points) in `piece`.
fn word_span(piece: &[char], start: usize, end: usize) -> Span {
    Span {
        start,
        end,
        label: kind_of(&piece[start..end].iter().collect::<String>(), "ENTITY"),
        tier: super::Tier::QuasiIdentifier,
        score: 0.5,
        detector: "words".into(),
    }
}

/// Adds `new` spans where no span of `spans` lies, keeping `spans` sorted.
fn add_spans(new: Vec<Span>, spans: &mut Vec<Span>) {
    let mut taken: Vec<(usize, usize)> = spans.iter().map(|x| (x.start, x.end)).collect();
    taken.sort_unstable();
    let before = spans.len();
    for s in new {
        let i = taken.partition_point(|&(_, end)| end <= s.start);
        if taken.get(i).is_some_and(|&(a, _)| a < s.end) {
            continue;
        }
        spans.push(s);
    }
    if spans.len() > before {
        spans.sort_by_key(|x| x.start);
    }
}

/// Adds entity spans of `piece` that do not overlap `spans` (code point offsets), keeping order.
fn add_entities(piece: &str, known: &[String], spans: &mut Vec<Span>) {
    add_found(piece, super::entities::find(piece, known), spans);
}

/// Whether `w` is one of the small words that join a name's parts ("and" in "Procter and Gamble").
fn joiner(w: &[char]) -> bool {
    let w: String = w.iter().collect();
    super::entities::JOINERS.contains(&w.as_str())
}

/// Adds `found` (entities of `piece`) as spans where no detector span lies.
fn add_found(piece: &str, found: Vec<super::entities::Entity>, spans: &mut Vec<Span>) {
    if found.is_empty() {
        return;
    }
    // Byte → code point for the entity bounds, in one pass.
    let mut cps = Vec::with_capacity(found.len() * 2);
    let mut marks: Vec<usize> = found.iter().flat_map(|e| [e.start, e.end]).collect();
    marks.sort_unstable();
    let mut it = piece
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(piece.len()))
        .enumerate()
        .peekable();
    for m in &marks {
        while let Some(&(cp, b)) = it.peek() {
            if b >= *m {
                cps.push((*m, cp));
                break;
            }
            it.next();
        }
    }
    // `cps` is sorted by byte mark; the existing spans are sorted and disjoint.
    let cp_of = |b: usize| {
        cps.binary_search_by_key(&b, |&(m, _)| m)
            .map_or(0, |i| cps[i].1)
    };
    let existing: Vec<(usize, usize)> = spans.iter().map(|x| (x.start, x.end)).collect();
    let chars: Vec<char> = piece.chars().collect();
    for e in found {
        let (s, t) = (cp_of(e.start), cp_of(e.end));
        // The parts of the entity no detector span covers ("Longport Patrolman" before a
        // detected "Alec Morelli"), each trimmed of spaces and punctuation.
        let mut free = Vec::new();
        let mut at = s;
        let first = existing.partition_point(|&(_, end)| end <= s);
        for &(a, b) in existing[first..].iter().take_while(|&&(a, _)| a < t) {
            free.push((at, a.max(at)));
            at = at.max(b);
        }
        free.push((at, t));
        for (mut a, mut b) in free {
            // Trimmed of spaces and punctuation, and of the small words that join a name's
            // parts ("Anna and Maria Keller", "Eklund, Michael and Hodge": with the names
            // already masked, "and" alone is no name).
            loop {
                while a < b && !chars[a].is_alphanumeric() {
                    a += 1;
                }
                while b > a && !chars[b - 1].is_alphanumeric() {
                    b -= 1;
                }
                // (A detector span may run past the entity's end: nothing is left.)
                if a >= b {
                    break;
                }
                let lead = chars[a..b]
                    .iter()
                    .position(|c| c.is_whitespace())
                    .filter(|&k| joiner(&chars[a..a + k]));
                let trail = chars[a..b]
                    .iter()
                    .rposition(|c| c.is_whitespace())
                    .filter(|&k| joiner(&chars[a + k + 1..b]));
                if let Some(k) = lead {
                    a += k;
                } else if let Some(k) = trail {
                    b = a + k;
                } else {
                    break;
                }
            }
            if b < a + 2 || joiner(&chars[a..b]) {
                continue;
            }
            let word: String = chars[a..b].iter().collect();
            if super::entities::is_plain_word(&word) {
                continue;
            }
            // A name with no kind of its own after an employer cue is a company.
            let mut label = kind_of(&word, e.label);
            if label == "ENTITY" && after_employer_cue(piece, e.start, e.end) {
                label = "COMPANY".into();
            }
            spans.push(Span {
                start: a,
                end: b,
                label,
                tier: super::Tier::QuasiIdentifier,
                score: 0.5,
                detector: "entities".into(),
            });
        }
    }
    spans.sort_by_key(|x| x.start);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_data_is_well_formed() {
        let f: KindsFile = toml::from_str(include_str!("data/kinds.toml")).unwrap();
        assert!(f.heads.len() > 50);
        assert!(f.employer.cues.len() > 10 && !f.employer.clause_cues.is_empty());
        for c in f.employer.cues.iter().chain(&f.employer.clause_cues) {
            assert_eq!(c, &c.to_lowercase(), "{c}");
            assert!(!c.contains("  ") && c.trim() == c, "{c:?}");
        }
        for (head, kind) in &f.heads {
            assert_eq!(head, &head.to_lowercase(), "{head}");
            assert!(!head.contains("  ") && head.trim() == head, "{head:?}");
            assert!(
                !kind.is_empty() && kind.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_name_keeps_the_kind_its_own_words_show() {
        for (name, kind) in [
            ("Mount Sinai Hospital", "HOSPITAL"),
            ("Acme Robotics Inc.", "COMPANY"),
            ("Bank of Westmoor", "BANK"),
            ("the University of Leeds", "UNIVERSITY"),
            ("Harlow Credit Union's", "BANK"),
            ("Sunrise Bakery", "SHOP"),
            ("Goldman Sachs", "ENTITY"),
            // The generic word alone is no name; a person keeps their kind.
            ("Hospital", "ENTITY"),
            ("Bank of", "ENTITY"),
        ] {
            assert_eq!(kind_of(name, "ENTITY"), kind, "{name}");
        }
        assert_eq!(kind_of("Anna Bank", "PERSON"), "PERSON");
        assert_eq!(kind_of("Tehran", "ENTITY"), "CITY");
        assert_eq!(kind_of("U.S", "ENTITY"), "COUNTRY");
    }
}
