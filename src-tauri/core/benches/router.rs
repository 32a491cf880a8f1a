//! Decision latency: fragmenting + classification + plan for a 4 KB prompt with a 20 KB
//! attachment, NER off (rules only), p50/p99 of 500 runs; the peer in the same run is the
//! scanner alone over the same 24 KB (what planning adds on top of detection).
//!
//!     cargo bench --profile dev --workspace --bench router

use std::time::{Duration, Instant};

use tandem_core::router::{self, Attachment, Context, LocalClass, Task};
use tandem_core::sensitivity::{Scanner, UserRules};

fn text(bytes: usize, seed: usize) -> String {
    let parts = [
        "Please review the quarterly plan and suggest improvements to the schedule. ",
        "Contact jane.doe@posteo.de or call +49 30 901820 for the contract details. ",
        "The invoice total was 1,240 EUR and is due at the end of the month. ",
        "I was diagnosed with asthma last year, so I avoid the dusty storage room. ",
        "Transfer the deposit to DE89 3704 0044 0532 0130 00 before Friday. ",
        "We agreed to ship version two after the security review is complete. ",
    ];
    let mut s = String::new();
    let mut i = seed;
    while s.len() < bytes {
        s.push_str(parts[i % parts.len()]);
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
    let task = Task {
        prompt: text(4096, 0),
        attachments: vec![Attachment {
            name: "notes.txt".into(),
            text: text(20 * 1024, 3),
            sensitive_source: false,
        }],
        ..Task::default()
    };
    let ctx = Context {
        local_class: LocalClass::Medium,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: false,
    };
    for _ in 0..20 {
        std::hint::black_box(router::plan(&scanner, &task, &ctx));
    }
    let (mut plan_t, mut scan_t) = (Vec::new(), Vec::new());
    let all = format!("{}{}", task.prompt, task.attachments[0].text);
    for _ in 0..500 {
        let t = Instant::now();
        std::hint::black_box(router::plan(&scanner, &task, &ctx));
        plan_t.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(scanner.scan(&all));
        scan_t.push(t.elapsed());
    }
    let (p50, p99) = (pct(plan_t.clone(), 0.5), pct(plan_t, 0.99));
    let (s50, s99) = (pct(scan_t.clone(), 0.5), pct(scan_t, 0.99));
    println!(
        "plan (4 KB prompt + 20 KB attachment, rules only): p50 {:.3} ms, p99 {:.3} ms; scanner alone over the same 24 KB: p50 {:.3} ms, p99 {:.3} ms (plan/scan p50 ratio {:.2})",
        p50.as_secs_f64() * 1e3, p99.as_secs_f64() * 1e3, s50.as_secs_f64() * 1e3, s99.as_secs_f64() * 1e3,
        p50.as_secs_f64() / s50.as_secs_f64()
    );
}
