//! `tandem scan` and `tandem redact`: the sensitivity engine from the command line.
//! The `--jsonl` form is a contract other tools rely on (documented in the README).

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Value};
use tandem_core::sensitivity::{self, Provenance, Pseudonymizer, Scanner};

/// Blocks of this size stream through `scan` and `redact`, so a 50 MB file stays in bounded memory.
const BLOCK: usize = 256 * 1024;

pub fn scanner(models_dir: &Path, rules: Option<PathBuf>, quiet: bool) -> Result<Scanner> {
    let path = rules.unwrap_or_else(sensitivity::default_rules_path);
    let rules = sensitivity::load_user_rules(&path).map_err(crate::coded)?;
    let scanner = sensitivity::load_default(models_dir, &rules).map_err(crate::coded)?;
    if !quiet {
        for n in scanner.notices() {
            eprintln!("notice: {n}");
        }
    }
    Ok(scanner)
}

fn input(file: Option<&Path>) -> Result<Box<dyn BufRead>> {
    Ok(match file {
        Some(p) if p != Path::new("-") => {
            let f =
                std::fs::File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            Box::new(BufReader::with_capacity(64 * 1024, f))
        }
        _ => Box::new(BufReader::with_capacity(64 * 1024, std::io::stdin())),
    })
}

/// One JSONL line in, one out. Never fails on content; only I/O errors end the run.
pub fn scan_jsonl(scanner: &Scanner, file: Option<&Path>, sensitive_source: bool) -> Result<()> {
    let provenance = if sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    jsonl(file, |id, body| {
        let report = scanner.scan_with(body, provenance);
        let spans: Vec<Value> = report
            .spans
            .iter()
            .map(|s| json!({"start": s.start, "end": s.end, "label": s.label, "tier": s.tier, "score": s.score}))
            .collect();
        json!({"id": id, "sensitive": report.sensitive(), "verdict": report.verdict, "spans": spans})
    })
}

/// `redact --jsonl`: {"id","text"} in, {"id","text","masked","withheld"} out, each line its own
/// conversation (placeholders numbered from 1).
pub fn redact_jsonl(scanner: &Scanner, file: Option<&Path>, sensitive_source: bool) -> Result<()> {
    let provenance = if sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    jsonl(file, |id, body| {
        let mut p = Pseudonymizer::new();
        let r = sensitivity::redact(scanner, &mut p, body, provenance);
        json!({"id": id, "text": r.text, "masked": r.masked, "withheld": r.withheld})
    })
}

fn jsonl(file: Option<&Path>, mut each: impl FnMut(&str, &str) -> Value) -> Result<()> {
    let mut reader = input(file)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .context("cannot read input")?
            == 0
        {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let result = match parse_line(text) {
            Ok((id, body)) => each(&id, &body),
            Err(e) => json!({"id": null, "error": e}),
        };
        serde_json::to_writer(&mut out, &result).context("cannot write output")?;
        out.write_all(b"\n").context("cannot write output")?;
        // Every line: a producer may wait for each answer before sending the next line.
        out.flush().context("cannot write output")?;
    }
    out.flush().context("cannot write output")?;
    Ok(())
}

fn parse_line(line: &str) -> Result<(String, String), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let obj = v
        .as_object()
        .ok_or("expected a JSON object {\"id\": string, \"text\": string}")?;
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .ok_or("missing string field \"id\"")?;
    let text = obj
        .get("text")
        .and_then(Value::as_str)
        .ok_or("missing string field \"text\"")?;
    Ok((id.to_string(), text.to_string()))
}

/// Human output: the text with spans highlighted, then a summary.
pub fn scan_human(scanner: &Scanner, file: Option<&Path>, sensitive_source: bool) -> Result<()> {
    let color = std::io::stdout().is_terminal();
    let provenance = if sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all: Vec<(usize, sensitivity::Span)> = Vec::new();
    let mut verdict = sensitivity::Verdict::Public;
    let mut reasons: Vec<String> = Vec::new();
    let mut io_err = None;
    scanner
        .scan_reader(input(file)?, BLOCK, provenance, |offset, text, report| {
            let mut last = 0usize;
            let mut rendered = String::with_capacity(text.len() + 64);
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            let byte = |cp: usize| chars.get(cp).map(|c| c.0).unwrap_or(text.len());
            for s in &report.spans {
                let (b0, b1) = (byte(s.start), byte(s.end));
                rendered.push_str(&text[last..b0]);
                if color {
                    rendered.push_str(&format!(
                        "\x1b[7m{}\x1b[0m\x1b[2m⟨{}⟩\x1b[0m",
                        &text[b0..b1],
                        s.label
                    ));
                } else {
                    rendered.push_str(&format!("«{}»⟨{}⟩", &text[b0..b1], s.label));
                }
                last = b1;
            }
            rendered.push_str(&text[last..]);
            if let Err(e) = out.write_all(rendered.as_bytes()) {
                io_err.get_or_insert(e);
            }
            verdict = verdict.max(report.verdict);
            for r in &report.reasons {
                if !reasons.contains(r) && r != "nothing sensitive found" {
                    reasons.push(r.clone());
                }
            }
            all.extend(report.spans.iter().cloned().map(|s| (offset, s)));
        })
        .context("cannot read input")?;
    if let Some(e) = io_err {
        return Err(e).context("cannot write output");
    }
    writeln!(out, "\n---")?;
    writeln!(out, "verdict: {}", verdict.as_str())?;
    for r in &reasons {
        writeln!(out, "  {r}")?;
    }
    for (offset, s) in &all {
        writeln!(
            out,
            "  {}..{}  {:<22} {:<16} {:.2}  {}",
            offset + s.start,
            offset + s.end,
            s.label,
            s.tier.as_str(),
            s.score,
            s.detector
        )?;
    }
    out.flush()?;
    Ok(())
}

/// The text exactly as a cloud provider would see it.
pub fn redact(scanner: &Scanner, file: Option<&Path>, sensitive_source: bool) -> Result<()> {
    let provenance = if sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    let mut pseudonymizer = Pseudonymizer::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut io_err = None;
    let (mut masked, mut withheld) = (0, 0);
    scanner
        .scan_reader(input(file)?, BLOCK, provenance, |_, text, report| {
            let r = sensitivity::redact_report(&mut pseudonymizer, text, report, provenance);
            masked += r.masked;
            withheld += r.withheld;
            if let Err(e) = out.write_all(r.text.as_bytes()) {
                io_err.get_or_insert(e);
            }
        })
        .context("cannot read input")?;
    if let Some(e) = io_err {
        return Err(e).context("cannot write output");
    }
    out.flush()?;
    eprintln!("redact: {masked} span(s) masked, {withheld} fragment(s) withheld (local only)");
    Ok(())
}

/// `tandem extract`: the document's text with its verdict, sensitive spans and per-fragment
/// classes, computed exactly as when the file is attached to a task.
pub fn extract_report(
    scanner: &Scanner,
    path: &Path,
    doc: tandem_core::extract::Extracted,
    json_out: bool,
    sensitive_source: bool,
) -> Result<()> {
    use tandem_core::router::{self, Attachment, Context, LocalClass, Task};
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let provenance = if sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    let report = scanner.scan_with(&doc.text, provenance);
    let task = Task {
        attachments: vec![Attachment {
            name: name.clone(),
            text: doc.text.clone(),
            sensitive_source,
        }],
        ..Task::default()
    };
    let ctx = Context {
        local_class: LocalClass::Small,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: false,
        device: None,
        device_chosen: false,
        no_local: false,
        degraded: None,
    };
    let fragments: Vec<_> = router::plan(scanner, &task, &ctx)
        .fragments
        .into_iter()
        .filter(|f| f.source == name)
        .collect();
    let spans: Vec<Value> = report
        .spans
        .iter()
        .map(|s| json!({"start": s.start, "end": s.end, "label": s.label, "tier": s.tier, "score": s.score}))
        .collect();
    if json_out {
        let v = json!({
            "path": path.display().to_string(),
            "kind": doc.kind,
            "encoding": doc.encoding,
            "bytes": doc.bytes,
            "chars": doc.text.chars().count(),
            "verdict": report.verdict,
            "spans": spans,
            "fragments": fragments,
            "notes": doc.notes,
            "text": doc.text,
        });
        println!("{}", serde_json::to_string(&v)?);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(doc.text.as_bytes())?;
    if !doc.text.ends_with('\n') {
        writeln!(out)?;
    }
    eprintln!(
        "{}: {} ({}), {} bytes, {} characters; verdict {}; {} sensitive span(s)",
        path.display(),
        serde_json::to_value(doc.kind)?.as_str().unwrap_or_default(),
        doc.encoding,
        doc.bytes,
        doc.text.chars().count(),
        serde_json::to_value(report.verdict)?
            .as_str()
            .unwrap_or_default(),
        report.spans.len()
    );
    for n in &doc.notes {
        eprintln!("note: {n}");
    }
    Ok(())
}
