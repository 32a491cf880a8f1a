//! Document extraction: one file in, its plain text out (text, Markdown, CSV, JSON, HTML, source
//! code, PDF, DOCX, XLSX), guarded against bad input: size caps, binary detection, encodings,
//! zip bombs, huge declared sheets, and parsers that panic or never finish. Dropped files and
//! watched folders both come through here.

mod office;
mod text;

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

#[derive(Debug, Clone)]
pub struct Limits {
    /// Files above this are refused before reading (default 50 MB).
    pub max_file_bytes: u64,
    /// Total uncompressed size allowed inside a DOCX/XLSX, or in a PDF's compressed streams
    /// (bombs), counted as they really inflate.
    pub max_unzipped_bytes: u64,
    /// Cells read from one workbook.
    pub max_cells: u64,
    /// Characters of text kept from one file; the rest is dropped with a note.
    pub max_chars: usize,
    /// Time allowed to one extraction (PDF parsers can loop).
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 50 << 20,
            max_unzipped_bytes: 200 << 20,
            max_cells: 2_000_000,
            max_chars: 20 << 20,
            timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Text,
    Markdown,
    Csv,
    Json,
    Html,
    Code,
    Pdf,
    Docx,
    Xlsx,
}

#[derive(Debug, Clone, Serialize)]
pub struct Extracted {
    pub kind: Kind,
    pub text: String,
    /// How the bytes were decoded: `utf-8`, `utf-16le`, `utf-16be`, `latin-1`, or the format.
    pub encoding: &'static str,
    pub bytes: u64,
    /// Things the user should know (text cut at the cap, unreadable parts skipped).
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    #[error("{0}: no such file")]
    NotFound(String),
    #[error("{0}: permission denied")]
    PermissionDenied(String),
    #[error("{path}: not a regular file")]
    NotAFile { path: String },
    #[error("{path}: {size} bytes is over the {max}-byte limit")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("{0}: binary content, not a document Tandem can read")]
    Binary(String),
    #[error("{path}: unsupported file type {ext:?}")]
    Unsupported { path: String, ext: String },
    #[error("{path}: not a valid {kind} file: {detail}")]
    Corrupt {
        path: String,
        kind: &'static str,
        detail: String,
    },
    #[error("{path}: expands beyond {max} bytes (a zip bomb?)")]
    ZipBomb { path: String, max: u64 },
    #[error("{path}: declares {cells} cells, more than the {max} allowed")]
    TooManyCells { path: String, cells: u64, max: u64 },
    #[error("{path}: extraction took longer than {seconds} s")]
    Timeout { path: String, seconds: u64 },
    #[error("{path}: the {kind} parser crashed on this file")]
    Panicked { path: String, kind: &'static str },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl crate::ErrorCode for ExtractError {
    fn code(&self) -> &'static str {
        match self {
            ExtractError::NotFound(_) => "extract.not_found",
            ExtractError::PermissionDenied(_) => "extract.permission_denied",
            ExtractError::NotAFile { .. } => "extract.not_a_file",
            ExtractError::TooLarge { .. } => "extract.too_large",
            ExtractError::Binary(_) => "extract.binary",
            ExtractError::Unsupported { .. } => "extract.unsupported",
            ExtractError::Corrupt { .. } => "extract.corrupt",
            ExtractError::ZipBomb { .. } => "extract.zip_bomb",
            ExtractError::TooManyCells { .. } => "extract.too_many_cells",
            ExtractError::Timeout { .. } => "extract.timeout",
            ExtractError::Panicked { .. } => "extract.panicked",
            ExtractError::Io { .. } => "extract.io",
        }
    }
}

/// The path as people read it (lossy for names that are not UTF-8).
pub(crate) fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn io_error(path: &Path, e: std::io::Error) -> ExtractError {
    let p = shown(path);
    match e.kind() {
        std::io::ErrorKind::NotFound => ExtractError::NotFound(p),
        std::io::ErrorKind::PermissionDenied => ExtractError::PermissionDenied(p),
        _ => ExtractError::Io { path: p, source: e },
    }
}

/// The kind a file name says, when Tandem reads it.
pub fn kind_of(path: &Path) -> Option<Kind> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    Some(match ext.as_str() {
        "" | "txt" | "text" | "log" | "rtf" | "eml" | "ics" | "vcf" | "ini" | "cfg" | "conf"
        | "env" | "tex" => Kind::Text,
        "md" | "markdown" | "rst" | "org" | "adoc" => Kind::Markdown,
        "csv" | "tsv" => Kind::Csv,
        "json" | "jsonl" | "ndjson" | "geojson" => Kind::Json,
        "html" | "htm" | "xhtml" => Kind::Html,
        "pdf" => Kind::Pdf,
        "docx" => Kind::Docx,
        "xlsx" | "xlsm" => Kind::Xlsx,
        "rs" | "py" | "js" | "ts" | "tsx" | "jsx" | "go" | "java" | "kt" | "c" | "h" | "cc"
        | "cpp" | "hpp" | "cs" | "rb" | "php" | "swift" | "scala" | "sh" | "bash" | "zsh"
        | "ps1" | "sql" | "toml" | "yaml" | "yml" | "xml" | "css" | "scss" | "lua" | "r" | "m"
        | "pl" | "dart" | "vue" | "svelte" | "tf" | "gradle" | "proto" => Kind::Code,
        _ => return None,
    })
}

/// Extracts one file. Blocking and CPU-bound: hosts call [`extract`] (off the async workers,
/// with the panic guard and the timeout) unless they are on a thread of their own.
pub fn extract_file(path: &Path, limits: &Limits) -> Result<Extracted, ExtractError> {
    // Metadata of the file itself, following links: a link loop is an error here, not a hang.
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(ExtractError::NotAFile { path: shown(path) });
    }
    if meta.len() > limits.max_file_bytes {
        return Err(ExtractError::TooLarge {
            path: shown(path),
            size: meta.len(),
            max: limits.max_file_bytes,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| {
            // A file that grew since the metadata was read is cut at the cap, not read forever.
            f.take(limits.max_file_bytes + 1).read_to_end(&mut bytes)
        })
        .map_err(|e| io_error(path, e))?;
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(ExtractError::TooLarge {
            path: shown(path),
            size: bytes.len() as u64,
            max: limits.max_file_bytes,
        });
    }
    let kind = match kind_of(path) {
        Some(k) => k,
        // Unknown extensions: read them when the content is text.
        None if !text::looks_binary(&bytes) => Kind::Text,
        None => {
            return Err(ExtractError::Unsupported {
                path: shown(path),
                ext: path
                    .extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            })
        }
    };
    extract_bytes(path, kind, bytes, limits)
}

/// Extracts bytes already read, of a known kind (`path` names it in errors).
pub fn extract_bytes(
    path: &Path,
    kind: Kind,
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<Extracted, ExtractError> {
    let size = bytes.len() as u64;
    let mut notes = Vec::new();
    let (text, encoding) = match kind {
        Kind::Pdf => (office::pdf(path, &bytes, limits)?, "pdf"),
        Kind::Docx => (office::docx(path, &bytes, limits)?, "docx"),
        Kind::Xlsx => (office::xlsx(path, &bytes, limits, &mut notes)?, "xlsx"),
        _ => {
            if text::looks_binary(&bytes) {
                return Err(ExtractError::Binary(shown(path)));
            }
            let (decoded, encoding) = text::decode(bytes);
            let text = match kind {
                Kind::Html => text::html_to_text(&decoded),
                Kind::Csv => text::csv_to_text(&decoded, path),
                _ => decoded,
            };
            (text, encoding)
        }
    };
    let mut text = text;
    if text.len() > limits.max_chars {
        let mut cut = limits.max_chars;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        notes.push(format!("the text was cut at {} bytes", limits.max_chars));
    }
    Ok(Extracted {
        kind,
        text,
        encoding,
        bytes: size,
        notes,
    })
}

/// [`extract_file`] on the blocking pool, with a panic guard and the timeout. A parser that
/// runs past the timeout is abandoned (its thread finishes on its own; the caller moves on).
pub async fn extract(path: &Path, limits: &Limits) -> Result<Extracted, ExtractError> {
    let (p, l) = (path.to_path_buf(), limits.clone());
    let kind = kind_of(path);
    let job = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| extract_file(&p, &l)))
    });
    match tokio::time::timeout(limits.timeout, job).await {
        Err(_) => Err(ExtractError::Timeout {
            path: shown(path),
            seconds: limits.timeout.as_secs(),
        }),
        Ok(Ok(Ok(r))) => r,
        Ok(Ok(Err(_))) | Ok(Err(_)) => Err(ExtractError::Panicked {
            path: shown(path),
            kind: kind.map(kind_name).unwrap_or("file"),
        }),
    }
}

pub(crate) fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Text => "text",
        Kind::Markdown => "Markdown",
        Kind::Csv => "CSV",
        Kind::Json => "JSON",
        Kind::Html => "HTML",
        Kind::Code => "source",
        Kind::Pdf => "PDF",
        Kind::Docx => "DOCX",
        Kind::Xlsx => "XLSX",
    }
}
