//! Sensitive *content* that no identifier pattern captures: health conditions and medications,
//! personal finances, legal matters. Terms alone are common in public questions ("what is
//! diabetes?"), so a term only counts when personal context surrounds it.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::types::{
    context_around, floor_boundary, has_context, whole_word, Candidate, Recognizer, Tier,
};

/// Labels of content spans: their presence makes a fragment `local_only` (the meaning itself
/// is private), unlike identifiers, which can be masked.
pub const CONTENT_LABELS: &[&str] = &[
    "HEALTH_CONDITION",
    "MEDICATION",
    "FINANCIAL_SITUATION",
    "LEGAL_MATTER",
];

const CONDITIONS: &[&str] = &[
    "diabetes",
    "cancer",
    "tumor",
    "tumour",
    "leukemia",
    "lymphoma",
    "melanoma",
    "carcinoma",
    "hiv",
    "aids",
    "hepatitis",
    "tuberculosis",
    "asthma",
    "copd",
    "epilepsy",
    "seizure",
    "seizures",
    "stroke",
    "heart attack",
    "heart failure",
    "arrhythmia",
    "hypertension",
    "high blood pressure",
    "depression",
    "depressive",
    "anxiety",
    "panic attack",
    "panic attacks",
    "bipolar",
    "schizophrenia",
    "ptsd",
    "adhd",
    "autism",
    "ocd",
    "eating disorder",
    "anorexia",
    "bulimia",
    "insomnia",
    "dementia",
    "alzheimer",
    "alzheimer's",
    "parkinson",
    "parkinson's",
    "multiple sclerosis",
    "arthritis",
    "lupus",
    "crohn",
    "crohn's",
    "colitis",
    "ibs",
    "celiac",
    "migraine",
    "migraines",
    "pregnant",
    "pregnancy",
    "miscarriage",
    "abortion",
    "infertility",
    "ivf",
    "std",
    "sti",
    "herpes",
    "chlamydia",
    "syphilis",
    "gonorrhea",
    "covid",
    "long covid",
    "obesity",
    "kidney disease",
    "renal failure",
    "dialysis",
    "cirrhosis",
    "fracture",
    "concussion",
    "surgery",
    "chemotherapy",
    "chemo",
    "radiotherapy",
    "biopsy",
    "diagnosis",
    "diagnosed",
    "prognosis",
    "symptoms",
    "addiction",
    "alcoholism",
    "overdose",
    "rehab",
    "suicidal",
    "self-harm",
    "therapy",
    "therapist",
    "psychiatrist",
    "disability",
    "allergy",
    "allergic",
    "thyroid",
    "hypothyroidism",
    "cholesterol",
    "blood test",
    "lab results",
    "mri",
    "ct scan",
    "x-ray",
    "ultrasound",
    "psoriasis",
    "eczema",
    "endometriosis",
    "pcos",
    "menopause",
];

const MEDICATIONS: &[&str] = &[
    "insulin",
    "metformin",
    "lisinopril",
    "atorvastatin",
    "simvastatin",
    "levothyroxine",
    "amlodipine",
    "omeprazole",
    "sertraline",
    "fluoxetine",
    "citalopram",
    "escitalopram",
    "paroxetine",
    "venlafaxine",
    "bupropion",
    "trazodone",
    "lithium",
    "quetiapine",
    "olanzapine",
    "risperidone",
    "aripiprazole",
    "lamotrigine",
    "valproate",
    "gabapentin",
    "pregabalin",
    "alprazolam",
    "lorazepam",
    "diazepam",
    "clonazepam",
    "zolpidem",
    "adderall",
    "ritalin",
    "methylphenidate",
    "oxycodone",
    "hydrocodone",
    "morphine",
    "fentanyl",
    "tramadol",
    "codeine",
    "methadone",
    "buprenorphine",
    "suboxone",
    "naloxone",
    "prednisone",
    "warfarin",
    "apixaban",
    "clopidogrel",
    "ozempic",
    "semaglutide",
    "wegovy",
    "truvada",
    "prep",
    "antiretroviral",
    "antidepressant",
    "antidepressants",
    "antipsychotic",
    "chemotherapy",
    "methotrexate",
    "humira",
    "inhaler",
    "albuterol",
    "ventolin",
    "ibuprofen",
    "paracetamol",
    "acetaminophen",
];

const FINANCE: &[&str] = &[
    "salary",
    "my income",
    "annual income",
    "paycheck",
    "payslip",
    "pay slip",
    "bonus",
    "debt",
    "debts",
    "overdraft",
    "overdrawn",
    "mortgage",
    "loan",
    "loans",
    "credit score",
    "bankruptcy",
    "bankrupt",
    "foreclosure",
    "arrears",
    "owe",
    "owes",
    "owed",
    "balance",
    "account balance",
    "net worth",
    "savings",
    "tax return",
    "tax refund",
    "inheritance",
    "alimony",
    "child support",
    "collections agency",
    "debt collector",
    "payday loan",
    "transactions",
    "bank statement",
    "statement balance",
    "credit limit",
    "late payment",
];

const LEGAL: &[&str] = &[
    "lawsuit",
    "sued",
    "suing",
    "divorce",
    "custody",
    "arrested",
    "arrest",
    "convicted",
    "conviction",
    "criminal record",
    "probation",
    "parole",
    "subpoena",
    "indicted",
    "indictment",
    "restraining order",
    "court date",
    "plea",
    "guilty",
    "misdemeanor",
    "felony",
    "dui",
    "dwi",
    "settlement",
    "deportation",
    "asylum",
    "immigration status",
    "visa status",
    "eviction",
    "evicted",
    "bail",
    "my lawyer",
    "my attorney",
    "litigation",
    "prosecution",
    "warrant",
];

/// Words that make a content term about a particular person rather than a general topic.
const PERSONAL: &[&str] = &[
    "my",
    "i",
    "i'm",
    "i've",
    "i'd",
    "me",
    "mine",
    "we",
    "our",
    "us",
    "his",
    "her",
    "him",
    "he",
    "she",
    "their",
    "patient",
    "diagnosed",
    "prescribed",
    "client",
    "husband",
    "wife",
    "son",
    "daughter",
    "mother",
    "father",
    "mom",
    "dad",
    "friend",
    "brother",
    "sister",
    "partner",
];

/// Phrases that report one person's test or diagnosis ("results came back positive for ..."),
/// matched within the context window like `PERSONAL`'s words, but as phrases.
const RESULT_CUES: &[&str] = &[
    "came back positive",
    "tested positive",
    "positive for",
    "test results",
    "lab results",
    "results came back",
    "diagnosis:",
];

/// True when a whole word of `PERSONAL` (a possessive counts: "dad's") or a `RESULT_CUES`
/// phrase is within 48 bytes before or 24 after the term.
fn personal_context(text: &str, start: usize, end: usize) -> bool {
    let (before, after) = context_around(text, start, end, 48);
    let after = &after[..floor_boundary(&after, 24)];
    before
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .chain(after.split(|c: char| !(c.is_alphanumeric() || c == '\'')))
        .any(|w| PERSONAL.contains(&w.strip_suffix("'s").unwrap_or(w)))
        || RESULT_CUES
            .iter()
            .any(|c| before.contains(c) || after.contains(c))
}

/// Finance words that are everyday vocabulary ("check my balance"): content only next to an amount.
const WEAK_FINANCE: &[&str] = &[
    "balance",
    "account balance",
    "savings",
    "loan",
    "loans",
    "bonus",
    "owe",
    "owes",
    "owed",
    "transactions",
    "credit limit",
    "tax refund",
    "statement balance",
];

const AMOUNT_MARKERS: &[&str] = &[
    "$", "€", "£", "¥", "usd", "eur", "gbp", "dollars", "euros", "pounds",
];

pub struct LexiconRecognizer {
    matcher: AhoCorasick,
    /// Label and tier per pattern index.
    kinds: Vec<(&'static str, Tier)>,
}

impl LexiconRecognizer {
    pub fn new() -> Self {
        let mut patterns: Vec<&str> = Vec::new();
        let mut kinds = Vec::new();
        for (list, label, tier) in [
            (CONDITIONS, "HEALTH_CONDITION", Tier::Health),
            (MEDICATIONS, "MEDICATION", Tier::Health),
            (FINANCE, "FINANCIAL_SITUATION", Tier::Financial),
            (LEGAL, "LEGAL_MATTER", Tier::QuasiIdentifier),
        ] {
            for p in list {
                patterns.push(p);
                kinds.push((label, tier));
            }
        }
        // A full DFA: several times faster than the default NFA on prose, and the lexicon is small.
        let matcher = AhoCorasickBuilder::new()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("static lexicon");
        Self { matcher, kinds }
    }
}

impl Default for LexiconRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Recognizer for LexiconRecognizer {
    fn name(&self) -> &'static str {
        "lexicon"
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        for m in self.matcher.find_iter(text) {
            let (s, e) = (m.start(), m.end());
            // Whole words only: "ibs" must not fire inside "ribs".
            if !whole_word(text, s, e) {
                continue;
            }
            let (label, tier) = self.kinds[m.pattern().as_usize()];
            let personal = personal_context(text, s, e);
            let mut score: f32 = if personal { 0.75 } else { 0.3 };
            if label == "FINANCIAL_SITUATION" {
                let (before, after) = context_around(text, s, e, 32);
                let amount = has_context(text, s, e, AMOUNT_MARKERS)
                    || before
                        .bytes()
                        .chain(after.bytes())
                        .any(|b| b.is_ascii_digit());
                let weak = WEAK_FINANCE
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(&text[s..e]));
                if amount {
                    score += 0.15;
                } else if weak {
                    score = 0.3;
                }
            }
            out.push(Candidate {
                start: s,
                end: e,
                label,
                tier,
                score: score.min(1.0),
                detector: "lexicon",
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        LexiconRecognizer::new().find(text, &mut out);
        out.into_iter()
            .filter(|c| c.score >= 0.5)
            .map(|c| (c.label, text[c.start..c.end].to_string()))
            .collect()
    }

    #[test]
    fn personal_health_and_money_are_content() {
        assert_eq!(
            labels("I was diagnosed with Diabetes last year"),
            vec![
                ("HEALTH_CONDITION", "diagnosed".to_string()),
                ("HEALTH_CONDITION", "Diabetes".to_string())
            ]
        );
        assert_eq!(labels("my salary is $85,000")[0].0, "FINANCIAL_SITUATION");
        assert_eq!(
            labels("She takes sertraline every morning")[0].0,
            "MEDICATION"
        );
        assert_eq!(
            labels("my divorce hearing is next week")[0].0,
            "LEGAL_MATTER"
        );
        // A possessive is personal too, and so is a reported test result.
        assert_eq!(
            labels("Dad's diabetes is under control now")[0].0,
            "HEALTH_CONDITION"
        );
        assert_eq!(
            labels("Results came back positive for chlamydia.")[0].1,
            "chlamydia"
        );
    }

    #[test]
    fn general_questions_and_substrings_are_not() {
        assert!(labels("What are the typical causes of diabetes in adults?").is_empty());
        assert!(labels("The ribs were great, and the hivemind agreed").is_empty());
        assert!(labels("Explain how a mortgage works").is_empty());
        assert!(labels("How do I check my balance on my credit card?").is_empty());
        assert_eq!(
            labels("my balance is $12,400 overdrawn")[0].0,
            "FINANCIAL_SITUATION"
        );
    }
}
