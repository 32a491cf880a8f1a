//! Public figures: whether a name found in a text is a famous person's (`data/public_figures.txt`,
//! from Pantheon 1.0), which a request that is not the user's own keeps when it leaves.
//!
//! A name is public when the capitalised words around it form a listed name that covers it
//! ("Albert Einstein's" for a finding on "Albert Einstein" or on "Albert" alone). The list
//! leaves out full names made only of common names ("Phil Jones") unless they are among the
//! most famous, so a private "Phil Jones" stays masked; where the list says public, only the
//! plan's caller decides whether the text is the user's own (`redact::public_spans`).

use rustc_hash::FxHashSet;
use std::sync::OnceLock;

/// Most words of a name tried around a finding ("Johann Wolfgang von Goethe" has four).
const MAX_WORDS: usize = 6;
/// Bytes read on each side of a finding: more than `MAX_WORDS` words of a name.
const CONTEXT: usize = 160;

/// Listed names, each as its words joined by one space, full stops removed ("Susan B Anthony").
fn figures() -> &'static FxHashSet<String> {
    static SET: OnceLock<FxHashSet<String>> = OnceLock::new();
    SET.get_or_init(|| {
        include_str!("data/public_figures.txt")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| key(l.split_whitespace()))
            .collect()
    })
}

/// The lookup form of a run of words: full stops dropped, a possessive's "'s" dropped from
/// the last word ("Einstein's" → "Einstein"), one space between words.
fn key<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let words: Vec<&str> = words.collect();
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        let mut w = *w;
        if i + 1 == words.len() {
            w = w
                .strip_suffix("'s")
                .or_else(|| w.strip_suffix("’s"))
                .unwrap_or(w);
        }
        if i > 0 {
            out.push(' ');
        }
        out.extend(w.chars().filter(|&c| c != '.'));
    }
    out
}

/// Whether bytes `start..end` of `text` lie within a listed famous person's name there.
pub(crate) fn public_figure_at(text: &str, start: usize, end: usize) -> bool {
    if start >= end
        || end > text.len()
        || !text.is_char_boundary(start)
        || !text.is_char_boundary(end)
    {
        return false;
    }
    // Only the words near the finding matter (a name is at most `MAX_WORDS` words): the plan and
    // the last-line check ask about every finding of a long text.
    let mut from = start.saturating_sub(CONTEXT);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + CONTEXT).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    let (text, start, end) = (&text[from..to], start - from, end - from);
    // The words of the text (letters, digits and the marks names carry: "O'Neill", "Jean-Paul",
    // "B.", "Einstein's"), as byte ranges.
    let part = |c: char| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-' | '.');
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut at = None;
    for (i, c) in text.char_indices() {
        match (part(c), at) {
            (true, None) => at = Some(i),
            (false, Some(s)) => {
                words.push((s, i));
                at = None;
            }
            _ => {}
        }
    }
    if let Some(s) = at {
        words.push((s, text.len()));
    }
    // A word's text without the full stop that ends a sentence after it ("Freud.").
    let word = |k: usize| {
        let (s, e) = words[k];
        let w = &text[s..e];
        if w.chars().filter(|c| c.is_alphabetic()).count() > 1 {
            w.trim_end_matches('.')
        } else {
            w
        }
    };
    let Some(first) = words.iter().position(|&(_, e)| e > start) else {
        return false;
    };
    let last = words.iter().rposition(|&(s, _)| s < end).unwrap_or(first);
    if last < first || last - first >= MAX_WORDS {
        return false;
    }
    // Only a space between two words of one name; a name word is capitalised, or a lower-case
    // particle inside it ("Ludwig van Beethoven").
    let joined = |k: usize| text[words[k].1..words[k + 1].0].chars().all(|c| c == ' ');
    let lex = super::quasi::lexicon();
    let name_word = |k: usize| {
        let w = word(k);
        w.chars().next().is_some_and(char::is_uppercase) || lex.particles.contains(&w)
    };
    if !(first..=last).all(name_word) || !(first..last).all(joined) {
        return false;
    }
    let mut from = first;
    while from > 0 && first - (from - 1) < MAX_WORDS && joined(from - 1) && name_word(from - 1) {
        from -= 1;
    }
    let mut to = last;
    while to + 1 < words.len() && to + 1 - from < MAX_WORDS && joined(to) && name_word(to + 1) {
        to += 1;
    }
    let set = figures();
    (from..=first).any(|a| {
        (last..=to).any(|b| {
            let (wa, wb) = (word(a), word(b));
            // A name starts and ends with a capitalised word.
            wa.chars().next().is_some_and(char::is_uppercase)
                && wb.chars().next().is_some_and(char::is_uppercase)
                && set.contains(&key((a..=b).map(word)))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str, name: &str) -> bool {
        let s = text.find(name).unwrap();
        public_figure_at(text, s, s + name.len())
    }

    #[test]
    fn famous_names_are_public_and_private_ones_are_not() {
        assert!(public(
            "What did Sigmund Freud write about dreams?",
            "Sigmund Freud"
        ));
        assert!(public(
            "Explain Albert Einstein's theory of relativity.",
            "Albert Einstein's"
        ));
        assert!(public(
            "Explain Albert Einstein's theory of relativity.",
            "Albert Einstein"
        ));
        // A finding on part of the name is covered by the whole.
        assert!(public(
            "Why did Abraham Lincoln free the slaves?",
            "Abraham"
        ));
        assert!(public("Summarise Freud.", "Freud"));
        assert!(public(
            "A symphony by Ludwig van Beethoven",
            "Ludwig van Beethoven"
        ));
        assert!(public("Ask Marie Curie about it", "Marie Curie"));
        // Private people: names no list holds, common names, famous surnames that are also
        // everyday names, a famous name run on into another.
        assert!(!public(
            "What did Maria Keller write about dreams?",
            "Maria Keller"
        ));
        assert!(!public(
            "Tell Phil Jones the shipment is late.",
            "Phil Jones"
        ));
        assert!(!public("Ask Keller about the lease.", "Keller"));
        assert!(!public(
            "Ask Albert Einstein Okafor about it",
            "Albert Einstein Okafor"
        ));
        assert!(!public("Einstein,Okafor", "Einstein,Okafor"));
        assert!(!public("Anna Freud Novak", "Anna Freud Novak"));
        // Only the words near a finding are read, on char boundaries, in a long text.
        let long = format!(
            "{}What did Sigmund Freud write? {}",
            "é ".repeat(300),
            "ü".repeat(300)
        );
        assert!(public(&long, "Sigmund Freud"));
        assert!(public(&long, "Freud"));
    }

    #[test]
    fn the_list_loads() {
        let set = figures();
        assert!(set.len() > 5_000, "{}", set.len());
        assert!(set.contains("Susan B Anthony") || !set.contains("Susan B. Anthony"));
        assert!(set.iter().all(|n| !n.is_empty() && !n.contains("  ")));
    }
}
