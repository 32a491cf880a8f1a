// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs); do not edit.
// TANDEM_WRITE_BINDINGS=1 cargo test -p tandem-app --lib bindings rewrites it.

export type Verdict = "public" | "maskable" | "local_only";

export type Route = "local" | "cloud" | "split";

export type Policy = "private" | "balanced" | "performance";

export type Strategy = "mask" | "local_extract" | "cloud_plans" | "device";

export type PlanFragment = { 
/**
 * "prompt", "history", or the attachment's name.
 */
source: string, start: number, end: number, class: Verdict, };

export type Plan = { route: Route, strategy: Strategy | null, fragments: Array<PlanFragment>, 
/**
 * Probability that the task needs a stronger model than the local one (1 - p_local).
 */
complexity: number, reasons: Array<string>, 
/**
 * The local model answers first and keeps its answer when it is worth keeping (its
 * confidence, or for multiple choice its expected success against the cloud's); otherwise
 * the task goes on as planned.
 */
local_attempt?: boolean, 
/**
 * Under `mask`, with a local model of the medium class or above: it first rewrites the
 * request without the person in it (PAPILLON's idea); the rewrite is planned and
 * sanitized like any request, and the cloud's answer is completed on the device with the
 * original details. The masked request this plan drafts is what goes when the rewrite
 * fails a check, so it is the most that leaves.
 */
local_rewrite: boolean, };

export type Summary = { text: string, route: Route | null, agent: string | null, cloud_tokens: number, local_tokens: number, 
/**
 * Tokens read and written by the model(s) that answered (usage for API hosts).
 */
prompt_tokens: number, completion_tokens: number, cost_usd: number, 
/**
 * What sending the whole task to the same agent would have cost.
 */
all_cloud_cost_usd: number, energy_local_j: number, energy_cloud_j: number, masked: number, withheld: number, fell_back: boolean, 
/**
 * Who wrote the answer: "local", "cloud" or "device".
 */
answered_by: string | null, 
/**
 * How sure the local model was of its answer, when its confidence was read.
 */
confidence: number | null, 
/**
 * How far the local answer cleared the bar for keeping it (kept when ≥ 0), when it was
 * judged: its confidence against the shape's threshold, or for multiple choice its
 * expected success against the cloud's (`router/keep.rs`).
 */
keep: number | null, 
/**
 * The local model tried first and was not sure enough: the task went on as planned.
 */
escalated: boolean, };

export type RunEvent = { "type": "plan", plan: Plan, } | { "type": "step", step: string, place: string, } | { "type": "text", text: string, } | { "type": "notice", text: string, };

export type GenerationMetrics = { prompt_tokens: number, completion_tokens: number, ttft_ms: number, prompt_tok_per_s: number, decode_tok_per_s: number, wall_ms: number, 
/**
 * CPU time of the whole process during the request (all threads).
 */
cpu_ms: number | null, finish_reason: string, };

export type LoadedModel = { name: string, path: string, architecture: string, device: string, dtype: string, threads: number, load_seconds: number, };

export type Document = { name: string, text: string, 
/**
 * The text was longer than `DOCUMENT_KEEP` and is cut (at a character boundary).
 */
truncated: boolean, };

export type Turn = { 
/**
 * The orchestrator's task id: the ledger's rows for this answer carry it.
 */
task: string, ts_ms: number, question: string, 
/**
 * Names of the attached files.
 */
attachments: Array<string>, 
/**
 * Their text as the router saw it (the first `DOCUMENT_KEEP` bytes of each), so "what left
 * this device" can show the original beside the payload.
 */
documents: Array<Document>, answer: string, plan: Plan | null, summary: Summary | null, notices: Array<string>, 
/**
 * Stable error code when the answer failed.
 */
error: string | null, 
/**
 * The user pressed stop: `answer` is what had arrived.
 */
stopped: boolean, 
/**
 * From the question to the end of the answer.
 */
elapsed_ms: number, };

export type ConversationInfo = { id: string, title: string, created_ms: number, updated_ms: number, turns: number, };

export type ExportFormat = "markdown" | "json";

export type Asked = { conversation: string, turn: Turn, };

export type LedgerStatus = "sent" | "blocked" | "failed";

export type Destination = "cloud" | "device";

export type LedgerEntry = { id: number, ts_ms: number, task: string, status: LedgerStatus, destination: Destination, agent: string, provider: string, model: string, bytes: number, sha256: string, 
/**
 * The payload exactly as sent; `None` for blocked attempts.
 */
payload: string | null, 
/**
 * sha256 and size of the exact HTTP request body written to the provider's socket (the
 * payload above plus the wire format's own fields); `None` for blocked attempts and rows
 * older than this field.
 */
wire_sha256: string | null, wire_bytes: number | null, reasons: Array<string>, tokens_in: number | null, tokens_out: number | null, cost_usd: number | null, error: string | null, };

export type Totals = { sent: number, blocked: number, bytes_sent: number, cloud_tokens: number, cost_usd: number, local_runs: number, local_tokens: number, 
/**
 * Transmissions to the user's own devices (not in the cloud figures above).
 */
device_sent: number, device_bytes: number, };

export type LedgerView = { entries: Array<LedgerEntry>, totals: Totals, path: string, };

export type CommandError = { code: string, message: string, };

export type Chip = { id: string, name: string, chars: number, verdict: Verdict, 
/**
 * Detected items by label ("IBAN_CODE": 3).
 */
counts: { [key in string]: number }, 
/**
 * Extraction notes (text cut at the cap, unreadable parts).
 */
notes: Array<string>, };

export type AttachEvent = { "state": "reading", key: string, name: string, } | { "state": "ready", key: string, chip: Chip, } | { "state": "failed", key: string, name: string, error: CommandError, };

export type Wire = "openai" | "anthropic";

export type Trust = "cloud" | "device";

export type KeySource = "env" | "store";

export type ProviderView = { name: string, wire: Wire, base_url: string, needs_key: boolean, 
/**
 * Where its key comes from, if it has one; the key itself never leaves the shell.
 */
key: KeySource | null, agents: Array<string>, 
/**
 * A device of the user's (private work may go there, never to the cloud).
 */
trust: Trust, };

export type GatewayView = { running: boolean, port: number | null, 
/**
 * Only right after the token was made: shown once, like `tandem serve` does.
 */
new_token: string | null, };

export type SettingsView = { policy: Policy, cloud_paused: boolean, providers: Array<ProviderView>, 
/**
 * Why keys cannot be stored, when the keychain is unavailable.
 */
keychain_error: string | null, gateway: GatewayView, shortcut: string, menu_bar_only: boolean, 
/**
 * Set when the scanner runs without its names model (missing, unverified or switched off):
 * names and free-form addresses are then found by rules only, and the window says so.
 */
scan_notice: string | null, 
/**
 * The first-run welcome was finished or dismissed.
 */
onboarded: boolean, };

export type Prefs = { 
/**
 * Overrides the config file's policy when set.
 */
policy: Policy | null, cloud_paused: boolean, 
/**
 * The quick-ask shortcut (Tauri's accelerator syntax); None = the default.
 */
shortcut: string | null, 
/**
 * Start the local gateway with the app.
 */
gateway: boolean, 
/**
 * The model chosen in Settings for the next start (`TANDEM_MODEL` still wins).
 */
model: string | null, 
/**
 * macOS: live in the menu bar only (no Dock icon); applied at the next start.
 */
menu_bar_only: boolean, 
/**
 * The first-run welcome was finished or dismissed (Settings can show it again).
 */
onboarded: boolean, };

export type Folder = { path: string, sensitive: boolean, include?: Array<string>, exclude?: Array<string>, };

export type PassStats = { seen: number, indexed: number, unchanged: number, failed: number, removed: number, };

export type IndexStatus = { files: number, indexed: number, failed: number, 
/**
 * Files whose text left the index under the retention (listed, not searchable).
 */
expired: number, queued: number, chunks: number, by_verdict: { [key in string]: number }, failures: Array<[string, string]>, };

export type FoldersView = { folders: Array<Folder>, status: IndexStatus, };

export type IndexEvent = { "state": "progress", stats: PassStats, } | { "state": "done", stats: PassStats, } | { "state": "failed", error: CommandError, };

export type ModelView = { name: string, parameters_b: number, quantization: string, size: number, license: string, installed: boolean, fits: boolean, est_decode_tok_s: number | null, reason: string, 
/**
 * Loaded now.
 */
loaded: boolean, 
/**
 * Chosen (differs from `loaded` while the chosen model loads, or if it failed to).
 */
chosen: boolean, };

export type FetchProgress = { "stage": "downloading", done_bytes: number, total_bytes: number | null, } | { "stage": "verifying" } | { "stage": "optimizing", to: string, };

export type HardwareReport = { os: string, arch: string, cpu: CpuInfo, memory: MemoryInfo, gpus: Array<GpuInfo>, npus: Array<NpuInfo>, power: PowerInfo, };

export type CpuInfo = { brand: string, physical_cores: number, logical_cores: number, 
/**
 * Hybrid CPUs only (Intel P/E, Apple performance/efficiency clusters).
 */
performance_cores: number | null, efficiency_cores: number | null, simd: SimdFeatures, };

export type SimdFeatures = { avx2: boolean, avx512f: boolean, fma: boolean, f16c: boolean, neon: boolean, 
/**
 * Whether this binary was compiled to use AVX2/FMA (see .cargo/config.toml):
 * candle picks its quantized kernels at compile time, so a CPU with AVX2 running
 * a build without it is ~3x slower.
 */
build_uses_avx2: boolean, };

export type MemoryInfo = { total_bytes: number, available_bytes: number, };

export type GpuInfo = { vendor: string, name: string, 
/**
 * Dedicated memory; `None` where the OS does not expose it (integrated GPUs).
 */
vram_bytes: number | null, 
/**
 * Shares system memory with the CPU (Apple Silicon, most integrated GPUs).
 */
unified_memory: boolean, 
/**
 * For unified memory: how much a GPU workload may use (Metal's recommended
 * working set, or an estimate of it).
 */
working_set_bytes: number | null, 
/**
 * `drm` (Linux sysfs), `nvml`, `macos`.
 */
source: string, };

export type NpuInfo = { vendor: string, name: string, driver: string, tops: number | null, 
/**
 * How Tandem uses (or cannot use) it, in words.
 */
usage: string, };

export type PowerSource = "ac" | "battery" | "unknown";

export type PowerInfo = { source: PowerSource, battery_percent: number | null, };

export type BaseInfo = { os: string, arch: string, cpu: CpuInfo, memory: MemoryInfo, 
/**
 * Only on macOS: what sysctl says.
 */
apple: AppleInfo | null, 
/**
 * NVIDIA GPUs as NVML reports them (empty without the driver's library).
 */
nvml_gpus: Array<GpuInfo>, };

export type AppleInfo = { chip: string, apple_silicon: boolean, };

export type CapabilityTier = "tiny" | "small" | "medium" | "large";

export type ComputeDevice = "cpu" | "metal" | "cuda";

export type BuildCaps = { cuda: boolean, metal: boolean, };

export type ModelFit = { name: string, parameters_b: number, tier: CapabilityTier, fits: boolean, required_bytes: number, planned_context: number, 
/**
 * Rough planning estimate, `None` where there is no basis for one.
 */
est_decode_tok_s: number | null, reason: string, };

export type Recommendation = { schema_version: number, device: ComputeDevice, threads: number, memory_budget_bytes: number, 
/**
 * The largest model that fits and decodes at a usable speed.
 */
recommended_model: string | null, 
/**
 * Tier of the recommended model (what this machine can do locally).
 */
tier: CapabilityTier, models: Array<ModelFit>, notes: Array<string>, };

export type HardwareProbe = { hardware: HardwareReport, recommendation: Recommendation, };

/** Friendly names of the scanner's labels, [one, many], from the label registry. */
export const LABEL_NAMES: Record<string, [string, string]> = {
  SECRET: ["secret", "secrets"],
  URL_WITH_CREDENTIALS: ["link with a password", "links with passwords"],
  CREDIT_CARD: ["card number", "card numbers"],
  IBAN_CODE: ["IBAN", "IBANs"],
  ABA_ROUTING_NUMBER: ["routing number", "routing numbers"],
  SWIFT_CODE: ["SWIFT code", "SWIFT codes"],
  BANK_ACCOUNT: ["bank account", "bank accounts"],
  CRYPTO: ["crypto wallet", "crypto wallets"],
  FINANCIAL_SITUATION: ["money matter", "money matters"],
  US_SSN: ["SSN", "SSNs"],
  US_ITIN: ["ITIN", "ITINs"],
  US_PASSPORT: ["passport number", "passport numbers"],
  US_MBI: ["Medicare number", "Medicare numbers"],
  UK_NINO: ["National Insurance number", "National Insurance numbers"],
  UK_NHS: ["NHS number", "NHS numbers"],
  UK_PASSPORT: ["passport number", "passport numbers"],
  UK_DRIVING_LICENCE: ["driving licence", "driving licences"],
  DE_TAX_ID: ["tax ID", "tax IDs"],
  DE_TAX_NUMBER: ["tax number", "tax numbers"],
  DE_PASSPORT: ["passport number", "passport numbers"],
  DE_SOCIAL_SECURITY: ["social security number", "social security numbers"],
  DE_HEALTH_INSURANCE: ["health insurance number", "health insurance numbers"],
  ES_NIF: ["NIF", "NIFs"],
  ES_NIE: ["NIE", "NIEs"],
  IT_FISCAL_CODE: ["fiscal code", "fiscal codes"],
  FI_PERSONAL_IDENTITY_CODE: ["personal identity code", "personal identity codes"],
  SE_PERSONNUMMER: ["personnummer", "personnummer"],
  PL_PESEL: ["PESEL", "PESELs"],
  TR_NATIONAL_ID: ["national ID", "national IDs"],
  IN_AADHAAR: ["Aadhaar number", "Aadhaar numbers"],
  IN_PAN: ["PAN", "PANs"],
  IN_VOTER: ["voter ID", "voter IDs"],
  KR_RRN: ["resident registration number", "resident registration numbers"],
  KR_FRN: ["foreigner registration number", "foreigner registration numbers"],
  KR_DRIVER_LICENSE: ["driver's license", "driver's licenses"],
  KR_PASSPORT: ["passport number", "passport numbers"],
  SG_NRIC_FIN: ["NRIC/FIN", "NRIC/FINs"],
  TH_TNIN: ["national ID", "national IDs"],
  PH_TIN: ["TIN", "TINs"],
  ZA_ID_NUMBER: ["ID number", "ID numbers"],
  AU_TFN: ["tax file number", "tax file numbers"],
  AU_MEDICARE: ["Medicare number", "Medicare numbers"],
  CA_SIN: ["SIN", "SINs"],
  DRIVER_LICENSE: ["driver's license", "driver's licenses"],
  DRIVERS_LICENSE: ["driver's license", "driver's licenses"],
  PASSPORT: ["passport number", "passport numbers"],
  ES_PASSPORT: ["passport number", "passport numbers"],
  IN_PASSPORT: ["passport number", "passport numbers"],
  IT_DRIVER_LICENSE: ["driver's license", "driver's licenses"],
  TAX_ID: ["tax ID", "tax IDs"],
  GOVERNMENT_ID: ["ID number", "ID numbers"],
  US_NPI: ["NPI", "NPIs"],
  DE_LANR: ["doctor number", "doctor numbers"],
  MEDICAL_LICENSE: ["medical licence", "medical licences"],
  HEALTH_CONDITION: ["health detail", "health details"],
  MEDICATION: ["medication", "medications"],
  EMAIL_ADDRESS: ["email address", "email addresses"],
  PHONE_NUMBER: ["phone number", "phone numbers"],
  STREET_ADDRESS: ["address", "addresses"],
  IP_ADDRESS: ["IP address", "IP addresses"],
  MAC_ADDRESS: ["MAC address", "MAC addresses"],
  PERSON: ["name", "names"],
  AGE: ["age", "ages"],
  DATE_OF_BIRTH: ["date of birth", "dates of birth"],
  DATE_TIME: ["date", "dates"],
  TITLE: ["title", "titles"],
  NRP: ["nationality or religion", "nationalities or religions"],
  ZIP_CODE: ["postcode", "postcodes"],
  DE_PLZ: ["postcode", "postcodes"],
  UK_POSTCODE: ["postcode", "postcodes"],
  TR_LICENSE_PLATE: ["number plate", "number plates"],
  DE_KFZ: ["number plate", "number plates"],
  UK_VEHICLE_REGISTRATION: ["number plate", "number plates"],
  IN_VEHICLE_REGISTRATION: ["number plate", "number plates"],
  NG_VEHICLE_REGISTRATION: ["number plate", "number plates"],
  LEGAL_MATTER: ["legal matter", "legal matters"],
  EDUCATION_RECORD: ["education record", "education records"],
  PRIVATE_LIFE: ["private life detail", "private life details"],
  BUSINESS_CONFIDENTIAL: ["business confidential detail", "business confidential details"],
  CUSTOM: ["term of yours", "terms of yours"],
  CUSTOM_PRIVATE: ["private term of yours", "private terms of yours"],
  AU_ABN: ["business number", "business numbers"],
  AU_ACN: ["company number", "company numbers"],
  SE_ORGANISATIONSNUMMER: ["company number", "company numbers"],
  LOCATION: ["place", "places"],
  URL: ["link", "links"],
};
