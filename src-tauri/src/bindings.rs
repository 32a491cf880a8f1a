//! The IPC payload types as TypeScript (`ui/src/bindings.ts`), generated from the Rust types
//! with ts-rs so the page and the shell cannot drift: the test fails when the committed file
//! differs from what the Rust types say. `TANDEM_WRITE_BINDINGS=1 cargo test -p tandem-app
//! --lib bindings` rewrites it.

#[cfg(test)]
mod tests {
    use ts_rs::{Config, TS};

    use crate::commands::{attach, chat, folders, hardware, ledger, models, settings};
    use crate::state::Prefs;
    use tandem_core::{
        cloud::{agents::Trust, Wire},
        conversations::{ConversationInfo, Document, ExportFormat, Turn},
        error::ErrorInfo,
        hardware as hw,
        index::{Folder, PassStats, Status as IndexStatus},
        ledger::{Destination, LedgerEntry, Status as LedgerStatus, Totals},
        local::{GenerationMetrics, LoadedModel},
        models::FetchProgress,
        router::{
            run::{RunEvent, Summary},
            Plan, PlanFragment, Policy, Route, Strategy,
        },
        secrets::KeySource,
        sensitivity::Verdict,
    };

    fn bindings() -> String {
        // JSON numbers: u64 fields (byte counts, times) arrive as numbers, not bigints.
        let cfg = Config::new().with_large_int("number");
        let decls = [
            Verdict::decl(&cfg),
            Route::decl(&cfg),
            Policy::decl(&cfg),
            Strategy::decl(&cfg),
            PlanFragment::decl(&cfg),
            Plan::decl(&cfg),
            Summary::decl(&cfg),
            RunEvent::decl(&cfg),
            GenerationMetrics::decl(&cfg),
            LoadedModel::decl(&cfg),
            Document::decl(&cfg),
            Turn::decl(&cfg),
            ConversationInfo::decl(&cfg),
            ExportFormat::decl(&cfg),
            chat::Asked::decl(&cfg),
            LedgerStatus::decl(&cfg),
            Destination::decl(&cfg),
            LedgerEntry::decl(&cfg),
            Totals::decl(&cfg),
            ledger::LedgerView::decl(&cfg),
            ErrorInfo::decl(&cfg),
            attach::Chip::decl(&cfg),
            attach::AttachEvent::decl(&cfg),
            Wire::decl(&cfg),
            Trust::decl(&cfg),
            KeySource::decl(&cfg),
            settings::ProviderView::decl(&cfg),
            settings::GatewayView::decl(&cfg),
            settings::SettingsView::decl(&cfg),
            Prefs::decl(&cfg),
            Folder::decl(&cfg),
            PassStats::decl(&cfg),
            IndexStatus::decl(&cfg),
            folders::FoldersView::decl(&cfg),
            folders::IndexEvent::decl(&cfg),
            models::ModelView::decl(&cfg),
            FetchProgress::decl(&cfg),
            hw::HardwareReport::decl(&cfg),
            hw::CpuInfo::decl(&cfg),
            hw::SimdFeatures::decl(&cfg),
            hw::MemoryInfo::decl(&cfg),
            hw::GpuInfo::decl(&cfg),
            hw::NpuInfo::decl(&cfg),
            hw::PowerSource::decl(&cfg),
            hw::PowerInfo::decl(&cfg),
            hw::BaseInfo::decl(&cfg),
            hw::AppleInfo::decl(&cfg),
            hw::CapabilityTier::decl(&cfg),
            hw::ComputeDevice::decl(&cfg),
            hw::BuildCaps::decl(&cfg),
            hw::ModelFit::decl(&cfg),
            hw::Recommendation::decl(&cfg),
            hardware::Probe::decl(&cfg),
        ];
        let mut out = String::from(
            "// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs); do not edit.\n\
             // TANDEM_WRITE_BINDINGS=1 cargo test -p tandem-app --lib bindings rewrites it.\n\n",
        );
        for d in decls {
            out.push_str("export ");
            out.push_str(&d);
            out.push_str("\n\n");
        }
        out.push_str(&label_names());
        out
    }

    /// What the app calls each scanner label, singular and plural, from the label registry
    /// (`tandem-sensitivity`'s `data/labels.toml`): the page keeps no label list of its own.
    fn label_names() -> String {
        let mut out = String::from(
            "/** Friendly names of the scanner's labels, [one, many], from the label registry. */\n\
             export const LABEL_NAMES: Record<string, [string, string]> = {\n",
        );
        for l in tandem_core::sensitivity::labels::all() {
            out.push_str(&format!(
                "  {}: [{}, {}],\n",
                l.name,
                serde_json::to_string(&l.one).expect("a string serializes"),
                serde_json::to_string(&l.many).expect("a string serializes"),
            ));
        }
        out.push_str("};\n");
        out
    }

    #[test]
    fn bindings_match_the_rust_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/bindings.ts");
        let want = bindings();
        if std::env::var_os("TANDEM_WRITE_BINDINGS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "ui/src/bindings.ts is out of date: run TANDEM_WRITE_BINDINGS=1 cargo test -p tandem-app --lib bindings"
        );
    }
}
