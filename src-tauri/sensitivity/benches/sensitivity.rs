//! Sensitivity engine speed: the rule stage's throughput over mixed prose (MB/s on one core),
//! a 4 KB prompt's latency (median and p99), and the NER stage's cost per KB. Peer in the same
//! run: one plain `regex` pass for email addresses over the same text, the least any scanner does.
//!
//!     cargo bench -p tandem-sensitivity --bench sensitivity      (or bench/sensitivity.sh)

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use tandem_sensitivity::{self as sensitivity, Scanner, UserRules};

/// English prose with an identifier after every `every` sentences (7 ≈ one per 600 bytes,
/// 50 ≈ one per 4 KB): emails, cards, IBANs, phones, dates, a key, an IP. Deterministic.
fn mixed_prose(bytes: usize, every: usize) -> String {
    let sentences = [
        "The committee reviewed the quarterly figures and agreed to revisit the budget next spring. ",
        "Most of the delays came from the supplier, who changed the delivery schedule twice. ",
        "We should summarise the findings in plain language before the meeting on Thursday. ",
        "Several readers asked how the new policy affects remote work and travel expenses. ",
        "The draft still needs a section on risks, costs and the expected timeline. ",
        "Please keep the tone friendly but precise, and avoid jargon where possible. ",
    ];
    let ids = [
        "Contact jane.doe@example.com for the slides. ",
        "The card 4111 1111 1111 1111 was charged twice. ",
        "Transfer to DE89 3704 0044 0532 0130 00 by Friday. ",
        "Call +44 20 7946 0958 after lunch. ",
        "She was born on 12 March 1984 in Leeds. ",
        "The key AKIAQ3EGRKZ7XPLJ4WMN leaked in the log. ",
        "Server 10.20.30.40 restarted at noon. ",
    ];
    let mut out = String::with_capacity(bytes + 200);
    let (mut i, mut j) = (0, 0);
    while out.len() < bytes {
        out.push_str(sentences[i % sentences.len()]);
        i += 1;
        if i % every == 0 {
            out.push_str(ids[j % ids.len()]);
            j += 1;
        }
    }
    out
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let rules = Scanner::rules_only(&UserRules::default()).expect("scanner");
    let text = mixed_prose(1 << 20, 50);
    let dense = mixed_prose(1 << 20, 7);
    let email =
        regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}").expect("peer regex");

    // `cargo test --all-targets` runs benches once as a smoke test (no `--bench` flag): scan once
    // and stop, so the test command stays fast.
    if !std::env::args().any(|a| a == "--bench") {
        assert!(!rules.scan(&text).spans.is_empty());
        return;
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5))
        .sample_size(20);
    let mut g = c.benchmark_group("rules_1MiB_prose_id_per_4KB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("tandem_rule_stage", |b| {
        b.iter(|| black_box(rules.scan(black_box(&text))))
    });
    g.bench_function("peer_single_email_regex", |b| {
        b.iter(|| black_box(email.find_iter(black_box(&text)).count()))
    });
    g.finish();
    let mut g = c.benchmark_group("rules_1MiB_prose_id_per_600B");
    g.throughput(Throughput::Bytes(dense.len() as u64));
    g.bench_function("tandem_rule_stage", |b| {
        b.iter(|| black_box(rules.scan(black_box(&dense))))
    });
    g.finish();

    // Throughput and latency figures printed plainly, for bench/RESULTS.md.
    let time = |f: &mut dyn FnMut(), n: usize| {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed() / n as u32
    };
    let rule_t = time(
        &mut || {
            black_box(rules.scan(&text));
        },
        10,
    );
    let peer_t = time(
        &mut || {
            black_box(email.find_iter(&text).count());
        },
        10,
    );
    let mb = text.len() as f64 / 1e6;
    println!(
        "rule stage, an identifier per 4 KB: {:.0} MB/s on one core; peer (one email regex, memchr-driven): {:.0} MB/s; ratio {:.4}",
        mb / rule_t.as_secs_f64(),
        mb / peer_t.as_secs_f64(),
        peer_t.as_secs_f64() / rule_t.as_secs_f64()
    );
    let dense_t = time(
        &mut || {
            black_box(rules.scan(&dense));
        },
        10,
    );
    println!(
        "rule stage, an identifier per 600 B: {:.0} MB/s on one core",
        dense.len() as f64 / 1e6 / dense_t.as_secs_f64()
    );

    let prompt = mixed_prose(4096, 7);
    let prompt = &prompt[..prompt
        .char_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= 4096)
        .last()
        .unwrap_or(0)];
    let mut lat = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let t = Instant::now();
        black_box(rules.scan(prompt));
        lat.push(t.elapsed());
    }
    println!(
        "rule stage, 4 KB prompt: median {:?}, p99 {:?}",
        percentile(lat.clone(), 0.5),
        percentile(lat, 0.99)
    );

    // NER stage (when the model is present): ms per KB and a 4 KB prompt's p99.
    if std::env::var(sensitivity::NER_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        println!("NER stage: skipped (TANDEM_NER=off)");
        return;
    }
    let dir = std::env::var_os("TANDEM_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models"))
        })
        .join(sensitivity::NER_DIR);
    let full = Scanner::load(
        &UserRules::default(),
        &dir,
        &dir.join(sensitivity::ORT_LIBRARY),
        None,
    )
    .expect("scanner");
    if !full.has_ner() {
        println!("NER stage: skipped ({:?})", full.notices());
        return;
    }
    let kb = mixed_prose(1024, 7);
    let per_kb = time(
        &mut || {
            black_box(full.scan(&kb));
        },
        20,
    );
    println!("rules + NER, 1 KB: {:.1} ms", per_kb.as_secs_f64() * 1e3);
    let mut lat = Vec::with_capacity(100);
    for _ in 0..100 {
        let t = Instant::now();
        black_box(full.scan(prompt));
        lat.push(t.elapsed());
    }
    println!(
        "rules + NER, 4 KB prompt: median {:?}, p99 {:?}",
        percentile(lat.clone(), 0.5),
        percentile(lat, 0.99)
    );

    // An indexing pass over ~1.5 KB notes: the scanner (the names model only near a name in
    // doubt) against the same model reading every note whole, the cost before that gate.
    let model = sensitivity::ner::NerModel::load(
        &dir.join(sensitivity::NER_MODEL_FILE),
        &dir.join(sensitivity::NER_TOKENIZER_FILE),
        &dir.join(sensitivity::ORT_LIBRARY),
        1,
    )
    .expect("names model");
    for every in [4, 1] {
        let notes: Vec<String> = (0..40).map(|i| note(1500, every, i)).collect();
        let t = Instant::now();
        for n in &notes {
            black_box(full.scan(n));
        }
        let gated = notes.len() as f64 / t.elapsed().as_secs_f64();
        // The index's pass: the int8 names model (when fetched), one thread, then as many
        // threads as the index uses, each taking the next note. The first call loads it.
        black_box(full.scan_bulk(&notes[0], sensitivity::Provenance::Content));
        let t = Instant::now();
        for n in &notes {
            black_box(full.scan_bulk(n, sensitivity::Provenance::Content));
        }
        let bulk = notes.len() as f64 / t.elapsed().as_secs_f64();
        let threads = sensitivity::bulk_threads();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    while let Some(n) =
                        notes.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        black_box(full.scan_bulk(n, sensitivity::Provenance::Content));
                    }
                });
            }
        });
        let bulk_par = notes.len() as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for n in &notes {
            black_box(model.find_in(n).ok());
        }
        let whole = notes.len() as f64 / t.elapsed().as_secs_f64();
        println!(
            "notes of 1.5 KB, a name in one sentence of {every}: scanner {gated:.1} files/s; bulk (index) {bulk:.1} on one thread, {bulk_par:.1} on {threads}; peer (names model on every sentence) {whole:.1} files/s; ratios {:.2} / {:.2} / {:.2}",
            gated / whole,
            bulk / whole,
            bulk_par / whole
        );
    }
}

/// A note of about `bytes`: everyday sentences, and every `every`-th one naming a person or a
/// place (deterministic in `seed`). The names and towns change from sentence to sentence, as
/// in a real note: the scanner reads a run repeated word for word once, so a note of a few
/// named sentences repeated would measure that, not the model's work (until 2026-12-07 the
/// same five named sentences repeated).
fn note(bytes: usize, every: usize, seed: usize) -> String {
    let everyday = [
        "The committee reviewed the quarterly figures and agreed to revisit the budget next spring. ",
        "Most of the delays came from the supplier, who changed the delivery schedule twice. ",
        "We should summarise the findings in plain language before the next meeting. ",
        "Several readers asked how the new policy affects remote work and travel expenses. ",
        "The draft still needs a section on risks, costs and the expected timeline. ",
        "Please keep the tone friendly but precise, and avoid jargon where possible. ",
    ];
    // ("{g}" a given name, "{f}" a family name, "{t}" a town.)
    let named = [
        "Ask {g} {f} whether the lease can start a month later. ",
        "{g}'s train from {t} arrives just after six on Friday. ",
        "The plumber said Mr. {f} already paid for the new boiler. ",
        "Send the photos to {g} before she flies back to {t}. ",
        "{g} thinks the garden needs another fence along the north side. ",
    ];
    let given = [
        "Maria", "Tom", "Priya", "Anneke", "Grace", "Mark", "Olu", "Sven", "Lucía", "Hannah",
        "Kenji", "Fatima", "Jack", "Rose", "Dmitri", "Amara", "Liam", "Sophie", "Ravi", "Chloe",
        "Mateo", "Ingrid", "Tariq",
    ];
    let family = [
        "Keller", "Okafor", "Lindqvist", "Novak", "Brennan", "Tanaka", "Haddad", "Moreau",
        "Schmidt", "Costa", "Walsh", "Kowalski", "Nguyen", "Petrov", "Lincoln", "Baker", "Young",
        "Achebe", "Fontaine",
    ];
    let towns = [
        "Leeds", "Utrecht", "Lyon", "Porto", "Gdansk", "Bristol", "Turin", "Bremen", "Nagoya",
        "Leipzig", "Malmo", "Graz", "Cork", "Aarhus", "Haarlem", "Bergen", "Sheffield",
    ];
    let mut out = String::with_capacity(bytes + 100);
    let mut i = seed;
    while out.len() < bytes {
        i += 1;
        if i % every == 0 {
            out.push_str(
                &named[i % named.len()]
                    .replace("{g}", given[(i * 7 + seed) % given.len()])
                    .replace("{f}", family[(i * 5 + seed) % family.len()])
                    .replace("{t}", towns[(i * 3 + seed) % towns.len()]),
            );
        } else {
            out.push_str(everyday[i % everyday.len()]);
        }
    }
    out
}
