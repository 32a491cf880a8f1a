//! GGUF inspection before loading (magic, architecture, truncation), because
//! mistral.rs panics on architectures it does not know; and the one-time
//! requantization of tensors into a format with SIMD kernels.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::Device;
use serde::Serialize;

use super::{io_err, ModelError};

/// `general.architecture` values mistral.rs 0.8.1 can load from GGUF.
pub const SUPPORTED_ARCHITECTURES: &[&str] = &[
    "llama",
    "mistral3",
    "phi2",
    "phi3",
    "starcoder2",
    "qwen2",
    "qwen3",
    "qwen3moe",
];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GgufInfo {
    pub architecture: String,
    pub name: Option<String>,
    pub tensor_count: usize,
    /// Count of tensors per GGML type, e.g. {"Q4_1": 210, "F32": 61}.
    pub tensor_types: Vec<(String, usize)>,
    pub file_bytes: u64,
    pub has_chat_template: bool,
    pub context_length: Option<u64>,
}

fn read_content(path: &Path) -> Result<(gguf_file::Content, u64), ModelError> {
    let shown = path.display().to_string();
    let mut file = File::open(path).map_err(io_err(format!("opening {shown}")))?;
    let len = file
        .metadata()
        .map_err(io_err(format!("reading {shown}")))?
        .len();
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
        return Err(ModelError::NotGguf {
            path: shown,
            reason: "no GGUF magic".into(),
        });
    }
    let mut reader = BufReader::new(File::open(path).map_err(io_err(format!("opening {shown}")))?);
    // candle's reader trusts counts in the header; a hostile or damaged file must
    // not take the process down with it.
    let content = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gguf_file::Content::read(&mut reader)
    }))
    .map_err(|_| ModelError::NotGguf {
        path: shown.clone(),
        reason: "header parser panicked".into(),
    })?
    .map_err(|e| {
        if len < 1 << 20 || e.to_string().contains("failed to fill whole buffer") {
            ModelError::NotGguf {
                path: shown.clone(),
                reason: format!("unreadable header: {e}"),
            }
        } else {
            ModelError::NotGguf {
                path: shown.clone(),
                reason: e.to_string(),
            }
        }
    })?;
    Ok((content, len))
}

fn ggml_name(t: GgmlDType) -> String {
    match t {
        GgmlDType::Q2K => "Q2_K".into(),
        GgmlDType::Q3K => "Q3_K".into(),
        GgmlDType::Q4K => "Q4_K".into(),
        GgmlDType::Q5K => "Q5_K".into(),
        GgmlDType::Q6K => "Q6_K".into(),
        GgmlDType::Q8K => "Q8_K".into(),
        other => format!("{other:?}"),
    }
}

fn parse_ggml(name: &str) -> Option<GgmlDType> {
    Some(match name.to_ascii_uppercase().as_str() {
        "F32" => GgmlDType::F32,
        "F16" => GgmlDType::F16,
        "Q4_0" => GgmlDType::Q4_0,
        "Q4_1" => GgmlDType::Q4_1,
        "Q5_0" => GgmlDType::Q5_0,
        "Q5_1" => GgmlDType::Q5_1,
        "Q8_0" => GgmlDType::Q8_0,
        "Q4_K" => GgmlDType::Q4K,
        "Q5_K" => GgmlDType::Q5K,
        "Q6_K" => GgmlDType::Q6K,
        _ => return None,
    })
}

/// Read the header, check the architecture is loadable and the file holds every
/// tensor it declares. Cheap: tensor data is not read.
pub fn inspect(path: &Path) -> Result<GgufInfo, ModelError> {
    let shown = path.display().to_string();
    let (content, len) = read_content(path)?;
    let arch = match content.metadata.get("general.architecture") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(ModelError::NotGguf {
                path: shown,
                reason: "no general.architecture".into(),
            })
        }
    };
    let mut needed = content.tensor_data_offset;
    let mut types: HashMap<String, usize> = HashMap::new();
    for info in content.tensor_infos.values() {
        let elems = info.shape.elem_count();
        let block = info.ggml_dtype.block_size();
        let bytes = (elems / block.max(1)) * info.ggml_dtype.type_size();
        needed = needed.max(content.tensor_data_offset + info.offset + bytes as u64);
        *types.entry(ggml_name(info.ggml_dtype)).or_default() += 1;
    }
    if len < needed {
        return Err(ModelError::Truncated {
            path: shown,
            expected: needed,
            actual: len,
        });
    }
    if !SUPPORTED_ARCHITECTURES.contains(&arch.as_str()) {
        return Err(ModelError::UnsupportedArchitecture {
            path: shown,
            arch,
            supported: SUPPORTED_ARCHITECTURES.join(", "),
        });
    }
    let mut tensor_types: Vec<(String, usize)> = types.into_iter().collect();
    tensor_types.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let ctx_key = format!("{arch}.context_length");
    Ok(GgufInfo {
        name: match content.metadata.get("general.name") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        },
        context_length: content
            .metadata
            .get(&ctx_key)
            .and_then(|v| v.to_u64().ok().or_else(|| v.to_u32().ok().map(u64::from))),
        has_chat_template: content.metadata.contains_key("tokenizer.chat_template"),
        architecture: arch,
        tensor_count: content.tensor_infos.len(),
        tensor_types,
        file_bytes: len,
    })
}

/// llama.cpp's `general.file_type` codes for the targets we write.
fn file_type_code(t: GgmlDType) -> Option<u32> {
    match t {
        GgmlDType::Q4_0 => Some(2),
        GgmlDType::Q8_0 => Some(7),
        _ => None,
    }
}

/// Write `dst` with every tensor of a type in `from` converted to `to` (through f32),
/// the rest copied unchanged. Writes `dst.part` first, so a crash never leaves a
/// half file under the final name. CPU-heavy: call from a blocking thread.
pub fn requantize(src: &Path, dst: &Path, from: &[String], to: &str) -> Result<(), ModelError> {
    let rq = |m: String| ModelError::Requantize(m);
    let target = parse_ggml(to).ok_or_else(|| rq(format!("unsupported target type {to}")))?;
    let sources: Vec<GgmlDType> = from
        .iter()
        .map(|f| parse_ggml(f).ok_or_else(|| rq(format!("unsupported source type {f}"))))
        .collect::<Result<_, _>>()?;
    inspect(src)?;
    let (content, _) = read_content(src)?;
    let mut reader =
        BufReader::new(File::open(src).map_err(io_err(format!("opening {}", src.display())))?);

    let mut names: Vec<(&String, u64)> = content
        .tensor_infos
        .iter()
        .map(|(n, i)| (n, i.offset))
        .collect();
    names.sort_by_key(|(_, off)| *off);
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(names.len());
    for (name, _) in names {
        let q = content
            .tensor(&mut reader, name, &Device::Cpu)
            .map_err(|e| rq(format!("{name}: {e}")))?;
        let block = target.block_size();
        let last_dim = q.shape().dims().last().copied().unwrap_or(0);
        let q = if sources.contains(&q.dtype()) && last_dim % block == 0 {
            let f = q
                .dequantize(&Device::Cpu)
                .map_err(|e| rq(format!("{name}: {e}")))?;
            QTensor::quantize(&f, target).map_err(|e| rq(format!("{name}: {e}")))?
        } else {
            q
        };
        tensors.push((name.clone(), q));
    }

    let file_type = file_type_code(target).map(Value::U32);
    let mut metadata: Vec<(&str, &Value)> = content
        .metadata
        .iter()
        // candle writes with the default 32-byte alignment; a copied
        // general.alignment could contradict it.
        .filter(|(k, _)| k.as_str() != "general.alignment" && k.as_str() != "general.file_type")
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    if let Some(ft) = file_type.as_ref() {
        metadata.push(("general.file_type", ft));
    }
    metadata.sort_by_key(|(k, _)| *k);
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();

    let part = dst.with_extension("gguf.part");
    {
        let file = File::create(&part).map_err(io_err(format!("creating {}", part.display())))?;
        let mut w = BufWriter::new(file);
        gguf_file::write(&mut w, &metadata, &tensor_refs).map_err(|e| rq(e.to_string()))?;
        use std::io::Write;
        w.flush()
            .map_err(io_err(format!("writing {}", part.display())))?;
        w.get_ref()
            .sync_all()
            .map_err(io_err(format!("syncing {}", part.display())))?;
    }
    inspect(&part)?;
    std::fs::rename(&part, dst).map_err(io_err(format!("renaming to {}", dst.display())))?;
    Ok(())
}
