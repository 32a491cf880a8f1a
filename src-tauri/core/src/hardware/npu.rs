//! Known NPUs and their peak TOPS, and how Tandem uses them. mistral.rs has no NPU
//! backend, so an NPU never runs the chat model; it is the intended home of the
//! compact sensitivity (NER) model through ONNX Runtime's execution providers.

use super::NpuInfo;

const NPU_USAGE: &str = "not used by the chat model (mistral.rs has no NPU backend); \
reserved for the compact sensitivity model via ONNX Runtime";

/// (PCI device id, marketing name, peak INT8 TOPS) as published by the vendors.
const INTEL_NPUS: &[(u32, &str, f32)] = &[
    (0x7d1d, "Intel AI Boost NPU (Meteor Lake)", 11.0),
    (0xad1d, "Intel AI Boost NPU (Arrow Lake)", 13.0),
    (0x643e, "Intel AI Boost NPU 4 (Lunar Lake)", 48.0),
    (0xb03e, "Intel NPU 5 (Panther Lake)", 50.0),
];

const AMD_NPUS: &[(u32, &str, f32)] = &[
    (0x1502, "AMD Ryzen AI NPU (XDNA, Phoenix/Hawk Point)", 16.0),
    (0x17f0, "AMD Ryzen AI NPU (XDNA 2, Strix)", 50.0),
];

/// Apple Neural Engine TOPS by chip generation (Apple's published figures).
const APPLE_ANE: &[(&str, f32)] = &[("M1", 11.0), ("M2", 15.8), ("M3", 18.0), ("M4", 38.0)];

pub(crate) fn from_linux_driver(driver: &str, device_id: u32) -> Option<NpuInfo> {
    let (vendor, table, fallback) = match driver {
        "intel_vpu" => ("Intel", INTEL_NPUS, "Intel NPU"),
        "amdxdna" => ("AMD", AMD_NPUS, "AMD XDNA NPU"),
        _ => return None,
    };
    let known = table.iter().find(|(id, _, _)| *id == device_id);
    Some(NpuInfo {
        vendor: vendor.into(),
        name: known
            .map(|k| k.1.to_string())
            .unwrap_or_else(|| fallback.to_string()),
        driver: driver.into(),
        tops: known.map(|k| k.2),
        usage: NPU_USAGE.into(),
    })
}

pub(crate) fn apple_neural_engine(chip: &str) -> NpuInfo {
    // "Apple M2 Pro" → generation "M2"
    let tops = APPLE_ANE
        .iter()
        .rev()
        .find(|(gen, _)| chip.split_whitespace().any(|w| w == *gen))
        .map(|g| g.1);
    NpuInfo {
        vendor: "Apple".into(),
        name: "Apple Neural Engine".into(),
        driver: "coreml".into(),
        tops,
        usage: NPU_USAGE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apple_generations() {
        assert_eq!(apple_neural_engine("Apple M1").tops, Some(11.0));
        assert_eq!(apple_neural_engine("Apple M2 Pro").tops, Some(15.8));
        assert_eq!(apple_neural_engine("Apple M4 Max").tops, Some(38.0));
        assert_eq!(apple_neural_engine("Apple A18").tops, None);
    }

    #[test]
    fn unknown_driver_is_not_an_npu() {
        assert!(from_linux_driver("i915", 0x7d1d).is_none());
        let n = from_linux_driver("intel_vpu", 0x9999).unwrap();
        assert_eq!((n.name.as_str(), n.tops), ("Intel NPU", None));
    }
}
