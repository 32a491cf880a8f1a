//! Model files that must not crash the engine (missing, truncated, foreign,
//! unsupported architecture), and the quality of the Q4_1 → Q8_0 conversion.

use std::io::Write;

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use tandem_core::events::EventBus;
use tandem_core::local::{EngineOptions, MistralEngine};
use tandem_core::models::gguf;
use tandem_core::ErrorCode;

use crate::common;

async fn load_err(path: &std::path::Path) -> String {
    match MistralEngine::load(EngineOptions::new("bad", path), EventBus::new()).await {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(e) => e.code().to_string(),
    }
}

/// A tiny but well-formed GGUF with the given architecture.
fn write_gguf(path: &std::path::Path, arch: &str) {
    let t = QTensor::quantize(
        &Tensor::zeros((4, 32), candle_core::DType::F32, &Device::Cpu).unwrap(),
        GgmlDType::Q8_0,
    )
    .unwrap();
    let arch_v = Value::String(arch.into());
    let mut f = std::fs::File::create(path).unwrap();
    gguf_file::write(
        &mut f,
        &[("general.architecture", &arch_v)],
        &[("token_embd.weight", &t)],
    )
    .unwrap();
}

#[tokio::test]
async fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_err(&dir.path().join("nope.gguf")).await, "models.io");
}

#[tokio::test]
async fn foreign_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.gguf");
    std::fs::write(&p, b"these are my notes, not a model").unwrap();
    assert_eq!(load_err(&p).await, "models.not_gguf");
    let empty = dir.path().join("empty.gguf");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(load_err(&empty).await, "models.not_gguf");
}

#[tokio::test]
async fn truncated_file() {
    let (_, real) = common::default_model();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.gguf");
    let bytes = std::fs::read(&real).unwrap();
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&bytes[..bytes.len() / 2])
        .unwrap();
    assert_eq!(load_err(&p).await, "models.truncated");
    // Cut inside the header: still a clear error, never a panic.
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&bytes[..4096])
        .unwrap();
    let code = load_err(&p).await;
    assert!(
        code == "models.not_gguf" || code == "models.truncated",
        "{code}"
    );
}

#[tokio::test]
async fn unsupported_architecture_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gemma.gguf");
    write_gguf(&p, "gemma3");
    assert_eq!(load_err(&p).await, "models.unsupported_architecture");
    let ok = dir.path().join("llama.gguf");
    write_gguf(&ok, "llama");
    assert_eq!(gguf::inspect(&ok).unwrap().architecture, "llama");
}

#[test]
fn q8_0_conversion_keeps_the_weights() {
    let (_, path) = common::default_model();
    let info = gguf::inspect(&path).unwrap();
    assert!(
        path.to_string_lossy().ends_with(".Q8_0.gguf"),
        "the engine loads the converted file: {}",
        path.display()
    );
    assert!(
        info.tensor_types.iter().all(|(t, _)| t != "Q4_1"),
        "{:?}",
        info.tensor_types
    );
    assert!(info.has_chat_template);

    let original = path.with_file_name("SmolLM2-135M-Instruct.Q4_1.gguf");
    let read = |p: &std::path::Path, name: &str| {
        let mut f = std::fs::File::open(p).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        c.tensor(&mut f, name, &Device::Cpu)
            .unwrap()
            .dequantize(&Device::Cpu)
            .unwrap()
    };
    for name in [
        "blk.0.attn_q.weight",
        "blk.15.ffn_down.weight",
        "blk.29.ffn_up.weight",
    ] {
        let a = read(&original, name);
        let b = read(&path, name);
        let max = a
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let err = (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        // Q8_0 steps are max/127 per block of 32: the error is at most half a step.
        assert!(
            err <= max / 127.0,
            "{name}: max error {err} vs max weight {max}"
        );
    }
}
