//! Names of organisations, places and products, links, and reference codes. Harmless in a
//! question about the world ("Where is Plovdiv?"), identifying next to a person ("Maria from
//! Plovdiv works at Acme"): so these are not reported as sensitive spans; redaction decides
//! where to mask them (`redact::decide_report`: the user's own material, tasks on named things,
//! not the public names of a question about the world).

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;

/// Words that start sentences or are capitalised by grammar alone; never masked on their own.
const COMMON: &[&str] = &[
    "I",
    "I'm",
    "I've",
    "I'd",
    "I'll",
    "A",
    "An",
    "The",
    "This",
    "That",
    "These",
    "Those",
    "We",
    "You",
    "He",
    "She",
    "It",
    "They",
    "My",
    "Our",
    "Your",
    "His",
    "Her",
    "Their",
    "Its",
    "Dear",
    "Hi",
    "Hello",
    "Hey",
    "Please",
    "Thank",
    "Thanks",
    "Write",
    "Can",
    "Could",
    "Would",
    "Should",
    "Will",
    "Shall",
    "May",
    "Might",
    "Must",
    "What",
    "How",
    "Why",
    "When",
    "Where",
    "Which",
    "Who",
    "Whom",
    "Whose",
    "Is",
    "Are",
    "Was",
    "Were",
    "Be",
    "Do",
    "Does",
    "Did",
    "Have",
    "Has",
    "Had",
    "In",
    "On",
    "At",
    "For",
    "To",
    "From",
    "With",
    "Without",
    "And",
    "But",
    "Or",
    "Nor",
    "If",
    "As",
    "By",
    "Of",
    "So",
    "Also",
    "Here",
    "There",
    "Then",
    "Now",
    "Yes",
    "No",
    "Not",
    "Ok",
    "OK",
    "Okay",
    "Best",
    "Regards",
    "Sincerely",
    "Kind",
    "Subject",
    "Re",
    "Note",
    "Make",
    "Give",
    "Tell",
    "Help",
    "Create",
    "Rewrite",
    "Summarize",
    "Summarise",
    "Translate",
    "Explain",
    "List",
    "Add",
    "Use",
    "Let",
    "Let's",
    "After",
    "Before",
    "During",
    "Since",
    "Until",
    "While",
    "Although",
    "However",
    "Therefore",
    "Moreover",
    "Furthermore",
    "Additionally",
    "Finally",
    "First",
    "Second",
    "Third",
    "Next",
    "Last",
    "Some",
    "Many",
    "Most",
    "All",
    "Any",
    "Each",
    "Every",
    "Both",
    "Other",
    "Another",
    "Such",
    "One",
    "Two",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Prof",
    "Sir",
    "Madam",
    "Hope",
    "Attached",
    "Please,",
    "Send",
    "Great",
    "Good",
    "Find",
    "Check",
    "Describe",
    "Generate",
    "Provide",
    "Draft",
    "Edit",
    "Fix",
    "Read",
    "Show",
    "Keep",
    "Take",
    "Get",
    "Go",
    "Come",
    "See",
    "Look",
    "Looking",
    "Try",
    "Think",
    "Know",
    "Want",
    "Need",
    "Ask",
    "Call",
    "Buy",
    "Pay",
    "Start",
    "Stop",
    "Open",
    "Close",
    "Remember",
    "Imagine",
    "Suppose",
    "Consider",
    "Compare",
    "Calculate",
    "Convert",
    "Improve",
    "Correct",
    "Continue",
    "Answer",
    "Question",
    "Include",
    "Avoid",
    "Because",
    "Yet",
    "Just",
    "Only",
    "Still",
    "Even",
    "Again",
    "Maybe",
    "Perhaps",
    "Sure",
    "Thus",
    "Hence",
    "Instead",
    "Meanwhile",
    "Overall",
    "Today",
    "Yesterday",
    "Tomorrow",
    "Tonight",
    "Recently",
    "Currently",
    "Unfortunately",
    "Hopefully",
    "Sorry",
    "Welcome",
    "Congratulations",
    "Cheers",
    "Name",
    "Date",
    "Title",
    "Address",
    "Phone",
    "Email",
    "Summary",
    "Experience",
    "Education",
    "Skills",
    "Objective",
    "Profile",
    "References",
    "Introduction",
    "Conclusion",
    "Background",
    "Example",
    "Step",
    "Task",
    "Input",
    "Output",
    "Result",
    "Results",
    "Total",
    "Price",
    "Cost",
    "Time",
    "Day",
    "Week",
    "Month",
    "Year",
    "Morning",
    "Evening",
    "Everyone",
    "Someone",
    "Nothing",
    "Everything",
    "Something",
    "It's",
    "That's",
    "There's",
    "What's",
    "Here's",
    "Don't",
    "Can't",
    "Isn't",
    "Yours",
    "Mine",
    "Hers",
    "Ours",
    "Theirs",
    "Me",
    "Us",
    "Him",
    "Them",
    "Very",
    "Much",
    "More",
    "Less",
    "Few",
    "Several",
    "New",
    "Old",
    "Fwd",
    "Attention",
    "Important",
    "Update",
    "Reminder",
    "Fine",
    "True",
    "False",
    "Steps",
    "Notes",
    "Context",
    "Details",
    "Requirements",
    "Goal",
    "Goals",
    "Instructions",
    "Options",
    "Rules",
    "Question:",
    "Points",
    "Tips",
    "Ideas",
    "Topic",
    "Description",
    "Purpose",
    "Scope",
    "Agenda",
    "Comments",
];

/// All-capital words that are units, currencies or everyday acronyms; any other one (a
/// ticker, an agency, a team: "NVDA", "GDBOP") is masked like a name.
const ACRONYMS: &[&str] = &[
    "A", "I", "OK", "AM", "PM", "EUR", "USD", "GBP", "CHF", "JPY", "CNY", "INR", "PDF", "DOC",
    "DOCX", "CSV", "TXT", "XLS", "XLSX", "JSON", "XML", "HTML", "CSS", "SQL", "API", "URL", "HTTP",
    "HTTPS", "IBAN", "BIC", "SWIFT", "VAT", "CEO", "CFO", "CTO", "COO", "HR", "IT", "AI", "ML",
    "CV", "FAQ", "ASAP", "FYI", "TBD", "ETA", "DIY", "TV", "PC", "ID", "PS", "NB", "RE", "FW",
    "FWD", "KM", "KG", "CM", "MM", "MB", "GB", "TB", "KB", "GHZ", "MHZ", "RAM", "CPU", "GPU",
    "USB", "LED", "LCD", "SMS", "PIN", "ATM", "GPS", "DNA", "RNA", "BMI", "MRI", "ICU", "ER", "IQ",
    "Q1", "Q2", "Q3", "Q4", "UTC", "GMT", "CET", "EST", "PST", "BC", "AD", "CE", "BCE", "MD", "BA",
    "MA", "BS", "MS",
];

pub(crate) struct Entity {
    /// Byte offsets into the text given to `find`.
    pub start: usize,
    pub end: usize,
    pub label: &'static str,
}

/// The small words that join the capitalised parts of one name ("Bank of America", "Procter and
/// Gamble", "van der Berg"); never a name alone.
pub(crate) const JOINERS: &[&str] = &[
    "of", "de", "la", "del", "der", "and", "&", "the", "van", "von", "di", "da", "du", "le", "al",
];

fn patterns() -> &'static (Regex, Regex, Regex) {
    static P: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    P.get_or_init(|| {
        let proper = Regex::new(&format!(
            r"\b\p{{Lu}}[\p{{L}}\p{{M}}\d'’&\-]*(?:\.?(?:[ \t]+(?:(?:{})[ \t]+)?\p{{Lu}}[\p{{L}}\p{{M}}\d'’&\-]*)+)?",
            JOINERS.join("|")
        ));
        let url = Regex::new(r"(?i)\b(?:https?://|www\.)[^\s<>()\[\]]+|\b[\w.-]+\.(?:com|org|net|edu|gov|io|ai|co|xyz|info|me|app|dev)(?:/[^\s<>()\[\]]*)?\b");
        // Tokens mixing letters and digits: order numbers, account references, hostnames.
        let code = Regex::new(r"\b[\p{L}\d][\p{L}\d/#:._\-]*\d[\p{L}\d/#:._\-]*\b|\b\d[\p{L}\d/#:._\-]*\p{L}[\p{L}\d/#:._\-]*\b");
        match (proper, url, code) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            // Constant patterns: covered by tests, so this arm is unreachable in a tested build.
            _ => unreachable!("entity patterns compile"),
        }
    })
}

/// Phrases that introduce a name: a greeting at the start of a line ("Hi May,"), or a kind of
/// thing followed by "called"/"named" ("a company called tech stop"). Knowledge, kept as data
/// (`INTRODUCERS`); the name runs to the next punctuation or linking word ("in", "that"), at
/// most three words.
fn introduced() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        let kinds = INTRODUCERS.join("|");
        Regex::new(&format!(
            r"(?m)(?:^[ \t]*(?i:hi|hello|hey|dear)[ \t]+(?P<name>\p{{L}}[\p{{L}}'’\-]*)[ \t]*[,!]|\b(?i:{kinds})[ \t]+(?i:called|named)[ \t]+(?P<name2>\p{{L}}[\p{{L}}\d'’\-]*(?:[ \t]+\p{{L}}[\p{{L}}\d'’\-]*){{0,2}}?)(?:[ \t]*[,.;:!?)\n]|$|[ \t]+(?:in|at|on|of|from|that|which|who|where|located|based|with|for|and|to|is|was|has|had|will|sells|makes)\b))"
        ))
        .unwrap_or_else(|_| unreachable!("introducer pattern compiles"))
    })
}

/// Kinds of things whose name follows "called" or "named".
const INTRODUCERS: &[&str] = &[
    "company",
    "business",
    "firm",
    "shop",
    "store",
    "brand",
    "startup",
    "agency",
    "restaurant",
    "cafe",
    "bakery",
    "app",
    "website",
    "channel",
    "band",
    "school",
    "person",
    "man",
    "woman",
    "boy",
    "girl",
    "guy",
    "student",
    "friend",
    "colleague",
    "customer",
    "client",
    "character",
    "dog",
    "cat",
    "town",
    "village",
    "street",
    "project",
    "product",
];

/// True when only spaces, quotes or bullets separate `at` from the start of the text or from
/// a sentence end (`.`, `!`, `?`, `:`, a newline).
fn sentence_start(text: &str, at: usize) -> bool {
    for c in text[..at].chars().rev() {
        match c {
            ' ' | '\t' | '"' | '\'' | '“' | '‘' | '(' | '-' | '*' | '•' => continue,
            '.' | '!' | '?' | ':' | '\n' | '\r' => return true,
            _ => return false,
        }
    }
    true
}

/// `COMMON` and `ACRONYMS` as sets: every capitalised word of a text is looked up.
fn plain_sets() -> &'static (HashSet<&'static str>, HashSet<&'static str>) {
    static SETS: OnceLock<(HashSet<&'static str>, HashSet<&'static str>)> = OnceLock::new();
    SETS.get_or_init(|| {
        (
            COMMON.iter().copied().collect(),
            ACRONYMS.iter().copied().collect(),
        )
    })
}

/// A grammar word or an everyday acronym: never masked on its own.
pub(crate) fn is_plain_word(t: &str) -> bool {
    let (common, acronyms) = plain_sets();
    common.contains(t) || (t.chars().all(|c| !c.is_lowercase()) && acronyms.contains(t))
}

/// Single-word names `find` reports in `text` (so not at a sentence start): the same word
/// opening another sentence of the text is a name too ("... led by the Longport police.
/// Longport officers ...").
pub(crate) fn names_in(text: &str) -> Vec<String> {
    let text = &*plain_escapes(text);
    names_of(text, &candidates(text))
}

/// `text` with each `\n`, `\r`, `\t` escape of a pasted export as two spaces: same byte
/// offsets, and "...:\n\nMark Benson" holds the name "Mark Benson" (a word boundary before
/// it), as the scanner's folding reads it.
fn plain_escapes(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let escape = |i: usize| b[i] == b'\\' && matches!(b.get(i + 1), Some(b'n' | b'r' | b't'));
    if !memchr::memchr_iter(b'\\', b).any(escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if escape(i) {
            out.extend_from_slice(b"  ");
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    // Only ASCII pairs were replaced by ASCII: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

fn names_of(text: &str, cands: &[(Entity, bool)]) -> Vec<String> {
    let mut names: Vec<String> = cands
        .iter()
        .filter(|(e, opener)| !opener && matches!(e.label, "ENTITY" | "NAME"))
        .map(|(e, _)| text[e.start..e.end].to_string())
        .filter(|t| !t.contains(char::is_whitespace))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Entities in `text`, sorted, non-overlapping. A lone capitalised word opening a sentence is
/// one only when it is in `known` (see `names_in`).
pub(crate) fn find(text: &str, known: &[String]) -> Vec<Entity> {
    let text = &*plain_escapes(text);
    resolve(text, candidates(text), known)
}

/// `find` with the names `text` itself gives (one pass of the patterns instead of two).
pub(crate) fn find_named(text: &str) -> Vec<Entity> {
    let text = &*plain_escapes(text);
    let cands = candidates(text);
    let names = names_of(text, &cands);
    resolve(text, cands, &names)
}

fn resolve(text: &str, cands: Vec<(Entity, bool)>, known: &[String]) -> Vec<Entity> {
    let mut out: Vec<Entity> = cands
        .into_iter()
        .filter(|(e, opener)| !opener || known.iter().any(|k| *k == text[e.start..e.end]))
        .map(|(e, _)| e)
        .collect();
    out.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
    let mut kept: Vec<Entity> = Vec::with_capacity(out.len());
    for e in out {
        if kept.last().is_none_or(|k| e.start >= k.end) {
            kept.push(e);
        }
    }
    kept
}

/// Names written with full stops, which the capitalised-words pattern cannot join: initials
/// before a surname ("H.G. Wells", "J. R. R. Tolkien"), dotted acronyms ("K.F.C."), and the
/// author a citation names ("Song et al.": a surname even when it is also a word).
fn dotted() -> &'static (Regex, Regex, Regex) {
    static P: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    P.get_or_init(|| {
        let initials = Regex::new(r"\b(?:\p{Lu}\.[ \t]?){1,3}\p{Lu}[\p{L}\p{M}'’\-]+");
        let acronym = Regex::new(r"\b(?:\p{Lu}\.){2,}");
        let cited = Regex::new(r"\b(\p{Lu}[\p{L}\p{M}'’\-]+)[ \t]+et[ \t]+al\b");
        match (initials, acronym, cited) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            // Constant patterns: covered by tests.
            _ => unreachable!("dotted name patterns compile"),
        }
    })
}

/// Whether initials and the word after them (`found` at `start`) are a name. Two initials or
/// more are ("H.G. Wells"). One is only when the word after it is a name, not an everyday word
/// ("J. Smith", but not "See A. Then", "B. Invalid"), and not an exam's option letter opening
/// its line ("A. Wrong").
fn initial_and_name(text: &str, start: usize, found: &str) -> bool {
    let last = found.rsplit(['.', ' ', '\t']).next().unwrap_or("");
    if is_plain_word(last) {
        return false;
    }
    if found.matches('.').count() >= 2 {
        return true;
    }
    let line_start = text[..start]
        .chars()
        .rev()
        .take_while(|&c| c != '\n')
        .all(|c| c.is_whitespace() || c == '(');
    if line_start && matches!(found.as_bytes()[0], b'A'..=b'H') {
        return false;
    }
    super::words::CommonWords::system().is_none_or(|w| !w.knows(last) || w.knows_name(last))
}

/// Every match of the patterns, flagged when it is a lone capitalised word opening a sentence
/// ("Say", "Draft": an entity only when the text names it elsewhere).
fn candidates(text: &str) -> Vec<(Entity, bool)> {
    let (proper, url, code) = patterns();
    let mut out: Vec<(Entity, bool)> = Vec::new();
    if memchr::memchr(b'.', text.as_bytes()).is_some() {
        let (initials, acronym, cited) = dotted();
        let found = |m: regex::Match<'_>, label| {
            (
                Entity {
                    start: m.start(),
                    end: m.end(),
                    label,
                },
                false,
            )
        };
        out.extend(
            initials
                .find_iter(text)
                .filter(|m| initial_and_name(text, m.start(), m.as_str()))
                .map(|m| found(m, "ENTITY")),
        );
        // Everyday acronyms ("A.M.", "B.C.") stay.
        out.extend(
            acronym
                .find_iter(text)
                .filter(|m| !is_plain_word(&m.as_str().replace('.', "")))
                .map(|m| found(m, "ENTITY")),
        );
        out.extend(
            cited
                .captures_iter(text)
                .filter_map(|c| c.get(1))
                .map(|m| found(m, "NAME")),
        );
    }
    for m in url.find_iter(text) {
        out.push((
            Entity {
                start: m.start(),
                end: m.end(),
                label: "URL",
            },
            false,
        ));
    }
    for m in code.find_iter(text) {
        let t = m.as_str();
        // A code has letters and digits and is not a plain ordinal or unit ("3rd", "10am", "5kg").
        if t.len() >= 4
            && !super::words::number_with_unit(t)
            && t.chars().any(char::is_alphabetic)
            && t.chars().any(|c| c.is_ascii_digit())
        {
            out.push((
                Entity {
                    start: m.start(),
                    end: m.end(),
                    label: "CODE",
                },
                false,
            ));
        }
    }
    // A name the text introduces is one whatever its case or whether it is also a word:
    // "Hi May,", "a company called tech stop".
    for c in introduced().captures_iter(text) {
        if let Some(m) = c.name("name").or_else(|| c.name("name2")) {
            out.push((
                Entity {
                    start: m.start(),
                    end: m.end(),
                    label: "NAME",
                },
                false,
            ));
        }
    }
    for m in proper.find_iter(text) {
        let mut start = m.start();
        let end = m.start() + m.as_str().trim_end_matches('.').len();
        // Drop leading grammar words ("Please Alice", "My IBAN").
        loop {
            let t = &text[start..end];
            let first = t.split_whitespace().next().unwrap_or("");
            match t.find(char::is_whitespace) {
                // An option's or a list's letter counts as its word ("A. The ...").
                Some(ws) if plain_sets().0.contains(first.trim_end_matches('.')) => {
                    start += ws;
                    start += text[start..end].len() - text[start..end].trim_start().len();
                }
                _ => break,
            }
        }
        let t = &text[start..end];
        let single = !t.contains(char::is_whitespace);
        // Grammar words and everyday acronyms are never entities on their own.
        if (single && is_plain_word(t)) || t.chars().count() < 2 {
            continue;
        }
        out.push((
            Entity {
                start,
                end,
                label: "ENTITY",
            },
            single && sentence_start(text, start),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, &'static str)> {
        find(text, &[])
            .into_iter()
            .map(|e| (&text[e.start..e.end], e.label))
            .collect()
    }

    #[test]
    fn names_links_and_codes() {
        assert_eq!(
            found("Please ask Neil Agius at Wave of Change in Malta, see https://x.org/a?b=1 ref FL-U3-120S3C."),
            vec![
                ("Neil Agius", "ENTITY"),
                ("Wave of Change", "ENTITY"),
                ("Malta", "ENTITY"),
                ("https://x.org/a?b=1", "URL"),
                ("FL-U3-120S3C", "CODE")
            ]
        );
        // In a pasted JSON export the escapes separate words: the name is whole.
        assert_eq!(
            found(r"scores include:\n\nMark Benson: 97%\nZoe Quill: 91%"),
            vec![("Mark Benson", "ENTITY"), ("Zoe Quill", "ENTITY")]
        );
    }

    #[test]
    fn names_written_with_full_stops() {
        assert_eq!(
            found("A story like H.G. Wells' one, by J. R. R. Tolkien. Lunch at K.F.C. at 1 P.M. today (see Song et al. 2020). See A. Then 300 B.C.\nA. Wrong"),
            vec![
                ("H.G. Wells'", "ENTITY"),
                ("J. R. R. Tolkien", "ENTITY"),
                ("K.F.C.", "ENTITY"),
                ("Song", "NAME"),
            ]
        );
    }

    #[test]
    fn grammar_capitals_and_plain_numbers_are_not_entities() {
        let t =
            "I think We should go. Send 50 EUR by Monday at 10 or 3rd. Great news: PDF attached.";
        assert!(found(t).is_empty(), "{:?}", found(t));
    }
}
