//! From a hardware report and the model manifest to a plan: which models fit in a
//! safe share of memory (weights + KV cache + runtime overhead), how fast they should
//! decode, which device and how many threads to use, and the capability tier the
//! router reads.

use serde::{Deserialize, Serialize};

use super::{HardwareReport, PROBE_SCHEMA_VERSION};
use crate::models::{Manifest, ModelSpec};

const GB: f64 = (1u64 << 30) as f64;
/// Context the fit is planned for; models may support more, users rarely need it here.
pub const PLANNED_CONTEXT: u64 = 4096;
/// Share of *available* memory a model may take on CPU; the rest of the desktop keeps working.
const CPU_MEMORY_SHARE: f64 = 0.6;
const VRAM_SHARE: f64 = 0.9;
/// Runtime overhead beyond weights and KV cache (activations, tokenizer, allocator).
const OVERHEAD_BYTES: u64 = 200 << 20;
/// Effective bytes of weights streamed per second per core in decode, calibrated on
/// the 2-core x86-64-v3 reference VM (Qwen2.5-0.5B, K-quants: 14.6 tok/s with 2
/// threads; bench/RESULTS.md). A rough planning figure, not a promise.
const CPU_BYTES_PER_SEC_PER_CORE: f64 = 3.5e9;
/// Cores stop adding speed once memory bandwidth is the limit; a dual-channel
/// desktop or laptop delivers roughly this much to the engine in practice.
const CPU_BYTES_PER_SEC_CAP: f64 = 20e9;
/// Per-token cost beyond streaming the weights (sampling, synchronisation, small
/// ops); dominates for tiny models. Measured: SmolLM2-135M Q8_0 decodes at ~33 tok/s
/// with 2 threads although its 145 MB would allow ~48.
const CPU_TOKEN_OVERHEAD_S: f64 = 0.010;
/// Below this, chatting with a model is unpleasant; the recommendation avoids it.
const USABLE_DECODE_TOK_S: f32 = 8.0;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityTier {
    /// < 0.5 B parameters: extraction, short rewrites, classification.
    Tiny,
    /// 0.5–2 B: summaries, simple Q&A, short code.
    Small,
    /// 2–9 B: most everyday tasks.
    Medium,
    /// > 9 B: strong local reasoning.
    Large,
}

impl CapabilityTier {
    pub fn from_parameters(billions: f64) -> Self {
        match billions {
            b if b < 0.5 => Self::Tiny,
            b if b < 2.0 => Self::Small,
            b if b < 9.0 => Self::Medium,
            _ => Self::Large,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ComputeDevice {
    Cpu,
    Metal,
    Cuda,
}

/// What this binary can drive (features decided at compile time).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, ts_rs::TS)]
pub struct BuildCaps {
    pub cuda: bool,
    pub metal: bool,
}

impl BuildCaps {
    pub fn current() -> Self {
        Self {
            cuda: cfg!(feature = "cuda"),
            metal: cfg!(all(target_os = "macos", target_arch = "aarch64")),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct ModelFit {
    pub name: String,
    pub parameters_b: f64,
    pub tier: CapabilityTier,
    pub fits: bool,
    pub required_bytes: u64,
    pub planned_context: u64,
    /// Rough planning estimate, `None` where there is no basis for one.
    pub est_decode_tok_s: Option<f32>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Recommendation {
    pub schema_version: u32,
    pub device: ComputeDevice,
    pub threads: usize,
    pub memory_budget_bytes: u64,
    /// The largest model that fits and decodes at a usable speed.
    pub recommended_model: Option<String>,
    /// Tier of the recommended model (what this machine can do locally).
    pub tier: CapabilityTier,
    pub models: Vec<ModelFit>,
    pub notes: Vec<String>,
}

pub fn recommend(hw: &HardwareReport, manifest: &Manifest, caps: BuildCaps) -> Recommendation {
    let mut notes = Vec::new();
    let threads = hw
        .cpu
        .performance_cores
        .filter(|p| *p > 0)
        .unwrap_or(hw.cpu.physical_cores)
        .max(1);

    let nvidia = hw
        .gpus
        .iter()
        .filter(|g| g.vendor == "NVIDIA")
        .filter_map(|g| g.vram_bytes)
        .max();
    let apple = hw
        .gpus
        .iter()
        .find(|g| g.vendor == "Apple" && g.unified_memory);
    let cpu_budget = (hw.memory.available_bytes as f64 * CPU_MEMORY_SHARE) as u64;

    let (device, budget) = if let (Some(vram), true) = (nvidia, caps.cuda) {
        (ComputeDevice::Cuda, (vram as f64 * VRAM_SHARE) as u64)
    } else if let (Some(gpu), true) = (apple, caps.metal) {
        (
            ComputeDevice::Metal,
            gpu.working_set_bytes
                .unwrap_or(cpu_budget)
                .min(hw.memory.available_bytes.max(cpu_budget)),
        )
    } else {
        if let Some(vram) = nvidia {
            notes.push(format!(
                "an NVIDIA GPU with {:.0} GB is present; this build has no CUDA support (build with `--features cuda`)",
                vram as f64 / GB
            ));
        }
        if apple.is_some() {
            notes.push("Apple GPU present; this build has no Metal support".into());
        }
        (ComputeDevice::Cpu, cpu_budget)
    };

    if device == ComputeDevice::Cpu && hw.arch == "x86_64" && !hw.cpu.simd.avx2 {
        notes.push("CPU without AVX2: quantized kernels run scalar and slowly".into());
    }
    if device == ComputeDevice::Cpu && hw.cpu.simd.avx2 && !hw.cpu.simd.build_uses_avx2 {
        notes.push("this build does not use AVX2 although the CPU has it (see .cargo/config.toml): ~3x slower".into());
    }
    if !hw.npus.is_empty() {
        notes.push("the NPU does not run the chat model: mistral.rs has no NPU backend".into());
    }
    if hw.power.source == super::PowerSource::Battery {
        notes.push(
            "on battery: long local generations drain it; the router may prefer short local tasks"
                .into(),
        );
    }

    let models: Vec<ModelFit> = manifest
        .models
        .iter()
        .map(|m| fit(m, hw, device, budget, threads))
        .collect();

    let best = models
        .iter()
        .filter(|f| {
            f.fits
                && f.est_decode_tok_s
                    .map(|t| t >= USABLE_DECODE_TOK_S)
                    .unwrap_or(true)
        })
        .max_by(|a, b| a.parameters_b.total_cmp(&b.parameters_b));
    // Nothing usable: the smallest model that fits at all still beats no local model.
    let best = best.or_else(|| {
        models
            .iter()
            .filter(|f| f.fits)
            .min_by(|a, b| a.parameters_b.total_cmp(&b.parameters_b))
    });
    if best.is_none() {
        notes.push(
            "no model in the manifest fits in memory: everything non-sensitive goes to the cloud"
                .into(),
        );
    }

    Recommendation {
        schema_version: PROBE_SCHEMA_VERSION,
        device,
        threads,
        memory_budget_bytes: budget,
        recommended_model: best.map(|b| b.name.clone()),
        tier: best.map(|b| b.tier).unwrap_or(CapabilityTier::Tiny),
        models,
        notes,
    }
}

fn fit(
    m: &ModelSpec,
    hw: &HardwareReport,
    device: ComputeDevice,
    budget: u64,
    threads: usize,
) -> ModelFit {
    let ctx = PLANNED_CONTEXT.min(m.context_length);
    let weights = m.loaded_size();
    let required = weights + m.kv_bytes_per_token * ctx + OVERHEAD_BYTES;
    let min_ram = (m.min_ram_gb * GB) as u64;
    let fits_budget = required <= budget;
    let fits_ram = hw.memory.total_bytes >= min_ram;
    let est = match device {
        ComputeDevice::Cpu => {
            let simd_factor = if hw.cpu.simd.build_uses_avx2 || hw.arch == "aarch64" {
                1.0
            } else {
                1.0 / 3.0
            };
            let rate_at =
                |t: usize| (CPU_BYTES_PER_SEC_PER_CORE * t as f64).min(CPU_BYTES_PER_SEC_CAP);
            let rate = rate_at(threads) * simd_factor;
            Some(match m.measured {
                // A measured model: its speed on the reference machine, scaled by the
                // bandwidth this machine's threads get (quant types the engine runs without
                // SIMD, such as Q5_0, show in the measurement, not in the file size).
                Some(cal) => (cal.decode_tok_s as f64 * rate / rate_at(cal.threads.max(1))) as f32,
                None => (1.0 / (weights as f64 / rate + CPU_TOKEN_OVERHEAD_S)) as f32,
            })
        }
        // No measurement to scale from yet for GPUs: say nothing rather than guess.
        ComputeDevice::Metal | ComputeDevice::Cuda => None,
    };
    let reason = if !fits_ram {
        format!("needs at least {:.0} GB of RAM", m.min_ram_gb)
    } else if !fits_budget {
        format!(
            "needs {:.1} GB with a {}-token context; budget is {:.1} GB",
            required as f64 / GB,
            ctx,
            budget as f64 / GB
        )
    } else {
        format!(
            "fits: {:.1} of {:.1} GB; speed {}",
            required as f64 / GB,
            budget as f64 / GB,
            if m.measured.is_some() {
                "from a measurement on the reference machine"
            } else {
                "estimated from its size"
            }
        )
    };
    ModelFit {
        name: m.name.clone(),
        parameters_b: m.parameters_b,
        tier: CapabilityTier::from_parameters(m.parameters_b),
        fits: fits_budget && fits_ram,
        required_bytes: required,
        planned_context: ctx,
        est_decode_tok_s: est,
        reason,
    }
}
