//! Linux sysfs readers (DRM GPUs, accel NPUs, hybrid cores, power supplies), each
//! rooted at a directory so tests can build fake trees.

use std::fs;
use std::path::Path;

use super::{npu, GpuInfo, NpuInfo, PowerInfo, PowerSource};

fn read_trim(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn read_hex(path: &Path) -> Option<u32> {
    let s = read_trim(path)?;
    u32::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// Sorted entry names of a directory (missing directory: none).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Count CPUs in a kernel cpu list such as "0-7,16-19".
pub(crate) fn count_cpu_list(list: &str) -> usize {
    list.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|part| match part.trim().split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(part.trim().parse::<usize>().is_ok()),
        })
        .sum()
}

/// Intel hybrid CPUs expose `cpu_core` (P) and `cpu_atom` (E) PMUs with their CPU
/// lists; counts are logical CPUs.
pub(crate) fn hybrid_cores(root: &Path) -> Option<(usize, usize)> {
    let p = read_trim(&root.join("sys/devices/cpu_core/cpus"))?;
    let e = read_trim(&root.join("sys/devices/cpu_atom/cpus"))?;
    Some((count_cpu_list(&p), count_cpu_list(&e)))
}

pub(crate) fn drm_gpus(root: &Path) -> Vec<GpuInfo> {
    let drm = root.join("sys/class/drm");
    entries(&drm)
        .into_iter()
        // card0, card1 ... but not connectors such as card0-HDMI-A-1
        .filter(|n| {
            n.starts_with("card") && n[4..].chars().all(|c| c.is_ascii_digit()) && n.len() > 4
        })
        .filter_map(|card| {
            let dev = drm.join(&card).join("device");
            let vendor_id = read_hex(&dev.join("vendor"))?;
            let device_id = read_hex(&dev.join("device")).unwrap_or(0);
            let vram =
                read_trim(&dev.join("mem_info_vram_total")).and_then(|s| s.parse::<u64>().ok());
            let (vendor, integrated) = match vendor_id {
                0x10de => ("NVIDIA", false),
                0x1002 => ("AMD", vram.map(|v| v < (1 << 30)).unwrap_or(true)),
                0x8086 => ("Intel", vram.is_none()),
                0x1af4 | 0x1234 | 0x15ad => return None, // virtio / QEMU / VMware display adapters
                _ => ("Unknown", vram.is_none()),
            };
            Some(GpuInfo {
                vendor: vendor.to_string(),
                name: format!("{vendor} GPU {vendor_id:04x}:{device_id:04x}"),
                vram_bytes: vram,
                unified_memory: integrated,
                working_set_bytes: None,
                source: "drm".into(),
            })
        })
        .collect()
}

pub(crate) fn accel_npus(root: &Path) -> Vec<NpuInfo> {
    let accel = root.join("sys/class/accel");
    entries(&accel)
        .into_iter()
        .filter_map(|name| {
            let dev = accel.join(&name).join("device");
            // The driver is a symlink to .../drivers/<name>; fixtures may use a file.
            let driver_path = dev.join("driver");
            let driver = fs::read_link(&driver_path)
                .ok()
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                .or_else(|| read_trim(&driver_path))?;
            let device_id = read_hex(&dev.join("device")).unwrap_or(0);
            npu::from_linux_driver(&driver, device_id)
        })
        .collect()
}

pub(crate) fn power(root: &Path) -> PowerInfo {
    let ps = root.join("sys/class/power_supply");
    let mut mains_online = None;
    let mut battery: Option<(f32, bool)> = None;
    for name in entries(&ps) {
        let dir = ps.join(&name);
        match read_trim(&dir.join("type")).as_deref() {
            Some("Mains") | Some("USB") => {
                let online = read_trim(&dir.join("online")).as_deref() == Some("1");
                mains_online = Some(mains_online.unwrap_or(false) || online);
            }
            Some("Battery") => {
                // Peripheral batteries (mice) report scope=Device; skip them.
                if read_trim(&dir.join("scope")).as_deref() == Some("Device") {
                    continue;
                }
                let capacity = read_trim(&dir.join("capacity")).and_then(|s| s.parse::<f32>().ok());
                let discharging = read_trim(&dir.join("status")).as_deref() == Some("Discharging");
                if let Some(c) = capacity {
                    battery = Some((c, discharging));
                }
            }
            _ => {}
        }
    }
    let source = match (mains_online, battery) {
        (Some(true), _) => PowerSource::Ac,
        (_, Some((_, true))) | (Some(false), Some(_)) => PowerSource::Battery,
        (Some(false), None) => PowerSource::Unknown,
        (None, Some(_)) => PowerSource::Ac,
        (None, None) => PowerSource::Unknown,
    };
    PowerInfo {
        source,
        battery_percent: battery.map(|b| b.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0-7,16-19"), 12);
        assert_eq!(count_cpu_list("3"), 1);
        assert_eq!(count_cpu_list(""), 0);
        assert_eq!(count_cpu_list("5-2,x"), 0);
    }
}
