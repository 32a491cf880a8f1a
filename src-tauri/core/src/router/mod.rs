//! The router: splits a task (prompt, attachments, history) into fragments with provenance,
//! classifies each with the sensitivity engine (public / maskable / local_only), estimates
//! whether the local model can handle the task, reads policy, network and what cloud agents
//! are available, and writes a `Plan` (local, cloud, or split with a strategy) with reasons.
//! `run` executes plans.

pub mod complexity;
pub mod run;

use serde::{Deserialize, Serialize};

use crate::cloud::ChatMessage;
use crate::sensitivity::{self, Provenance, Scanner, Verdict};
pub use complexity::LocalClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Local,
    Cloud,
    Split,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Pseudonymize maskable spans, send, restore on the device.
    Mask,
    /// The local model reads the local-only fragments and writes abstractions that pass the
    /// sensitivity check; the cloud gets the task plus those.
    LocalExtract,
}

/// One classified piece of the task. Offsets are code points into its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanFragment {
    /// "prompt", "history", or the attachment's name.
    pub source: String,
    pub start: usize,
    pub end: usize,
    pub class: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub route: Route,
    pub strategy: Option<Strategy>,
    pub fragments: Vec<PlanFragment>,
    /// Probability that the task needs a stronger model than the local one (1 - p_local).
    pub complexity: f64,
    pub reasons: Vec<String>,
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
}

/// The text the cloud would get for a task, before sanitizing: the prompt, then each
/// attachment under its name. Used for complexity and by `run` to draft requests.
pub(crate) fn attachment_block(a: &Attachment, text: &str) -> String {
    format!("\n\nAttached document \"{}\":\n{}", a.name, text)
}

/// How one attachment appears in the user's turn to the cloud (before sanitizing): a file from
/// a sensitive folder is announced, never named or shown (names of private files say a lot);
/// any other file under its name.
pub fn attachment_parts(a: &Attachment) -> Vec<(String, Provenance)> {
    if a.sensitive_source {
        vec![(
            "\n\n[An attached document is private and stays on the device.]".into(),
            Provenance::Content,
        )]
    } else {
        vec![
            (
                format!("\n\nAttached document \"{}\":\n", a.name),
                Provenance::Content,
            ),
            (a.text.clone(), Provenance::Content),
        ]
    }
}

fn classify(
    scanner: &Scanner,
    source: &str,
    text: &str,
    provenance: Provenance,
    out: &mut Vec<PlanFragment>,
) -> (bool, bool, bool, Vec<String>) {
    let report = scanner.scan_with(text, provenance);
    let (mut masked, mut local, mut public) = (false, false, false);
    for f in sensitivity::fragments(text, &report, provenance) {
        match f.verdict {
            Verdict::Public => public = true,
            Verdict::Maskable => masked = true,
            Verdict::LocalOnly => local = true,
        }
        out.push(PlanFragment {
            source: source.into(),
            start: f.start,
            end: f.end,
            class: f.verdict,
        });
    }
    let reasons = if report.verdict == Verdict::Public {
        Vec::new()
    } else {
        report.reasons
    };
    (masked, local, public, reasons)
}

/// Decides how to run `task`. CPU work (scanning): call from a blocking thread in async code.
pub fn plan(scanner: &Scanner, task: &Task, ctx: &Context) -> Plan {
    let mut fragments = Vec::new();
    let mut reasons = Vec::new();
    let (p_mask, p_local_only, p_public, prompt_reasons) = classify(
        scanner,
        "prompt",
        &task.prompt,
        Provenance::Content,
        &mut fragments,
    );
    let (mut any_mask, mut any_local) = (p_mask, p_local_only);
    let mut attach_local = false;
    for a in &task.attachments {
        let prov = if a.sensitive_source {
            Provenance::SensitiveSource
        } else {
            Provenance::Content
        };
        let (m, l, _, _) = classify(scanner, &a.name, &a.text, prov, &mut fragments);
        any_mask |= m;
        any_local |= l;
        attach_local |= l;
        if a.sensitive_source {
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
    // Every earlier turn: past answers were restored on the device and hold the originals.
    for m in &task.history {
        let (mm, l, _, _) = classify(
            scanner,
            "history",
            &m.content,
            Provenance::Content,
            &mut fragments,
        );
        any_mask |= mm;
        any_local |= l;
    }
    reasons.extend(prompt_reasons.into_iter().take(4));

    let p_local = complexity::p_local(&task.prompt, ctx.local_class);
    let threshold = match task.policy {
        Policy::Performance => 0.95,
        _ => complexity::BALANCED_THRESHOLD,
    };
    let complexity = 1.0 - p_local;
    let done = move |route, strategy, mut reasons: Vec<String>, why: String| {
        reasons.insert(0, why);
        Plan {
            route,
            strategy,
            fragments,
            complexity: (complexity * 1000.0).round() / 1000.0,
            reasons,
        }
    };
    let class = format!("{:?}", ctx.local_class).to_lowercase();
    if p_local >= threshold && !ctx.force_cloud {
        return done(Route::Local, None, reasons, format!(
            "a {class} local model should handle this (p = {p_local:.2} ≥ {threshold:.2}): it stays on this device"
        ));
    }
    if !ctx.cloud_available {
        let why = ctx
            .cloud_unavailable_reason
            .clone()
            .unwrap_or_else(|| "no cloud agent is available".into());
        return done(
            Route::Local,
            None,
            reasons,
            format!("{why}: answering with the local model"),
        );
    }
    let needs = format!(
        "the task may be too hard for a {class} local model (p = {p_local:.2} < {threshold:.2})"
    );
    if p_local_only && !p_public && !p_mask {
        return done(
            Route::Local,
            None,
            reasons,
            "the question itself is private: it stays local".into(),
        );
    }
    if task.policy == Policy::Private && (any_mask || any_local) {
        return done(
            Route::Local,
            None,
            reasons,
            "policy private: nothing that is not public leaves this device".into(),
        );
    }
    if any_local {
        let strategy = if attach_local {
            Strategy::LocalExtract
        } else {
            Strategy::Mask
        };
        let how = if attach_local {
            "split: the local model reads the private passages, the cloud gets the task and abstractions"
        } else {
            "split: private sentences are withheld, identifiers masked"
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
