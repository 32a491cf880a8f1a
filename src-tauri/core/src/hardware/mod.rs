//! The hardware probe: what this machine has (CPU, SIMD, memory, GPUs, NPUs, power)
//! and, with the model manifest, what it should run. Readers take a filesystem root
//! so tests can hand them fake sysfs trees for machines we do not have.

mod npu;
mod recommend;
mod sysfs;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use recommend::{
    recommend, BuildCaps, CapabilityTier, ComputeDevice, ModelFit, Recommendation, PLANNED_CONTEXT,
};

/// Bumped when a field changes meaning or disappears (additions keep the version).
pub const PROBE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct HardwareReport {
    pub os: String,
    pub arch: String,
    pub cpu: CpuInfo,
    pub memory: MemoryInfo,
    pub gpus: Vec<GpuInfo>,
    pub npus: Vec<NpuInfo>,
    pub power: PowerInfo,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct CpuInfo {
    pub brand: String,
    pub physical_cores: usize,
    pub logical_cores: usize,
    /// Hybrid CPUs only (Intel P/E, Apple performance/efficiency clusters).
    pub performance_cores: Option<usize>,
    pub efficiency_cores: Option<usize>,
    pub simd: SimdFeatures,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct SimdFeatures {
    pub avx2: bool,
    pub avx512f: bool,
    pub fma: bool,
    pub f16c: bool,
    pub neon: bool,
    /// Whether this binary was compiled to use AVX2/FMA (see .cargo/config.toml):
    /// candle picks its quantized kernels at compile time, so a CPU with AVX2 running
    /// a build without it is ~3x slower.
    pub build_uses_avx2: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct MemoryInfo {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct GpuInfo {
    pub vendor: String,
    pub name: String,
    /// Dedicated memory; `None` where the OS does not expose it (integrated GPUs).
    pub vram_bytes: Option<u64>,
    /// Shares system memory with the CPU (Apple Silicon, most integrated GPUs).
    pub unified_memory: bool,
    /// For unified memory: how much a GPU workload may use (Metal's recommended
    /// working set, or an estimate of it).
    pub working_set_bytes: Option<u64>,
    /// `drm` (Linux sysfs), `nvml`, `macos`.
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct NpuInfo {
    pub vendor: String,
    pub name: String,
    pub driver: String,
    pub tops: Option<f32>,
    /// How Tandem uses (or cannot use) it, in words.
    pub usage: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PowerSource {
    Ac,
    Battery,
    #[default]
    Unknown,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct PowerInfo {
    pub source: PowerSource,
    pub battery_percent: Option<f32>,
}

/// What the OS APIs (sysinfo, cpuid, sysctl) report; everything else is read from
/// files below a root. Split out so fixtures can describe machines we do not have.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct BaseInfo {
    pub os: String,
    pub arch: String,
    pub cpu: CpuInfo,
    pub memory: MemoryInfo,
    /// Only on macOS: what sysctl says.
    pub apple: Option<AppleInfo>,
    /// NVIDIA GPUs as NVML reports them (empty without the driver's library).
    #[serde(default)]
    pub nvml_gpus: Vec<GpuInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct AppleInfo {
    pub chip: String,
    pub apple_silicon: bool,
}

/// Probe the machine this process runs on.
pub fn probe() -> HardwareReport {
    probe_with(&base_info(), Path::new("/"))
}

/// Build a report from OS facts plus the files under `root` (`/` on a real machine).
pub fn probe_with(base: &BaseInfo, root: &Path) -> HardwareReport {
    let mut cpu = base.cpu.clone();
    if cpu.performance_cores.is_none() {
        if let Some((p, e)) = sysfs::hybrid_cores(root) {
            cpu.performance_cores = Some(p);
            cpu.efficiency_cores = Some(e);
        }
    }
    let mut gpus = Vec::new();
    let mut npus = Vec::new();
    if let Some(apple) = base.apple.as_ref().filter(|a| a.apple_silicon) {
        gpus.push(GpuInfo {
            vendor: "Apple".into(),
            name: format!("{} GPU", apple.chip),
            vram_bytes: None,
            unified_memory: true,
            working_set_bytes: Some(apple_working_set(base.memory.total_bytes)),
            source: "macos".into(),
        });
        npus.push(npu::apple_neural_engine(&apple.chip));
    }
    gpus.extend(merge_nvml(sysfs::drm_gpus(root), base.nvml_gpus.clone()));
    npus.extend(sysfs::accel_npus(root));
    HardwareReport {
        os: base.os.clone(),
        arch: base.arch.clone(),
        cpu,
        memory: base.memory.clone(),
        gpus,
        npus,
        power: sysfs::power(root),
    }
}

/// Metal's `recommendedMaxWorkingSetSize` cannot be read without linking Metal; this
/// approximates what Apple reports (about two thirds of RAM up to 36 GB, three
/// quarters above).
fn apple_working_set(total: u64) -> u64 {
    const GB: u64 = 1 << 30;
    if total <= 36 * GB {
        total / 3 * 2
    } else {
        total / 4 * 3
    }
}

fn base_info() -> BaseInfo {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
    // sysinfo 0.40 returns an error on unsupported platforms; report zeros then.
    let sys = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .ok();
    let cpus = sys.as_ref().map(|s| s.cpus()).unwrap_or_default();
    let brand = cpus
        .first()
        .map(|c| c.brand().trim().to_string())
        .unwrap_or_default();
    let logical = cpus.len().max(1);
    let physical = System::physical_core_count().unwrap_or(logical).max(1);
    let apple = apple_info();
    let (performance_cores, efficiency_cores) = apple_perf_levels();
    BaseInfo {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpu: CpuInfo {
            brand: if brand.is_empty() {
                apple.as_ref().map(|a| a.chip.clone()).unwrap_or_default()
            } else {
                brand
            },
            physical_cores: physical,
            logical_cores: logical,
            performance_cores,
            efficiency_cores,
            simd: simd_features(),
        },
        memory: MemoryInfo {
            total_bytes: sys.as_ref().map(|s| s.total_memory()).unwrap_or(0),
            available_bytes: sys.as_ref().map(|s| s.available_memory()).unwrap_or(0),
        },
        apple,
        nvml_gpus: nvidia_via_nvml(),
    }
}

fn simd_features() -> SimdFeatures {
    #[allow(unused_mut)]
    let mut s = SimdFeatures {
        build_uses_avx2: cfg!(target_feature = "avx2"),
        ..Default::default()
    };
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        s.avx2 = std::is_x86_feature_detected!("avx2");
        s.avx512f = std::is_x86_feature_detected!("avx512f");
        s.fma = std::is_x86_feature_detected!("fma");
        s.f16c = std::is_x86_feature_detected!("f16c");
    }
    #[cfg(target_arch = "aarch64")]
    {
        s.neon = std::arch::is_aarch64_feature_detected!("neon");
    }
    s
}

#[cfg(target_os = "macos")]
fn sysctl(name: &str) -> Option<String> {
    let out = std::process::Command::new("/usr/sbin/sysctl")
        .args(["-n", name])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(target_os = "macos")]
fn apple_info() -> Option<AppleInfo> {
    let chip = sysctl("machdep.cpu.brand_string").unwrap_or_default();
    let apple_silicon = sysctl("hw.optional.arm64").as_deref() == Some("1");
    Some(AppleInfo {
        chip,
        apple_silicon,
    })
}

#[cfg(not(target_os = "macos"))]
fn apple_info() -> Option<AppleInfo> {
    None
}

#[cfg(target_os = "macos")]
fn apple_perf_levels() -> (Option<usize>, Option<usize>) {
    let p = sysctl("hw.perflevel0.physicalcpu").and_then(|s| s.parse().ok());
    let e = sysctl("hw.perflevel1.physicalcpu").and_then(|s| s.parse().ok());
    (p, e)
}

#[cfg(not(target_os = "macos"))]
fn apple_perf_levels() -> (Option<usize>, Option<usize>) {
    (None, None)
}

/// NVML is loaded at run time (libnvidia-ml ships with the driver); absent library
/// or no GPU simply yields nothing. DRM entries for the same GPUs are replaced, since
/// NVML knows the name and VRAM that sysfs does not expose for NVIDIA.
fn nvidia_via_nvml() -> Vec<GpuInfo> {
    let Ok(nvml) = nvml_wrapper::Nvml::init() else {
        return Vec::new();
    };
    let count = nvml.device_count().unwrap_or(0);
    (0..count)
        .filter_map(|i| nvml.device_by_index(i).ok())
        .map(|d| GpuInfo {
            vendor: "NVIDIA".into(),
            name: d.name().unwrap_or_else(|_| "NVIDIA GPU".into()),
            vram_bytes: d.memory_info().ok().map(|m| m.total),
            unified_memory: false,
            working_set_bytes: None,
            source: "nvml".into(),
        })
        .collect()
}

/// Merge NVML results over DRM ones: prefer the richer NVML entry per NVIDIA GPU.
pub(crate) fn merge_nvml(mut gpus: Vec<GpuInfo>, nvml: Vec<GpuInfo>) -> Vec<GpuInfo> {
    if nvml.is_empty() {
        return gpus;
    }
    gpus.retain(|g| !(g.vendor == "NVIDIA" && g.source == "drm"));
    gpus.extend(nvml);
    gpus
}
