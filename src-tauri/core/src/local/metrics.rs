//! Per-request measurements of a local generation, the input of energy and speed
//! accounting. Definitions match llama.cpp's: prompt tok/s = prompt tokens / time to
//! first token; decode tok/s = tokens after the first / time after the first.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The finish reason of a generation that stopped at its token limit (OpenAI's word, which
/// mistral.rs reports too); "stop" is a natural end or a stop sequence.
pub const FINISHED_AT_LENGTH: &str = "length";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, ts_rs::TS)]
pub struct GenerationMetrics {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub ttft_ms: f64,
    pub prompt_tok_per_s: f64,
    pub decode_tok_per_s: f64,
    pub wall_ms: f64,
    /// CPU time of the whole process during the request (all threads).
    pub cpu_ms: Option<f64>,
    pub finish_reason: String,
    /// Each generated token's probability, when the request asked for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(skip)]
    pub logprobs: Vec<TokenLogprob>,
}

/// One generated token, how likely the model found it, and the alternatives it weighed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TokenLogprob {
    pub text: String,
    /// Probability (0..1, not a logarithm).
    pub p: f32,
    /// The most likely tokens at this step with their probabilities, most likely first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(String, f32)>,
}

/// Process CPU time (user + system) so far.
pub(crate) fn process_cpu_ms() -> Option<f64> {
    #[cfg(unix)]
    {
        // SAFETY: getrusage only writes into the struct we pass.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
            return None;
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
        Some(tv(u.ru_utime) + tv(u.ru_stime))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

pub(crate) struct Timer {
    start: Instant,
    cpu_start: Option<f64>,
    first: Option<Instant>,
    last: Option<Instant>,
    pieces: usize,
}

impl Timer {
    pub(crate) fn start() -> Self {
        Self {
            start: Instant::now(),
            cpu_start: process_cpu_ms(),
            first: None,
            last: None,
            pieces: 0,
        }
    }

    pub(crate) fn piece(&mut self) {
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
        self.pieces += 1;
    }

    /// `prompt_tokens`/`completion_tokens` come from the engine's usage report when
    /// it gives one; otherwise the streamed pieces are counted (one per token).
    pub(crate) fn finish(
        &self,
        prompt_tokens: Option<usize>,
        completion_tokens: Option<usize>,
        finish_reason: String,
    ) -> GenerationMetrics {
        let end = Instant::now();
        let completion = completion_tokens.unwrap_or(self.pieces);
        let prompt = prompt_tokens.unwrap_or(0);
        let ttft = self
            .first
            .map(|f| f - self.start)
            .unwrap_or(end - self.start);
        let decode_span = match (self.first, self.last) {
            (Some(f), Some(l)) if l > f => (l - f).as_secs_f64(),
            _ => 0.0,
        };
        GenerationMetrics {
            prompt_tokens: prompt,
            completion_tokens: completion,
            ttft_ms: ttft.as_secs_f64() * 1000.0,
            prompt_tok_per_s: if ttft.as_secs_f64() > 0.0 {
                prompt as f64 / ttft.as_secs_f64()
            } else {
                0.0
            },
            decode_tok_per_s: if decode_span > 0.0 && completion > 1 {
                (completion - 1) as f64 / decode_span
            } else {
                0.0
            },
            wall_ms: (end - self.start).as_secs_f64() * 1000.0,
            cpu_ms: match (self.cpu_start, process_cpu_ms()) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            finish_reason,
            logprobs: Vec::new(),
        }
    }
}
