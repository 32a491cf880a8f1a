//! A local engine that answers with the text it was given (the last user turn), word by word.
//! The worst local model for privacy, on purpose: leak tests run the orchestrator with it, so
//! anything private the local step "writes" must still be caught by the sanitizer before it
//! could leave. Also useful where a model cannot be loaded (tests of hosts).

use super::{
    ChatMessage, GenerateRequest, GenerationMetrics, LoadedModel, LocalEngine, LocalError, Role,
    StreamEvent, TokenLogprob, TokenStream,
};

pub struct EchoEngine {
    model: LoadedModel,
    /// The probability it reports for each token it writes (when asked for probabilities).
    sure: f32,
}

impl EchoEngine {
    /// An echo engine that reports probability `p` for every token it writes; held to choices,
    /// it answers the first with `p` and splits the rest between the others.
    pub fn sure(p: f32) -> Self {
        Self {
            sure: p,
            ..Self::default()
        }
    }
}

impl Default for EchoEngine {
    fn default() -> Self {
        Self {
            model: LoadedModel {
                name: "echo".into(),
                path: String::new(),
                architecture: "echo".into(),
                device: "cpu".into(),
                dtype: "none".into(),
                threads: 1,
                load_seconds: 0.0,
            },
            sure: 1.0,
        }
    }
}

impl LocalEngine for EchoEngine {
    fn generate(&self, request: GenerateRequest) -> Result<TokenStream, LocalError> {
        let text = request
            .messages
            .iter()
            .rev()
            .find(|m: &&ChatMessage| m.role == Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        // A stop sequence ends the answer before it, as with a real engine.
        let stop = request
            .stop
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| text.find(s.as_str()))
            .min();
        let said = &text[..stop.unwrap_or(text.len())];
        let words: Vec<String> = match request.choices.first() {
            Some(c) => vec![c.clone()],
            None => said.split_inclusive(' ').map(String::from).collect(),
        };
        let total = words.len();
        let n = total.min(request.max_tokens.max(1));
        let (tx, rx) = tokio::sync::mpsc::channel(n + 1);
        let rest = (1.0 - self.sure) / (request.choices.len().max(2) - 1) as f32;
        let logprobs = match request.logprobs {
            None => Vec::new(),
            Some(_) => words
                .iter()
                .take(n)
                .map(|w| TokenLogprob {
                    text: w.clone(),
                    p: self.sure,
                    top: std::iter::once((w.clone(), self.sure))
                        .chain(request.choices.iter().skip(1).map(|c| (c.clone(), rest)))
                        .collect(),
                })
                .collect(),
        };
        for w in words.into_iter().take(n) {
            let _ = tx.try_send(Ok(StreamEvent::Token { text: w }));
        }
        let metrics = GenerationMetrics {
            prompt_tokens: text.split_whitespace().count(),
            completion_tokens: n,
            ttft_ms: 0.0,
            prompt_tok_per_s: 0.0,
            decode_tok_per_s: 0.0,
            wall_ms: 0.0,
            cpu_ms: None,
            // Honest about the limit, as a real engine is: cut short, it says so.
            finish_reason: if n < total {
                super::FINISHED_AT_LENGTH
            } else {
                "stop"
            }
            .into(),
            logprobs,
        };
        let _ = tx.try_send(Ok(StreamEvent::Done { metrics }));
        Ok(TokenStream::new(rx))
    }

    fn model(&self) -> &LoadedModel {
        &self.model
    }
}
