//! The sensitivity engine end to end: the real NER model through the real ONNX Runtime,
//! code point offsets, verdicts, redaction, user rules, and property tests for masking and
//! for robustness on arbitrary input.

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use tandem_core::sensitivity::{
    self, CommonWords, Provenance, Pseudonymizer, ScanReport, Scanner, Tier, UserPattern,
    UserRules, Verdict,
};

use crate::common::models_dir;

/// The scanner the app uses (rules + the real NER model). Missing assets fail with the fix.
fn full() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        let dir = models_dir().join(sensitivity::NER_DIR);
        let s = Scanner::load(
            &UserRules::default(),
            &dir,
            &dir.join(sensitivity::ORT_LIBRARY),
            None,
        )
        .unwrap();
        assert!(
            s.has_ner(),
            "NER model missing: run `scripts/fetch-ner.sh` (the test command does): {:?}",
            s.notices()
        );
        s
    })
}

fn rules() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::rules_only(&UserRules::default()).unwrap())
}

fn texts<'a>(text: &str, r: &'a ScanReport) -> Vec<(String, &'a str)> {
    let chars: Vec<char> = text.chars().collect();
    r.spans
        .iter()
        .map(|s| (chars[s.start..s.end].iter().collect(), s.label.as_str()))
        .collect()
}

#[test]
fn ner_finds_the_names_rules_cannot() {
    let text = "Please forward the contract to Maria Gonzalez before Friday.";
    let with = full().scan(text);
    assert!(with.ner_ran);
    assert!(
        texts(text, &with)
            .iter()
            .any(|(t, l)| *l == "PERSON" && t.contains("Maria Gonzalez")),
        "{:?}",
        with.spans
    );
    assert_eq!(with.verdict, Verdict::Maskable);
    let without = rules().scan(text);
    assert!(without.spans.iter().all(|s| s.label != "PERSON"));
    assert!(full().notices().is_empty());
    // A sentence the rules keep local does not stop NER on the others.
    let mixed = "I was prescribed sertraline in May. Please forward the letter to Maria Gonzalez.";
    let r = full().scan(mixed);
    assert_eq!(r.verdict, Verdict::LocalOnly);
    assert!(
        texts(mixed, &r)
            .iter()
            .any(|(t, l)| *l == "PERSON" && t.contains("Maria Gonzalez")),
        "{:?}",
        r.spans
    );
    assert!(
        !rules().notices().is_empty(),
        "rules-only must say recall is lower"
    );
}

#[test]
fn a_missing_model_degrades_with_a_notice_and_rules_still_work() {
    let nowhere = std::env::temp_dir().join("tandem-no-ner-here");
    let s = Scanner::load(
        &UserRules::default(),
        &nowhere,
        &nowhere.join("libonnxruntime.so"),
        Some("intel"),
    )
    .unwrap();
    assert!(!s.has_ner());
    assert!(
        s.notices()
            .iter()
            .any(|n| n.contains("NER model unavailable")),
        "{:?}",
        s.notices()
    );
    let text = "Pay GB82 WEST 1234 5698 7654 32 today";
    let r = s.scan(text);
    assert_eq!(
        texts(text, &r),
        vec![("GB82 WEST 1234 5698 7654 32".to_string(), "IBAN_CODE")]
    );
}

#[test]
fn offsets_are_code_points() {
    let text = "Grüße 😀 an jürgen: mail jürgen@example.org or card 4111 1111 1111 1111";
    let r = rules().scan(text);
    let found = texts(text, &r);
    assert!(
        found.contains(&("4111 1111 1111 1111".to_string(), "CREDIT_CARD")),
        "{found:?}"
    );
    let card = r.spans.iter().find(|s| s.label == "CREDIT_CARD").unwrap();
    assert_eq!(card.start, text.chars().count() - 19);
    assert_eq!(card.tier, Tier::Financial);
}

#[test]
fn verdicts_follow_meaning() {
    assert_eq!(
        rules().scan("What is the capital of Germany?").verdict,
        Verdict::Public
    );
    assert_eq!(
        rules()
            .scan("Is DE89 3704 0044 0532 0130 00 a German IBAN?")
            .verdict,
        Verdict::Maskable
    );
    assert_eq!(
        rules()
            .scan("I was diagnosed with type 2 diabetes last month.")
            .verdict,
        Verdict::LocalOnly
    );
    assert_eq!(
        rules()
            .scan_with(
                "The capital of Germany is Berlin.",
                Provenance::SensitiveSource
            )
            .verdict,
        Verdict::LocalOnly
    );
    // A look-alike that fails its checksum is not an identifier.
    assert_eq!(
        rules()
            .scan("Is DE89 3704 0044 0532 0130 01 a German IBAN?")
            .verdict,
        Verdict::Public
    );
}

/// Names the capital-letter rules cannot see (lowercase, other scripts, codes) are masked in
/// the user's own material, by the word list; a question about the world keeps them, and
/// everyday acronyms stay.
#[test]
fn lowercase_names_in_personal_text_are_masked_by_the_word_list() {
    assert!(
        CommonWords::system().is_some(),
        "needs a word list in /usr/share/dict (Debian: wamerican-large, installed by scripts/setup.sh)"
    );
    let mut p = Pseudonymizer::new();
    let text =
        "I work at linkedin in belarus and my IBAN is DE89 3704 0044 0532 0130 00; write my bio";
    let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
    for gone in ["linkedin", "belarus", "3704"] {
        assert!(!r.text.contains(gone), "{gone} left: {}", r.text);
    }
    assert!(r.text.contains("IBAN is [IBAN_1]"), "{}", r.text);
    assert!(r.text.starts_with("I work at [ENTITY_"), "{}", r.text);
    assert_eq!(p.restore(&r.text).text, text);
    let world = "What is the capital of belarus?";
    let r = sensitivity::redact(
        rules(),
        &mut Pseudonymizer::new(),
        world,
        Provenance::Content,
    );
    assert_eq!(r.text, world);
}

/// Code pasted into a personal request keeps its keywords and commands; the names in it are
/// still masked. Mutation-checked: without `data/code_words.txt` "const", "async" and "sudo"
/// leave as placeholders.
#[test]
fn code_in_a_personal_request_keeps_its_keywords_and_loses_its_names() {
    let mut p = Pseudonymizer::new();
    let text = "my script by Keziah Brightwater fails: const data = await fetch(url); \
                async function run() { sudo mkdir /tmp/stormhaven }";
    let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
    for kept in [
        "const data = await fetch(url)",
        "async function run()",
        "sudo mkdir",
    ] {
        assert!(r.text.contains(kept), "{kept} lost: {}", r.text);
    }
    for gone in ["Keziah", "Brightwater", "stormhaven"] {
        assert!(!r.text.contains(gone), "{gone} left: {}", r.text);
    }
}

/// A private matter inside a quoted record (a note's JSON `content`) keeps the whole record on
/// the device, not only its sentence; another record, and a prompt's own prose, are judged
/// sentence by sentence. Mutation-checked: without `keep_quoted_records_whole` the check-ins
/// sentence leaves.
#[test]
fn a_private_matter_keeps_its_whole_quoted_record_local() {
    // As tools export it: one field per line (a sentence running across a record's end takes
    // both records' fate, which errs on the private side).
    let text = "{\"results\": [\n  {\"title\": \"Lucas Health Update\",\n   \"content\": \"Lucas improved this month. His new treatment plan is working. Regular virtual check-ins are scheduled every Tuesday.\"},\n  {\"title\": \"Picnic\",\n   \"content\": \"The picnic moves to the north lawn. Bring a blanket.\"}\n]}";
    let mut p = Pseudonymizer::new();
    let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
    for private in ["treatment plan", "virtual check-ins", "improved this month"] {
        assert!(
            !r.text.contains(private),
            "{private:?} left the record: {}",
            r.text
        );
    }
    assert!(
        r.text.contains("The picnic moves to the north lawn."),
        "{}",
        r.text
    );
    // A friend's contract with her publisher is her private matter: the sentences after the
    // one that names it say as much (PrivacyLens main444).
    let text = "{\"title\": \"Notes\", \"content\": \"Helen, a mutual friend, has had a change in her contract status with her publisher. The initial offer was significantly below her expectations, but after a series of discussions they reached a more favorable agreement.\"}";
    let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
    for private in ["contract status", "initial offer", "favorable agreement"] {
        assert!(
            !r.text.contains(private),
            "{private:?} left the record: {}",
            r.text
        );
    }
    // Outside quotes nothing changes: the question still goes out.
    let r = sensitivity::redact(
        rules(),
        &mut p,
        "I was diagnosed with diabetes in May. Which budgeting apps are good?",
        Provenance::Content,
    );
    assert!(
        r.text.contains("Which budgeting apps are good?"),
        "{}",
        r.text
    );
}

/// The small word that joins two masked names stays: "[PERSON_1] and [PERSON_2]", not
/// "[PERSON_1] [ENTITY_1] [PERSON_2]" (the cloud would read a third party). Mutation-checked:
/// without `add_found`'s trimming of joining words, "and" is masked.
#[test]
fn a_word_joining_masked_names_is_not_masked() {
    let mut p = Pseudonymizer::new();
    for (text, names) in [
        (
            "I met Svetlana and Ingrid Lindqvist at the lease signing.",
            &["Svetlana", "Ingrid", "Lindqvist"][..],
        ),
        (
            "Please write to Ingrid Lindqvist and Svetlana about my lease.",
            &["Ingrid", "Lindqvist", "Svetlana"][..],
        ),
    ] {
        let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
        for n in names {
            assert!(!r.text.contains(n), "{n} left: {}", r.text);
        }
        assert!(r.text.contains("] and ["), "{}", r.text);
    }
}

/// The user's employer, or the one they apply to, is masked as a company even when its name is
/// an everyday word that would otherwise name a thing; the same name in a question about the
/// world stays. Mutation-checked: without the employer cues "Intuit" leaves.
#[test]
fn an_employer_is_masked_as_a_company_whatever_its_name() {
    let mut p = Pseudonymizer::new();
    let r = sensitivity::redact(
        rules(),
        &mut p,
        "Why would you like to join Intuit?",
        Provenance::Content,
    );
    assert_eq!(r.text, "Why would you like to join [COMPANY_1]?");
    let r = sensitivity::redact(
        rules(),
        &mut p,
        "I want to work at Excel next year; how should I prepare?",
        Provenance::Content,
    );
    assert!(!r.text.contains("Excel"), "{}", r.text);
    assert!(r.text.contains("[COMPANY_"), "{}", r.text);
    // A kind the name shows itself is kept.
    let r = sensitivity::redact(
        rules(),
        &mut p,
        "Why do you want to work at Harlow Robotics Inc.?",
        Provenance::Content,
    );
    assert!(r.text.contains("work at [COMPANY_"), "{}", r.text);
    let r = sensitivity::redact(
        rules(),
        &mut p,
        "Why should I apply to the University of Westmoor?",
        Provenance::Content,
    );
    assert!(r.text.contains("[UNIVERSITY_"), "{}", r.text);
    // The same name in a question about the world stays, and "join" before a tool's noun
    // names the tool.
    for world in [
        "What does Intuit make?",
        "Can you explain how to join Slack channels from a browser?",
    ] {
        let r = sensitivity::redact(rules(), &mut p, world, Provenance::Content);
        assert_eq!(r.text, world);
    }
}

#[test]
fn redaction_masks_identifiers_and_withholds_private_meaning() {
    let text = "My IBAN is DE89 3704 0044 0532 0130 00. I was diagnosed with diabetes in May. Which budgeting apps are good?";
    let mut p = Pseudonymizer::new();
    let r = sensitivity::redact(rules(), &mut p, text, Provenance::Content);
    assert!(r.text.contains("[IBAN_1]"), "{}", r.text);
    assert!(r.text.contains(sensitivity::redact::WITHHELD), "{}", r.text);
    assert!(
        r.text.contains("Which budgeting apps are good?"),
        "{}",
        r.text
    );
    for secret in ["DE89", "0532", "diabetes", "diagnosed"] {
        assert!(!r.text.contains(secret), "{secret} leaked: {}", r.text);
    }
    assert_eq!((r.masked, r.withheld), (1, 1));
    let back = p.restore("Your account [IBAN_1] is fine.");
    assert_eq!(
        back.text,
        "Your account DE89 3704 0044 0532 0130 00 is fine."
    );
}

#[test]
fn user_rules_add_terms_and_patterns_and_allow_what_users_say() {
    let rules = UserRules {
        terms: vec!["Project Nightjar".into()],
        patterns: vec![UserPattern {
            name: "client id".into(),
            pattern: r"\bCL-\d{5}\b".into(),
            tier: Tier::QuasiIdentifier,
        }],
        allow: vec!["support@tandem-help.org".into()],
        local_only_terms: vec!["merger".into()],
        secrets: vec![],
    };
    let s = Scanner::rules_only(&rules).unwrap();
    let text = "project nightjar for CL-12345: write to support@tandem-help.org or ceo@acme-holdings.co.uk";
    let r = s.scan(text);
    let found = texts(text, &r);
    assert!(
        found.contains(&("project nightjar".into(), "CUSTOM")),
        "{found:?}"
    );
    assert!(
        found.contains(&("CL-12345".into(), "CLIENT_ID")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(t, _)| t == "ceo@acme-holdings.co.uk"),
        "{found:?}"
    );
    assert!(
        !found.iter().any(|(t, _)| t == "support@tandem-help.org"),
        "allow-listed: {found:?}"
    );
    assert_eq!(s.scan("notes on the merger").verdict, Verdict::LocalOnly);
    assert_eq!(
        s.scan("notes on the “merger”—soon").verdict,
        Verdict::LocalOnly,
        "curly quotes are word boundaries"
    );
    // An allow-listed string claims its range: nothing weaker may flag it either.
    assert!(s.scan("support@tandem-help.org").spans.is_empty());

    let bad = UserRules {
        patterns: vec![UserPattern {
            name: "x".into(),
            pattern: "(".into(),
            tier: Tier::Secret,
        }],
        ..Default::default()
    };
    let err = Scanner::rules_only(&bad)
        .err()
        .expect("a broken pattern is an error");
    assert_eq!(tandem_core::ErrorCode::code(&err), "sensitivity.bad_rules");
    let toml_err = UserRules::from_toml("terms = 3").err().expect("wrong type");
    assert_eq!(
        tandem_core::ErrorCode::code(&toml_err),
        "sensitivity.bad_rules"
    );
}

#[test]
fn large_inputs_stream_in_blocks_and_pathological_ones_finish() {
    // ~6 MB of prose with an email every 40 lines, through 64 KB blocks.
    let line = "The quarterly report was reviewed by the committee without further comments.\n";
    let mut text = String::new();
    let mut expected = 0;
    for i in 0..80_000 {
        if i % 40 == 0 {
            text.push_str(&format!("Contact person{i}@mailbox.org for details.\n"));
            expected += 1;
        } else {
            text.push_str(line);
        }
    }
    let mut found = 0;
    let mut blocks = 0;
    rules()
        .scan_reader(
            std::io::Cursor::new(text.as_bytes()),
            64 * 1024,
            Provenance::Content,
            |_, _, r| {
                blocks += 1;
                found += r
                    .spans
                    .iter()
                    .filter(|s| s.label == "EMAIL_ADDRESS")
                    .count();
            },
        )
        .unwrap();
    assert_eq!(found, expected);
    assert!(blocks > 50, "{blocks} blocks");
    // A long line without newlines, full of multi-byte characters, is cut into blocks without
    // splitting a character.
    let line = "Grüße aus Köln, 😀 — ".repeat(20_000);
    let mut joined = String::new();
    rules()
        .scan_reader(
            std::io::Cursor::new(line.as_bytes()),
            1024,
            Provenance::Content,
            |_, t, _| joined.push_str(t),
        )
        .unwrap();
    assert_eq!(joined, line);
    // Pathological shapes: long digit runs, separators, repeated '@', one huge line.
    for s in [
        "1".repeat(200_000),
        "1 ".repeat(100_000),
        "a@".repeat(100_000),
        "-".repeat(200_000),
        "AKIA".repeat(50_000),
    ] {
        let _ = rules().scan(&s);
    }
}

fn valid_identifier() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("DE89 3704 0044 0532 0130 00".to_string()),
        Just("4111 1111 1111 1111".to_string()),
        "[a-z]{3,8}@[a-z]{3,8}\\.(com|org|de)",
        Just("536-22-8145".to_string()),
        Just("192.168.13.77".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Arbitrary UTF-8: no panic, and spans are sorted, disjoint and inside the text.
    #[test]
    fn any_text_scans_to_well_formed_spans(text in "\\PC{0,400}") {
        let r = rules().scan(&text);
        let n = text.chars().count();
        let mut prev = 0;
        for s in &r.spans {
            prop_assert!(s.start >= prev && s.start < s.end && s.end <= n, "{:?}", r.spans);
            prev = s.end;
        }
    }

    /// mask → restore gives the original back, for prose mixed with identifiers — except
    /// where a placeholder follows a word that fetches ("nc", "curl", ...): there it is refused
    /// by design (the reply-link rule) and reported, never silently lost.
    #[test]
    fn masking_round_trips(parts in proptest::collection::vec(prop_oneof!["[A-Za-zäöü ,.]{0,30}", valid_identifier()], 1..8)) {
        let text = parts.join(" ");
        let report = rules().scan(&text);
        let mut p = Pseudonymizer::new();
        let masked = p.mask(&text, &report.mask_spans());
        let back = p.restore(&masked.text);
        prop_assert!(back.unknown.is_empty());
        prop_assert_eq!(back.restored + back.refused.len(), masked.replacements.len());
        if back.refused.is_empty() {
            prop_assert_eq!(&back.text, &text);
        } else {
            for r in &back.refused {
                prop_assert!(back.text.contains(r.as_str()), "{} {}", r, back.text);
            }
        }
    }
}

#[test]
fn the_scanner_is_shareable_across_threads() {
    let s = Arc::new(Scanner::rules_only(&UserRules::default()).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || {
                s.scan(&format!("mail me at user{i}@mailbox.org"))
                    .spans
                    .len()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 1);
    }
}
