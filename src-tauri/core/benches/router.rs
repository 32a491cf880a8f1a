//! Decision latency: fragmenting + classification + plan for a 4 KB prompt with a 20 KB
//! attachment, NER off (rules only), p50/p99 of 500 runs; the peer in the same run is the
//! scanner alone over 24 KB of the same kind (what planning adds on top of detection). Each
//! run gets new phone numbers: the scanner caches validation results per number, and a
//! fresh task is what a decision meets.
//!
//!     cargo bench --profile dev --workspace --bench router

use std::time::{Duration, Instant};

use tandem_core::router::{self, Attachment, Context, LocalClass, Task};
use tandem_core::sensitivity::{Scanner, UserRules};

/// `seed` picks the first sentence; `run` makes every phone number new to the scanner (its
/// validation results are cached per number, and a fresh task is the case to measure).
/// Dense text has an identifier or a health fact in every other sentence; sparse text in one
/// sentence of sixteen (about one per 1.2 KB, closer to ordinary documents).
fn text(bytes: usize, seed: usize, run: usize, dense: bool) -> String {
    let plain = [
        "Please review the quarterly plan and suggest improvements to the schedule. ",
        "The invoice total was 1,240 EUR and is due at the end of the month. ",
        "We agreed to ship version two after the security review is complete. ",
        "The workshop moved to the second floor because the lift is being repaired. ",
    ];
    let private = [
        "Contact jane.doe@posteo.de or call +49 30 901820 for the contract details. ",
        "I was diagnosed with asthma last year, so I avoid the dusty storage room. ",
        "Transfer the deposit to DE89 3704 0044 0532 0130 00 before Friday. ",
    ];
    let every = if dense { 2 } else { 16 };
    let mut s = String::new();
    let mut i = seed;
    while s.len() < bytes {
        if i.is_multiple_of(every) {
            let number = format!("9{:05}", (run * 400 + i) % 100_000);
            s.push_str(&private[(i / every) % private.len()].replace("901820", &number));
        } else {
            s.push_str(plain[i % plain.len()]);
        }
        i += 1;
    }
    s.truncate(bytes);
    s
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test --all-targets` smoke run
    }
    let scanner = Scanner::rules_only(&UserRules::default()).expect("scanner");
    for dense in [true, false] {
        measure(&scanner, dense);
    }
}

fn measure(scanner: &Scanner, dense: bool) {
    let task = |run: usize| Task {
        prompt: text(4096, 0, run, dense),
        attachments: vec![Attachment {
            name: "notes.txt".into(),
            text: text(20 * 1024, 3, run, dense),
            sensitive_source: false,
        }],
        ..Task::default()
    };
    let ctx = Context {
        local_class: LocalClass::Medium,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: false,
        device: None,
        device_chosen: false,
        no_local: false,
        degraded: None,
    };
    for run in 0..20 {
        std::hint::black_box(router::plan(scanner, &task(run), &ctx));
    }
    let (mut plan_t, mut scan_t) = (Vec::new(), Vec::new());
    for i in 0..500 {
        // Odd runs feed the peer, so neither sees numbers the other validated.
        let (t_plan, t_peer) = (task(20 + 2 * i), task(21 + 2 * i));
        let all = format!("{}{}", t_peer.prompt, t_peer.attachments[0].text);
        let t = Instant::now();
        std::hint::black_box(router::plan(scanner, &t_plan, &ctx));
        plan_t.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(scanner.scan(&all));
        scan_t.push(t.elapsed());
    }
    let (p50, p99) = (pct(plan_t.clone(), 0.5), pct(plan_t, 0.99));
    let (s50, s99) = (pct(scan_t.clone(), 0.5), pct(scan_t, 0.99));
    let kind = if dense { "dense" } else { "sparse" };
    println!(
        "plan ({kind}: 4 KB prompt + 20 KB attachment, rules only): p50 {:.3} ms, p99 {:.3} ms; scanner alone over 24 KB of the same: p50 {:.3} ms, p99 {:.3} ms (plan/scan p50 ratio {:.2})",
        p50.as_secs_f64() * 1e3, p99.as_secs_f64() * 1e3, s50.as_secs_f64() * 1e3, s99.as_secs_f64() * 1e3,
        p50.as_secs_f64() / s50.as_secs_f64()
    );
}
