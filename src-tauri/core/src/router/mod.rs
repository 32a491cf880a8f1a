//! The router: splits a task (prompt, attachments, history) into fragments with provenance,
//! classifies each with the sensitivity engine (public / maskable / local_only), estimates
//! whether the local model can handle the task, reads policy, network and what cloud agents
//! are available, and writes a `Plan` (local, cloud, or split with a strategy) with reasons.
//! `run` executes plans.

pub mod complexity;
mod keep;
pub mod program;
pub mod run;
pub mod selfcheck;

use serde::{Deserialize, Serialize};

use crate::cloud::{ChatMessage, Role};
use crate::sensitivity::{self, Provenance, Scanner, Verdict};
pub use complexity::LocalClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Nothing that is not public leaves the device.
    Private,
    /// The default: mask or withhold what is sensitive, use the cloud when the task needs it.
    #[default]
    Balanced,
    /// Prefer the cloud for anything the local model may not do well (still sanitized).
    Performance,
}

impl Policy {
    /// The stricter of two policies (private, then balanced, then performance): where a client
    /// may narrow what leaves but never widen it.
    pub fn strictest(self, other: Policy) -> Policy {
        let rank = |p: Policy| match p {
            Policy::Private => 0,
            Policy::Balanced => 1,
            Policy::Performance => 2,
        };
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "private" => Ok(Policy::Private),
            "balanced" => Ok(Policy::Balanced),
            "performance" => Ok(Policy::Performance),
            o => Err(format!(
                "unknown policy {o:?} (private, balanced, performance)"
            )),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attachment {
    pub name: String,
    pub text: String,
    /// From a folder marked sensitive: local only, whatever it says.
    #[serde(default)]
    pub sensitive_source: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Task {
    pub prompt: String,
    pub attachments: Vec<Attachment>,
    /// Earlier turns of the conversation.
    pub history: Vec<ChatMessage>,
    pub policy: Policy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Local,
    Cloud,
    Split,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Pseudonymize maskable spans, send, restore on the device.
    Mask,
    /// The local model reads the local-only fragments and writes abstractions that pass the
    /// sensitivity check; the cloud gets the task plus those.
    LocalExtract,
    /// The cloud plans, the local model executes (MinionS-style): the cloud sees the task and
    /// the private documents' structure (sizes, parts — never their text), writes instructions;
    /// the local model follows them over each part and writes the answer on the device.
    CloudPlans,
    /// Private work on one of the user's own devices (a `--trust device` server): the whole
    /// task as it is, because the local model is too weak for it or absent; never the cloud.
    Device,
}

/// One classified piece of the task. Offsets are code points into its source.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct PlanFragment {
    /// "prompt", "history", or the attachment's name.
    pub source: String,
    pub start: usize,
    pub end: usize,
    pub class: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Plan {
    pub route: Route,
    pub strategy: Option<Strategy>,
    pub fragments: Vec<PlanFragment>,
    /// Probability that the task needs a stronger model than the local one (1 - p_local).
    pub complexity: f64,
    pub reasons: Vec<String>,
    /// The local model answers first and keeps its answer when it is worth keeping (its
    /// confidence, or for multiple choice its expected success against the cloud's); otherwise
    /// the task goes on as planned.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub local_attempt: bool,
    /// Under `mask`, with a local model of the medium class or above: it first rewrites the
    /// request without the person in it (PAPILLON's idea); the rewrite is planned and
    /// sanitized like any request, and the cloud's answer is completed on the device with the
    /// original details. The masked request this plan drafts is what goes when the rewrite
    /// fails a check, so it is the most that leaves.
    pub local_rewrite: bool,
    /// What the sanitizer applies to each part the plan classified (not shown to people).
    #[serde(skip)]
    #[ts(skip)]
    pub decisions: sensitivity::Decisions,
}

/// What the router knows about the world besides the task.
#[derive(Debug, Clone)]
pub struct Context {
    pub local_class: LocalClass,
    /// A cloud agent with a key exists and the network is not offline.
    pub cloud_available: bool,
    /// Why not, for the reasons ("offline", "no key stored").
    pub cloud_unavailable_reason: Option<String>,
    /// The user chose a cloud agent: skip the "can the local model do it" check (privacy
    /// rules still apply).
    pub force_cloud: bool,
    /// A device agent of the user's that private work may use (Pause devices is off).
    pub device: Option<String>,
    /// The user named that device agent: it answers.
    pub device_chosen: bool,
    /// No local model is loaded: a device takes whatever would have run locally.
    pub no_local: bool,
    /// The network works but badly (slow, losing requests), and why: short tasks stay local.
    pub degraded: Option<String>,
}

/// Longest prompt (characters) the local model rewrites (local rewrite).
pub const REWRITE_MAX_CHARS: usize = 600;

/// Longest prompt (characters) that counts as a short task when the network is degraded.
const SHORT_TASK_CHARS: usize = 400;

/// The text the cloud would get for a task, before sanitizing: the prompt, then each
/// attachment under its name. Used for complexity and by `run` to draft requests.
pub(crate) fn attachment_block(a: &Attachment, text: &str) -> String {
    format!("\n\nAttached document \"{}\":\n{}", a.name, text)
}

/// Documents longer than this (characters) are read in parts under `CloudPlans`: a small
/// model's one-shot abstract of a long document loses most of it.
pub const LONG_DOCUMENT: usize = 6_000;
/// Size of the parts the local model reads under `CloudPlans`, and how many at most.
pub const PART_CHARS: usize = 1_500;
pub const MAX_PARTS: usize = 12;

/// The cloud agent's role under `CloudPlans`.
pub const PLANNER_ROLE: &str = "You plan work for a small local model that can read private documents you cannot see. Reply with at most four numbered instructions, one per line, that the local model will follow on each part of the documents to gather what the task needs (what to find, extract, compute or check). Do not answer the task yourself. Keep placeholders such as [PERSON_1] as written.";

/// Phrases with which a document marks itself as not for sharing ("Emergency contact list (for
/// internal use)", "Confidential: ..."). Such a document is treated like a file from a folder
/// marked sensitive: the author has said it stays in; nobody should have to find out which of
/// its sentences were the private ones (PrivacyLens' leaks were mostly such sentences).
const CONFIDENTIAL_MARKERS: &[&str] = &[
    "confidential",
    "for internal use",
    "internal use only",
    "internal only",
    "authorized personnel only",
    "authorised personnel only",
    "not to be disclosed",
    "do not share",
    "do not distribute",
    "not for distribution",
    "do not forward",
    // A note its author titled as theirs alone ("Personal Notes on 'Whispers of the Past'":
    // an opinion of someone's unpublished book).
    "personal notes",
    "private notes",
];

fn markers() -> Option<&'static aho_corasick::AhoCorasick> {
    static AC: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> = std::sync::OnceLock::new();
    AC.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(CONFIDENTIAL_MARKERS)
            .ok()
    })
    .as_ref()
}

/// The confidentiality marker `text` carries, if any (case-insensitive).
pub fn confidential_marker(text: &str) -> Option<&'static str> {
    markers()?
        .find(text)
        .map(|m| CONFIDENTIAL_MARKERS[m.pattern().as_usize()])
}

/// Whether `para` carries a marker written as a label, the way a document marks itself: in
/// capitals ("CONFIDENTIAL"), opening a line followed by a separator ("Confidential: ...",
/// "For internal use only - ..."), or closing a line ("... Do not share."). A question that
/// mentions the word ("what makes a document confidential?", "Confidential computing: why?")
/// is not marked.
fn marked_as_label(para: &str) -> bool {
    let Some(ac) = markers() else { return false };
    ac.find_iter(para).any(|m| {
        let (s, e) = (m.start(), m.end());
        let word = &para[s..e];
        let line_start = para[..s].rfind('\n').map_or(0, |i| i + 1);
        let line_end = para[e..].find('\n').map_or(para.len(), |i| e + i);
        let before = &para[line_start..s];
        let after = &para[e..line_end];
        let upper = word.chars().any(char::is_alphabetic) && !word.chars().any(char::is_lowercase);
        let opens = before
            .chars()
            .all(|c| c.is_whitespace() || "*#_>-([".contains(c))
            && after
                .trim_start()
                .chars()
                .next()
                .is_none_or(|c| ":-\u{2013}\u{2014}|/)]".contains(c));
        let closes = after
            .chars()
            .all(|c| c.is_whitespace() || ".!*_)]".contains(c));
        upper || opens || closes
    })
}

/// A block pasted into the prompt: a paragraph (between blank lines) of at least two lines or
/// `PASTED_WORDS` words. A short question that mentions "confidential" is not one.
const PASTED_WORDS: usize = 15;

/// Name of the `n`th confidential block taken out of a prompt (what the plan's reasons and the
/// local model see; nothing about its content).
pub fn pasted_block_name(n: usize) -> String {
    format!("pasted block {n}")
}

/// Splits `prompt` into the text that stays in the prompt and the pasted blocks that mark
/// themselves confidential (each replaced in the prompt by a one-line reference).
fn confidential_blocks(prompt: &str) -> Option<(String, Vec<String>)> {
    confidential_marker(prompt)?;
    let mut kept = String::with_capacity(prompt.len());
    let mut blocks = Vec::new();
    // Paragraphs with the blank lines that separate them, so the rest is kept as written.
    let mut rest = prompt;
    while !rest.is_empty() {
        let (para, tail) = match rest.find("\n\n") {
            Some(i) => {
                let j = rest[i..]
                    .find(|c: char| c != '\n' && c != '\r' && c != ' ' && c != '\t')
                    .map_or(rest.len(), |k| i + k);
                (&rest[..i], &rest[i..j])
            }
            None => (rest, ""),
        };
        let lines = para.lines().filter(|l| !l.trim().is_empty()).count();
        let words = para.split_whitespace().count();
        if (lines >= 2 || words >= PASTED_WORDS) && marked_as_label(para) {
            blocks.push(para.to_string());
            kept.push_str(&format!(
                "[{}: private, it stays on this device]",
                pasted_block_name(blocks.len())
            ));
        } else {
            kept.push_str(para);
        }
        kept.push_str(tail);
        rest = &rest[para.len() + tail.len()..];
    }
    (!blocks.is_empty()).then_some((kept, blocks))
}

/// Whether the prompt, with its confidential blocks taken out, asks nothing of its own.
fn only_block_references(prompt: &str) -> bool {
    let mut rest = prompt.to_string();
    for n in 1..=64 {
        rest = rest.replace(
            &format!(
                "[{}: private, it stays on this device]",
                pasted_block_name(n)
            ),
            "",
        );
    }
    !rest.chars().any(char::is_alphanumeric)
}

/// Treats attachments that mark themselves confidential as files from a sensitive folder, and
/// moves blocks pasted into the prompt that mark themselves confidential into attachments of
/// that kind (the block, not the whole question: the rest of the prompt is judged as usual).
/// `Orchestrator::run` calls it before planning, so the plan and every step after it (what
/// the cloud is shown, abstracts, the sanitizer) agree; `plan` applies it too.
pub fn mark_confidential(task: &mut Task) {
    for a in &mut task.attachments {
        if !a.sensitive_source && confidential_marker(&a.text).is_some() {
            a.sensitive_source = true;
        }
    }
    if let Some((prompt, blocks)) = confidential_blocks(&task.prompt) {
        task.prompt = prompt;
        for (i, text) in blocks.into_iter().enumerate() {
            task.attachments.push(Attachment {
                name: pasted_block_name(i + 1),
                text,
                sensitive_source: true,
            });
        }
    }
}

/// Whether `mark_confidential` would change `task`.
fn needs_marking(task: &Task) -> bool {
    task.attachments
        .iter()
        .any(|a| !a.sensitive_source && confidential_marker(&a.text).is_some())
        || confidential_blocks(&task.prompt).is_some()
}

/// Whether an attachment holds private material (a sensitive folder, or local-only passages).
pub fn is_private(a: &Attachment, plan: &Plan) -> bool {
    a.sensitive_source
        || plan
            .fragments
            .iter()
            .any(|f| f.source == a.name && f.class == Verdict::LocalOnly)
}

/// Splits a document into parts of about `PART_CHARS` at line ends (at a character boundary
/// when a line is longer), at most `MAX_PARTS`; the rest is dropped, and the caller says so.
pub fn parts_of(text: &str) -> (Vec<&str>, bool) {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < text.len() && parts.len() < MAX_PARTS {
        let mut end = (start + PART_CHARS).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end < text.len() {
            if let Some(nl) = text[start..end].rfind('\n').filter(|&i| i > PART_CHARS / 3) {
                end = start + nl + 1;
            }
        }
        parts.push(&text[start..end]);
        start = end;
    }
    (parts, start < text.len())
}

/// What the cloud sees under `CloudPlans`: the prompt, each non-private attachment as usual,
/// and for each private document only its structure (no name: names of private files say a
/// lot). The sanitizer still sees every part.
pub fn cloud_plans_parts(task: &Task, plan: &Plan) -> Vec<(String, Provenance)> {
    let mut parts = vec![(task.prompt.clone(), Provenance::Content)];
    let mut n = 0;
    for (i, a) in task.attachments.iter().enumerate() {
        if !is_private(a, plan) {
            parts.extend(attachment_parts(a, i, plan));
            continue;
        }
        n += 1;
        let (p, cut) = parts_of(&a.text);
        let lines = a.text.lines().count();
        let tabular = a
            .text
            .lines()
            .filter(|l| l.contains('\t') || l.matches(',').count() >= 3)
            .count()
            * 2
            > lines.max(1);
        parts.push((
            format!(
                "\n\nPrivate document {n} (stays on the device): {} characters, {lines} lines{}, read in {} parts{}.",
                a.text.chars().count(),
                if tabular { ", mostly table rows" } else { "" },
                p.len(),
                if cut { " (the rest is not read)" } else { "" },
            ),
            Provenance::Content,
        ));
    }
    parts
}

/// How one attachment appears in the user's turn to the cloud (before sanitizing): a file from
/// a sensitive folder is announced, never named or shown (names of private files say a lot);
/// any other file under `attachment_title`.
pub fn attachment_parts(a: &Attachment, i: usize, plan: &Plan) -> Vec<(String, Provenance)> {
    if a.sensitive_source {
        vec![(
            "\n\n[An attached document is private and stays on the device.]".into(),
            Provenance::Content,
        )]
    } else {
        vec![
            (
                format!("\n\nAttached document {}:\n", attachment_title(a, i, plan)),
                Provenance::Content,
            ),
            (a.text.clone(), Provenance::Content),
        ]
    }
}

/// What the cloud calls attachment `i` (from 0): its file name in quotes, unless the plan masks
/// or keeps anything in it on the device; then its place among the attachments, for a file's name
/// tends to say what its private parts do ("Jane_Baker_HIV_results.txt") in a form the
/// scanner reads poorly (joined words, abbreviations).
pub fn attachment_title(a: &Attachment, i: usize, plan: &Plan) -> String {
    let private = plan
        .fragments
        .iter()
        .any(|f| f.source == a.name && f.class != Verdict::Public);
    if private {
        format!("{} (its name stays on the device)", i + 1)
    } else {
        format!("\"{}\"", a.name)
    }
}

/// Classifies one source's fragments once for the turn (`sensitivity::decide`, the one masking
/// decision, kept in `decided` for the sanitizer to apply); returns (any maskable, any
/// local-only, any public, reasons). Names, places, links and codes count as maskable where
/// the text reads as personal (`masks_entities`), and everywhere under policy private
/// (`strict`). `material`: an attachment of a request that is personal as a whole, where a
/// health, money or legal term is someone's without a personal word beside it.
#[allow(clippy::too_many_arguments)]
fn classify(
    scanner: &Scanner,
    source: &str,
    text: &str,
    provenance: Provenance,
    strict: bool,
    material: bool,
    out: &mut Vec<PlanFragment>,
    decided: &mut Vec<(String, sensitivity::Decision)>,
) -> (bool, bool, bool, Vec<String>) {
    let decision = sensitivity::decide_material(scanner, text, provenance, strict, material);
    // Policy private without a word list: nothing can be cleared to leave. (Such a plan never
    // reaches the sanitizer: under policy private anything maskable stays local.)
    let no_words = strict && sensitivity::CommonWords::system().is_none_or(|w| !w.has_list());
    let (mut masked, mut local, mut public) = (false, false, false);
    let mut entity_masked = false;
    // The reason names the unknown words wherever they are (an entity span may cover them).
    let unknown_masked =
        strict && sensitivity::unknown_word_spans(text).is_some_and(|w| !w.is_empty());
    for f in &decision.fragments {
        let class = match f.class {
            Verdict::Public if no_words => Verdict::Maskable,
            c => c,
        };
        entity_masked |= f
            .masks
            .iter()
            .any(|m| m.detector == "entities" || (m.detector == "words" && !strict));
        match class {
            Verdict::Public => public = true,
            Verdict::Maskable => masked = true,
            Verdict::LocalOnly => local = true,
        }
        out.push(PlanFragment {
            source: source.into(),
            start: f.start,
            end: f.end,
            class,
        });
    }
    let mut reasons = if decision.verdict == Verdict::Public {
        Vec::new()
    } else {
        decision.reasons.clone()
    };
    if entity_masked {
        reasons.push(format!(
            "{source} reads as personal: names of people, places and organisations, links and codes are masked"
        ));
    }
    if unknown_masked {
        reasons.push(format!("{source} has words no list of everyday words knows (names, codes, other languages): under policy private they count as identifying"));
    }
    if no_words {
        reasons.push(format!(
            "no word list on this device ({} or {}): under policy private nothing can be cleared to leave",
            sensitivity::words::SYSTEM_WORDS,
            sensitivity::words::WORDS_ENV
        ));
    }
    decided.push((text.to_string(), decision));
    (masked, local, public, reasons)
}

/// The text an earlier turn contributes to a cloud request: an answer the local model wrote
/// from private material is replaced by a notice (its provenance travels with it), and an
/// earlier question loses its confidential pasted blocks (they were never sent). The plan
/// classifies exactly this and the draft sends exactly this.
pub fn history_text(m: &ChatMessage) -> std::borrow::Cow<'_, str> {
    if m.derived_private {
        return run::PRIVATE_ANSWER.into();
    }
    match (m.role, confidential_blocks(&m.content)) {
        (Role::User, Some((kept, _))) => kept.into(),
        _ => m.content.as_str().into(),
    }
}

/// Decides how to run `task`. CPU work (scanning): call from a blocking thread in async code.
pub fn plan(scanner: &Scanner, task: &Task, ctx: &Context) -> Plan {
    let marked;
    let task = if needs_marking(task) {
        let mut t = task.clone();
        mark_confidential(&mut t);
        marked = t;
        &marked
    } else {
        task
    };
    let mut fragments = Vec::new();
    let mut decided = Vec::new();
    let mut reasons = Vec::new();
    let strict = task.policy == Policy::Private;
    let personal_request = sensitivity::reads_personal(&task.prompt);
    let (p_mask, p_local_only, p_public, prompt_reasons) = classify(
        scanner,
        "prompt",
        &task.prompt,
        Provenance::Content,
        strict,
        false,
        &mut fragments,
        &mut decided,
    );
    let (mut any_mask, mut any_local) = (p_mask, p_local_only);
    let mut attach_local = false;
    for a in &task.attachments {
        let prov = if a.sensitive_source {
            Provenance::SensitiveSource
        } else {
            Provenance::Content
        };
        // Whether the request is personal is decided over the whole request: material
        // attached to the user's own request ("respond to Maria about the promotion; my notes
        // are attached") is someone's even where a sentence names no one.
        let material = personal_request || sensitivity::reads_personal(&a.text);
        let (m, l, _, _) = classify(
            scanner,
            &a.name,
            &a.text,
            prov,
            strict,
            material,
            &mut fragments,
            &mut decided,
        );
        any_mask |= m;
        any_local |= l;
        attach_local |= l;
        if let Some(m) = a
            .sensitive_source
            .then(|| confidential_marker(&a.text))
            .flatten()
        {
            reasons.push(format!(
                "{} marks itself confidential (\"{m}\"): it stays local",
                a.name
            ));
        } else if a.sensitive_source {
            reasons.push(format!(
                "{} is from a folder marked sensitive: it stays local",
                a.name
            ));
        } else if l {
            reasons.push(format!("{} has private passages: they stay local", a.name));
        } else if m {
            reasons.push(format!(
                "identifiers in {} are masked before anything leaves",
                a.name
            ));
        }
    }
    // Every earlier turn as the draft will send it: past answers were restored on the device
    // and hold the originals.
    for m in &task.history {
        let (mm, l, _, _) = classify(
            scanner,
            "history",
            &history_text(m),
            Provenance::Content,
            strict,
            false,
            &mut fragments,
            &mut decided,
        );
        any_mask |= mm;
        any_local |= l;
        // The arguments of earlier tool calls go out again, each string on its own terms
        // (the sanitizer looks up exactly these decisions).
        for c in &m.tool_calls {
            crate::egress::map_json_strings(&c.function.arguments, |leaf| {
                let (mm, l, _, _) = classify(
                    scanner,
                    "history",
                    leaf,
                    Provenance::Content,
                    strict,
                    false,
                    &mut fragments,
                    &mut decided,
                );
                any_mask |= mm;
                any_local |= l;
                leaf.to_string()
            });
        }
    }
    reasons.extend(prompt_reasons.into_iter().take(4));

    // Files from sensitive folders and long private documents are read in parts by the local
    // model on the cloud's instructions; shorter ones get a local abstract.
    let read_in_parts = task.attachments.iter().any(|a| {
        a.sensitive_source
            || (a.text.len() > LONG_DOCUMENT
                && fragments
                    .iter()
                    .any(|f| f.source == a.name && f.class == Verdict::LocalOnly))
    });
    let p_local = complexity::p_local(&task.prompt, ctx.local_class);
    let threshold = match task.policy {
        Policy::Performance => 0.95,
        _ => complexity::BALANCED_THRESHOLD,
    };
    let complexity = 1.0 - p_local;
    let decisions = sensitivity::Decisions::new(decided);
    // Self-knowledge: a short task the complexity guess sends away is first tried by a local
    // model big enough to be worth it, which keeps its answer when it is sure (nothing leaves
    // then). Not when the user asked for the cloud (an agent, tools, policy performance), nor
    // for documents (their strategies decide what the local model reads).
    let attempt = (ctx.local_class != LocalClass::Small
        && !ctx.no_local
        && !ctx.force_cloud
        && task.policy != Policy::Performance
        && task.attachments.is_empty())
    .then(|| selfcheck::shape(&task.prompt))
    .flatten()
    .filter(selfcheck::attempted)
    // A worked problem is kept only when its program agrees, and it is written as a program
    // only standing alone (`selfcheck::program_request`): in a conversation the attempt could
    // never be kept, only delay the cloud.
    .filter(|s| *s != selfcheck::Shape::Worked || task.history.is_empty());
    // Rewriting on the device: a model of the medium class or above writes a request without
    // the person (a small one copies or garbles it). Only a prompt on its own (documents have
    // their own strategies), only when the router chose the cloud itself (an agent the user
    // named, or a client's tools, get the request as masked: a rewrite answers a different
    // question), and not under policy performance, which puts the cloud's quality first.
    // And only a prompt short enough to be rewritten whole: a longer one carries material the
    // task works on (an article to comment on, a text to translate), which a local rewrite
    // drops or summarizes (measured on dev PUPA) while the masked request keeps it.
    let rewrite = ctx.local_class != LocalClass::Small
        && !ctx.no_local
        && !ctx.force_cloud
        && task.policy != Policy::Performance
        && task.attachments.is_empty()
        && task.prompt.chars().count() <= REWRITE_MAX_CHARS;
    let class = format!("{:?}", ctx.local_class).to_lowercase();
    let rewriter = class.clone();
    let done = move |route, strategy, mut reasons: Vec<String>, why: String| {
        reasons.insert(0, why);
        let tried = attempt
            .as_ref()
            .filter(|_| route != Route::Local && matches!(strategy, None | Some(Strategy::Mask)));
        if let Some(shape) = tried {
            let when = match (selfcheck::threshold(shape), shape) {
                (Some(t), _) => format!("when its confidence is at least {t:.2}"),
                (None, selfcheck::Shape::Worked) => "when two of its solutions, worked in words and as arithmetic, reach the same number".into(),
                (None, _) => "unless the cloud is expected to gain enough by answering it (estimated from the model's confidence and the kind of question) or the model is guessing".into(),
            };
            reasons.insert(
                1,
                format!("the local model tries first: its answer is kept {when}, otherwise the task goes on as planned"),
            );
        }
        let local_attempt = tried.is_some();
        // Only where the prompt itself holds what is masked or withheld (not only the history).
        let local_rewrite = rewrite
            && route == Route::Split
            && strategy == Some(Strategy::Mask)
            && fragments
                .iter()
                .any(|f| f.source == "prompt" && f.class != Verdict::Public);
        if local_rewrite {
            reasons.push(format!(
                "the {rewriter} local model first rewrites the request without your details; the rewrite is checked like any request (the masked request goes if it fails) and the answer is completed on this device"
            ));
        }
        Plan {
            route,
            strategy,
            fragments,
            decisions,
            complexity: (complexity * 1000.0).round() / 1000.0,
            reasons,
            local_attempt,
            local_rewrite,
        }
    };
    let weak = p_local < threshold;
    // Work that stays off the cloud runs on the local model, or on a device of the user's
    // when the local model is too weak for it (`hard`) or absent.
    let private = |why: String, hard: bool| {
        match ctx.device.as_ref().filter(|_| hard || ctx.no_local) {
        Some(d) => (
            Some(Strategy::Device),
            format!(
                "{why}; {} → your device {d} answers it (private material may go to your devices, never to the cloud)",
                if ctx.no_local {
                    "no local model is loaded".to_string()
                } else {
                    format!("too hard for a {class} local model (p = {p_local:.2} < {threshold:.2})")
                }
            ),
        ),
        None => (None, why),
    }
    };
    if let Some(d) = ctx.device.as_ref().filter(|_| ctx.device_chosen) {
        return done(
            Route::Local,
            Some(Strategy::Device),
            reasons,
            format!("you asked your device {d}: it answers, nothing goes to the cloud"),
        );
    }
    // The whole request sits inside a block that marks itself confidential.
    if task.attachments.iter().any(|a| a.sensitive_source)
        && only_block_references(&task.prompt)
        && task
            .attachments
            .iter()
            .any(|a| a.name == pasted_block_name(1))
    {
        let (strategy, why) = private(
            "the pasted text marks itself confidential and holds the whole request: it stays local"
                .into(),
            weak,
        );
        return done(Route::Local, strategy, reasons, why);
    }
    if p_local >= threshold && !ctx.force_cloud {
        let (strategy, why) = private(format!(
            "a {class} local model should handle this (p = {p_local:.2} ≥ {threshold:.2}): it stays on this device"
        ), false);
        return done(Route::Local, strategy, reasons, why);
    }
    // A slow or lossy network makes a short answer from the cloud slower than a local one.
    let short = task.attachments.is_empty()
        && task.prompt.chars().count() <= SHORT_TASK_CHARS
        && complexity::features(&task.prompt)[8] == 0.0;
    if let Some(net) = ctx
        .degraded
        .as_ref()
        .filter(|_| short && ctx.cloud_available && !ctx.force_cloud && !ctx.no_local)
    {
        let (strategy, why) = private(format!("{net}: a short task stays on this device"), false);
        return done(Route::Local, strategy, reasons, why);
    }
    if !ctx.cloud_available {
        let why = ctx
            .cloud_unavailable_reason
            .clone()
            .unwrap_or_else(|| "no cloud agent is available".into());
        let (strategy, why) = private(format!("{why}: answering with the local model"), weak);
        return done(Route::Local, strategy, reasons, why);
    }
    let needs = format!(
        "the task may be too hard for a {class} local model (p = {p_local:.2} < {threshold:.2})"
    );
    if p_local_only && !p_public && !p_mask {
        let (strategy, why) = private(
            "the question itself is private: it stays local".into(),
            weak,
        );
        return done(Route::Local, strategy, reasons, why);
    }
    if task.policy == Policy::Private && (any_mask || any_local) {
        let (strategy, why) = private(
            "policy private: nothing that is not public leaves this device".into(),
            weak,
        );
        return done(Route::Local, strategy, reasons, why);
    }
    if any_local {
        let (strategy, how) = if attach_local && read_in_parts {
            (
                Strategy::CloudPlans,
                "split: the cloud plans from the task and the documents' structure, the local model reads the private documents and answers on this device",
            )
        } else if attach_local {
            (
                Strategy::LocalExtract,
                "split: the local model reads the private passages, the cloud gets the task and abstractions",
            )
        } else {
            (
                Strategy::Mask,
                "split: private sentences are withheld, identifiers masked",
            )
        };
        return done(
            Route::Split,
            Some(strategy),
            reasons,
            format!("{needs}; {how}"),
        );
    }
    if any_mask {
        return done(
            Route::Split,
            Some(Strategy::Mask),
            reasons,
            format!("{needs}; identifiers are masked and restored on this device"),
        );
    }
    done(
        Route::Cloud,
        None,
        reasons,
        format!("{needs}; nothing in it is sensitive → cloud"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_can_narrow_the_policy_but_not_widen_it() {
        use Policy::*;
        assert_eq!(Balanced.strictest(Private), Private);
        assert_eq!(Private.strictest(Performance), Private);
        assert_eq!(Balanced.strictest(Performance), Balanced);
        assert_eq!(Performance.strictest(Balanced), Balanced);
    }

    #[test]
    fn a_pasted_confidential_block_becomes_a_private_attachment() {
        let mut t = Task {
            prompt: "Make two bullets of the memo below.\n\nCONFIDENTIAL - for internal use only\nThe Nightjar plant closes in March.\n\nThanks!".into(),
            ..Task::default()
        };
        mark_confidential(&mut t);
        assert!(!t.prompt.contains("Nightjar"), "{}", t.prompt);
        assert!(t
            .prompt
            .starts_with("Make two bullets of the memo below.\n\n[pasted block 1"));
        assert!(t.prompt.ends_with("\n\nThanks!"), "{}", t.prompt);
        assert_eq!(t.attachments.len(), 1);
        assert!(t.attachments[0].sensitive_source);
        assert!(t.attachments[0].text.contains("Nightjar"));
        // Questions that mention the words are not pasted blocks, however long.
        for prompt in [
            "What does \"for internal use only\" mean on a document?",
            "Can you explain what makes a document confidential under GDPR and how companies should handle such documents in practice?",
            "Confidential computing is new to me: what is it and why does it matter for banks and hospitals in Europe today?",
            "Hi,\ncan you explain what confidential computing is?",
        ] {
            let mut q = Task {
                prompt: prompt.into(),
                ..Task::default()
            };
            mark_confidential(&mut q);
            assert!(q.attachments.is_empty(), "{prompt}");
        }
        // Marked the way documents mark themselves: a header, a footer, capitals.
        for prompt in [
            "Summarise:\n\nConfidential: Q3 revenue fell 12% and the Harrow site closes in March.\nThe board meets Monday.",
            "Summarise:\n\nQ3 revenue fell 12% and the Harrow site closes in March.\nThe board meets Monday. Do not share.",
            "Summarise this please. INTERNAL ONLY the Harrow site closes in March and the board meets on Monday to decide.",
        ] {
            let mut q = Task {
                prompt: prompt.into(),
                ..Task::default()
            };
            mark_confidential(&mut q);
            assert_eq!(q.attachments.len(), 1, "{prompt}");
            assert!(!q.prompt.contains("Harrow"), "{prompt}");
        }
        assert!(!only_block_references(
            "[pasted block 1: private, it stays on this device] Summarise it"
        ));
        assert!(only_block_references(
            "[pasted block 1: private, it stays on this device]\n"
        ));
    }
}
