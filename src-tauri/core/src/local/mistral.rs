//! `MistralEngine`: one thread with its own tokio runtime owns the mistral.rs model
//! (loading is long, blocking CPU work and must stay off the host's async workers).
//! Requests arrive over a bounded channel and run one at a time; tokens go back over
//! a per-request channel, and a dropped receiver stops the generation.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use mistralrs::core::{
    AutoDeviceMapParams, DefaultSchedulerMethod, DeviceMapSetting, GGUFLoaderBuilder,
    GGUFSpecificConfig, MistralRsBuilder, SchedulerConfig, TokenSource,
};
use mistralrs::{
    Device, MessageContent, ModelDType, RequestBuilder, RequestLike, RequestMessage, Response,
    TextMessageRole,
};
use tokio::sync::{mpsc, oneshot};

use super::metrics::Timer;
use super::{
    ActivationDType, GenerateRequest, LoadedModel, LocalEngine, LocalError, Role, StreamEvent,
    TokenStream,
};
use crate::events::{Event, EventBus};
use crate::models::gguf;

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub name: String,
    pub path: PathBuf,
    /// `None`: leave candle's thread pool at its default (all logical CPUs).
    pub threads: Option<usize>,
    pub dtype: ActivationDType,
    /// Requests waiting beyond the running one; more are refused with `QueueFull`.
    pub queue: usize,
    /// Run on the CPU even when a GPU backend is compiled in.
    pub force_cpu: bool,
}

impl EngineOptions {
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            path: path.into(),
            threads: None,
            dtype: ActivationDType::Auto,
            queue: 8,
            force_cpu: false,
        }
    }
}

struct Job {
    request: GenerateRequest,
    reply: mpsc::Sender<Result<StreamEvent, LocalError>>,
}

pub struct MistralEngine {
    jobs: mpsc::Sender<Job>,
    queue: usize,
    info: LoadedModel,
}

impl MistralEngine {
    /// Check the file, then load it on the engine thread. Emits load events.
    pub async fn load(opts: EngineOptions, events: EventBus) -> Result<Self, LocalError> {
        let name = opts.name.clone();
        let shown = opts.path.display().to_string();
        let bytes = std::fs::metadata(&opts.path).map(|m| m.len()).unwrap_or(0);
        events.emit(Event::ModelLoadStarted {
            model: name.clone(),
            path: shown.clone(),
            bytes,
        });
        let fail = |e: LocalError, events: &EventBus| {
            use crate::ErrorCode;
            events.emit(Event::ModelLoadFailed {
                model: name.clone(),
                code: e.code().into(),
                message: e.to_string(),
            });
            e
        };

        events.emit(Event::ModelLoadPhase {
            model: name.clone(),
            phase: "checking file".into(),
        });
        let path = opts.path.clone();
        let info = tokio::task::spawn_blocking(move || gguf::inspect(&path))
            .await
            .map_err(|e| LocalError::Load(e.to_string()))
            .and_then(|r| r.map_err(LocalError::from))
            .map_err(|e| fail(e, &events))?;

        if let Some(n) = opts.threads {
            configure_threads(n);
        }
        events.emit(Event::ModelLoadPhase {
            model: name.clone(),
            phase: "loading weights".into(),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>(opts.queue.max(1));
        let thread_opts = opts.clone();
        std::thread::Builder::new()
            .name("tandem-local-engine".into())
            .spawn(move || engine_thread(thread_opts, ready_tx, jobs_rx))
            .map_err(|e| {
                fail(
                    LocalError::Load(format!("cannot start engine thread: {e}")),
                    &events,
                )
            })?;
        let (device, dtype, load_seconds) = ready_rx
            .await
            .map_err(|_| LocalError::Load("engine thread ended while loading".into()))
            .and_then(|r| r)
            .map_err(|e| fail(e, &events))?;
        tracing::info!(model = %name, seconds = load_seconds, %device, %dtype, "local model loaded");
        events.emit(Event::ModelLoaded {
            model: name.clone(),
            seconds: load_seconds,
        });
        let threads = opts
            .threads
            .unwrap_or_else(candle_core::utils::get_num_threads);
        Ok(Self {
            jobs: jobs_tx,
            queue: opts.queue.max(1),
            info: LoadedModel {
                name,
                path: shown,
                architecture: info.architecture,
                device,
                dtype,
                threads,
                load_seconds,
            },
        })
    }
}

impl LocalEngine for MistralEngine {
    fn generate(&self, request: GenerateRequest) -> Result<TokenStream, LocalError> {
        if request.messages.is_empty()
            || request.messages.iter().all(|m| m.content.trim().is_empty())
        {
            return Err(LocalError::BadRequest("the prompt is empty".into()));
        }
        if request.max_tokens == 0 {
            return Err(LocalError::BadRequest(
                "max_tokens must be at least 1".into(),
            ));
        }
        // Small buffer: the engine runs ahead of a slow reader by a few tokens only.
        let (tx, rx) = mpsc::channel(64);
        self.jobs
            .try_send(Job { request, reply: tx })
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => LocalError::QueueFull(self.queue),
                mpsc::error::TrySendError::Closed(_) => LocalError::Stopped,
            })?;
        Ok(TokenStream::new(rx))
    }

    fn model(&self) -> &LoadedModel {
        &self.info
    }
}

/// candle sizes its work split from RAYON_NUM_THREADS and runs on rayon's global
/// pool; both must be set before the first tensor operation of the process.
fn configure_threads(n: usize) {
    let n = n.max(1);
    // Edition 2021: set_var is safe to call; this runs before the engine thread exists.
    std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    if rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .is_err()
    {
        tracing::debug!("rayon pool already initialised; keeping its size");
    }
}

type Ready = Result<(String, String, f64), LocalError>;

fn engine_thread(opts: EngineOptions, ready: oneshot::Sender<Ready>, jobs: mpsc::Receiver<Job>) {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(LocalError::Load(format!(
                "cannot start engine runtime: {e}"
            ))));
            return;
        }
    };
    rt.block_on(async move {
        let started = Instant::now();
        // mistral.rs reports some loader failures by panicking; keep them inside this thread.
        let built = tokio::spawn(build_model(opts.clone())).await;
        let (model, device, dtype) = match built {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => {
                let _ = ready.send(Err(e));
                return;
            }
            Err(join) => {
                let _ = ready.send(Err(LocalError::Load(format!(
                    "the loader crashed: {}",
                    panic_text(join)
                ))));
                return;
            }
        };
        let _ = ready.send(Ok((device, dtype, started.elapsed().as_secs_f64())));
        serve(model, jobs).await;
    });
}

fn panic_text(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into()),
        Err(e) => e.to_string(),
    }
}

async fn build_model(
    opts: EngineOptions,
) -> Result<(mistralrs::Model, String, String), LocalError> {
    let load = |e: anyhow::Error| LocalError::Load(format!("{e:#}"));
    let dir = opts
        .path
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| PathBuf::from("."));
    let file = opts
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .ok_or_else(|| LocalError::Load("model path has no file name".into()))?;
    let device =
        mistralrs::best_device(opts.force_cpu).map_err(|e| LocalError::Load(e.to_string()))?;
    let dtype = match (opts.dtype, &device) {
        (ActivationDType::F32, _) | (ActivationDType::Auto, Device::Cpu) => ModelDType::F32,
        (ActivationDType::F16, _) => ModelDType::F16,
        (ActivationDType::Auto, _) => ModelDType::Auto,
    };
    let device_name = match &device {
        Device::Cpu => "cpu",
        Device::Cuda(_) => "cuda",
        Device::Metal(_) => "metal",
    }
    .to_string();
    let dtype_name = format!("{dtype:?}").to_ascii_lowercase();

    // No model id, no tokenizer id, no chat template path: tokenizer and template come
    // from the GGUF itself and nothing is looked up on a hub.
    let loader = GGUFLoaderBuilder::new(
        None,
        None,
        dir.to_string_lossy().into_owned(),
        vec![file],
        GGUFSpecificConfig { topology: None },
        false,
        None,
    )
    .build();
    let pipeline = loader
        .load_model_from_hf(
            None,
            TokenSource::None,
            &dtype,
            &device,
            true,
            DeviceMapSetting::Auto(AutoDeviceMapParams::default_text()),
            None,
            None,
        )
        .map_err(load)?;
    let scheduler = SchedulerConfig::DefaultScheduler {
        method: DefaultSchedulerMethod::Fixed(NonZeroUsize::new(1).unwrap_or(NonZeroUsize::MIN)),
    };
    // Prefix caching stays off: in mistral.rs 0.8.1 it changes answers. A cached request's
    // tokens include its last generated token, whose key and value were never computed; a
    // follow-up turn that repeats the reply matches it and reads a zero entry (a three-turn
    // conversation with the test model: turn 2's greedy reply differs). Cached entries also
    // share their buffers with the requests that extend them. On the CPU it is never evicted
    // either (bench/RESULTS.md, issue 20, twenty-first session).
    let runner: Arc<mistralrs::MistralRs> = MistralRsBuilder::new(pipeline, scheduler, false, None)
        .with_no_prefix_cache(true)
        .build()
        .await;
    Ok((mistralrs::Model::new(runner), device_name, dtype_name))
}

async fn serve(model: mistralrs::Model, mut jobs: mpsc::Receiver<Job>) {
    while let Some(job) = jobs.recv().await {
        if job.reply.is_closed() {
            continue; // cancelled while queued
        }
        let result = run_one(&model, &job).await;
        if let Err(e) = result {
            let _ = job.reply.send(Err(e)).await;
        }
    }
    tracing::debug!("local engine: all handles dropped, stopping");
}

async fn run_one(model: &mistralrs::Model, job: &Job) -> Result<(), LocalError> {
    let req = &job.request;
    let mut builder = RequestBuilder::new();
    for m in &req.messages {
        // Small local models' chat templates know no tool role: a tool's result reads as a
        // user turn that says what it is, a requested call as the assistant's words.
        let (role, text) = match m.role {
            Role::System => (TextMessageRole::System, m.content.clone()),
            Role::User => (TextMessageRole::User, m.content.clone()),
            Role::Assistant if m.tool_calls.is_empty() => {
                (TextMessageRole::Assistant, m.content.clone())
            }
            Role::Assistant => {
                let calls: Vec<String> = m
                    .tool_calls
                    .iter()
                    .map(|c| format!("{}({})", c.function.name, c.function.arguments))
                    .collect();
                (
                    TextMessageRole::Assistant,
                    format!("{}\n[called {}]", m.content, calls.join(", ")),
                )
            }
            Role::Tool => (TextMessageRole::User, format!("Tool result: {}", m.content)),
        };
        builder = builder.add_message(role, &text);
    }
    // The deterministic preset replaces all sampling params: apply it first.
    builder = match (req.temperature, req.logprobs) {
        // Sampling among the 40 likeliest tokens: without a top-k mistral.rs sorts the whole
        // vocabulary (150k entries for Qwen) at every token.
        (Some(t), None) if t > 0.0 => builder
            .set_sampler_temperature(t)
            .set_sampler_topk(SAMPLE_TOP_K),
        (_, None) => builder.set_deterministic_sampler(),
        // mistral.rs's greedy path reports raw logits as "logprobs"; its sampling path reports
        // softmax probabilities. Greedy with true probabilities: temperature 1 and a nucleus so
        // small that only the likeliest token survives (its probability is kept as it was).
        (_, Some(n)) if n <= 1 => builder
            .set_deterministic_sampler()
            .set_sampler_temperature(1.0)
            .set_sampler_topk(SAMPLE_TOP_K)
            .set_sampler_topp(1e-6)
            .return_logprobs(true)
            .set_sampler_topn_logprobs(1),
        // The alternatives keep their probabilities only among the top k (the rest are zeroed).
        (t, Some(n)) => builder
            .set_deterministic_sampler()
            .set_sampler_temperature(t.filter(|t| *t > 0.0).unwrap_or(1.0))
            .set_sampler_topk(n)
            .return_logprobs(true)
            .set_sampler_topn_logprobs(n),
    };
    builder = builder.set_sampler_max_len(req.max_tokens);
    if !req.stop.is_empty() {
        builder = builder.set_sampler_stop_toks(mistralrs::StopTokens::Seqs(req.stop.clone()));
    }
    if !req.choices.is_empty() {
        let alternatives: Vec<String> = req.choices.iter().map(|c| regex::escape(c)).collect();
        builder = builder.set_constraint(mistralrs::Constraint::Regex(format!(
            "({})",
            alternatives.join("|")
        )));
    }

    let plain = req.plain.then(|| plain_text(req));
    let mut timer = Timer::start();
    let stream = match &plain {
        Some(text) => {
            model
                .stream_chat_request(PlainText {
                    inner: builder,
                    text: text.clone(),
                })
                .await
        }
        None => model.stream_chat_request(builder).await,
    };
    let mut stream = stream.map_err(|e| LocalError::Generation(e.to_string()))?;
    let mut usage = None;
    let mut finish: Option<String> = None;
    let mut logprobs = Vec::new();
    // Text not sent yet because it may be the start of a stop sequence
    // (`GenerateRequest::stop`): sent once the next tokens show it is not.
    let mut pending = String::new();
    loop {
        let next = tokio::select! {
            r = stream.next() => r,
            // The caller dropped its stream: stop reading, which drops mistral.rs's
            // receiver and ends the sequence there.
            _ = job.reply.closed() => return Ok(()),
        };
        let Some(resp) = next else { break };
        // A chat request answers in chat chunks, a plain-text one in completion chunks: both
        // become (text, token log-probability, finish reason) pieces, handled once below.
        let pieces: Vec<(
            String,
            Option<mistralrs::core::ResponseLogprob>,
            Option<String>,
        )> = match resp {
            Response::Chunk(chunk) => {
                if let Some(u) = chunk.usage {
                    usage = Some(u);
                }
                chunk
                    .choices
                    .into_iter()
                    .map(|c| {
                        (
                            c.delta.content.unwrap_or_default(),
                            c.logprobs,
                            c.finish_reason,
                        )
                    })
                    .collect()
            }
            Response::CompletionChunk(chunk) => chunk
                .choices
                .into_iter()
                .map(|c| (c.text, c.logprobs, c.finish_reason))
                .collect(),
            Response::Done(done) => {
                usage = Some(done.usage);
                break;
            }
            Response::CompletionDone(done) => {
                usage = Some(done.usage);
                break;
            }
            Response::CompletionModelError(msg, _) => return Err(LocalError::Generation(msg)),
            Response::InternalError(e) | Response::ValidationError(e) => {
                return Err(LocalError::Generation(e.to_string()));
            }
            Response::ModelError(msg, _) => return Err(LocalError::Generation(msg)),
            _ => {
                return Err(LocalError::Generation(
                    "unexpected response kind from the engine".into(),
                ))
            }
        };
        let mut stopped = false;
        for (mut text, lp, finish_reason) in pieces {
            if let Some(lp) = lp.filter(|_| req.logprobs.is_some()) {
                logprobs.push(token_logprob(lp.token, lp.logprob, lp.top_logprobs));
            }
            if !text.is_empty() {
                timer.piece();
            }
            // Stop sequences are found here, in the text as written: mistral.rs takes a stop
            // string that is one token as a stop *token*, and the model writes it merged with
            // what follows ("```" arrives as "```\n\n"), so its own check never fired and a
            // program ran on to its token limit (measured 2026-12-06: every program did).
            // Where the stop arrives in parts ("``", then "`\n"), the first part is held back.
            if !req.stop.is_empty() {
                pending.push_str(&text);
                text = match stop_at(&pending, &req.stop) {
                    Some(at) => {
                        pending.truncate(at);
                        stopped = true;
                        std::mem::take(&mut pending)
                    }
                    None => {
                        let held =
                            pending.split_off(pending.len() - held_back(&pending, &req.stop));
                        std::mem::replace(&mut pending, held)
                    }
                };
            }
            if !text.is_empty() {
                if job
                    .reply
                    .send(Ok(StreamEvent::Token { text }))
                    .await
                    .is_err()
                {
                    return Ok(());
                }
            }
            if stopped {
                // Returning drops the stream, which ends the sequence in mistral.rs.
                finish = Some("stop".into());
                break;
            }
            if let Some(f) = finish_reason {
                finish = Some(f);
            }
        }
        // The chunk that carries a finish reason is the last of the sequence.
        if finish.is_some() {
            break;
        }
    }
    // What was held back for a stop sequence that never came.
    if !pending.is_empty()
        && job
            .reply
            .send(Ok(StreamEvent::Token { text: pending }))
            .await
            .is_err()
    {
        return Ok(());
    }
    // A text completion's chunks carry no usage: count the prompt's tokens here.
    let prompt_tokens = match (&usage, &plain) {
        (Some(u), _) => Some(u.prompt_tokens),
        (None, Some(text)) => model
            .tokenize(either::Either::Right(text.clone()), None, true, false, None)
            .await
            .ok()
            .map(|t| t.len()),
        (None, None) => None,
    };
    let mut metrics = timer.finish(
        prompt_tokens,
        usage.as_ref().map(|u| u.completion_tokens),
        finish.unwrap_or_else(|| "stop".into()),
    );
    metrics.logprobs = logprobs;
    let _ = job.reply.send(Ok(StreamEvent::Done { metrics })).await;
    Ok(())
}

/// How many of the likeliest tokens temperature sampling draws from.
const SAMPLE_TOP_K: usize = 40;

/// mistral.rs's log10 probabilities as plain probabilities; alternatives with no probability
/// left (zeroed by top-k) are dropped.
fn token_logprob(
    text: String,
    logprob: f32,
    top: Vec<mistralrs::TopLogprob>,
) -> super::TokenLogprob {
    let p = |l: f32| if l.is_finite() { 10f32.powf(l) } else { 0.0 };
    super::TokenLogprob {
        text,
        p: p(logprob),
        top: top
            .into_iter()
            .filter(|t| t.logprob.is_finite())
            .map(|t| (t.bytes.unwrap_or_default(), p(t.logprob)))
            .collect(),
    }
}

/// The text a plain request continues: its messages' contents joined with blank lines.
fn plain_text(req: &GenerateRequest) -> String {
    req.messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A request whose messages are one text to continue as it stands (no chat template);
/// sampling, constraint and log-probabilities are the wrapped builder's.
/// Where the first of `stops` begins in `text`.
fn stop_at(text: &str, stops: &[String]) -> Option<usize> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
}

/// How many bytes at the end of `text` may begin one of `stops` (the longest such ending):
/// those wait for the next token.
fn held_back(text: &str, stops: &[String]) -> usize {
    stops
        .iter()
        .flat_map(|s| (1..s.len()).map(move |k| (s, k)))
        .filter(|&(s, k)| s.is_char_boundary(k) && text.ends_with(&s[..k]))
        .map(|(_, k)| k)
        .max()
        .unwrap_or(0)
}

struct PlainText {
    inner: RequestBuilder,
    text: String,
}

impl RequestLike for PlainText {
    fn messages_ref(&self) -> &[indexmap::IndexMap<String, MessageContent>] {
        RequestLike::messages_ref(&self.inner)
    }
    fn images_ref(&self) -> &[image::DynamicImage] {
        RequestLike::images_ref(&self.inner)
    }
    fn take_messages(&mut self) -> RequestMessage {
        RequestMessage::Completion {
            text: std::mem::take(&mut self.text),
            echo_prompt: false,
            best_of: None,
        }
    }
    fn take_logits_processors(&mut self) -> Option<Vec<Arc<dyn mistralrs::CustomLogitsProcessor>>> {
        RequestLike::take_logits_processors(&mut self.inner)
    }
    fn take_adapters(&mut self) -> Option<Vec<String>> {
        RequestLike::take_adapters(&mut self.inner)
    }
    fn return_logprobs(&self) -> bool {
        RequestLike::return_logprobs(&self.inner)
    }
    fn enable_search(&self) -> Option<bool> {
        RequestLike::enable_search(&self.inner)
    }
    fn take_constraint(&mut self) -> mistralrs::Constraint {
        RequestLike::take_constraint(&mut self.inner)
    }
    fn take_tools(&mut self) -> Option<(Vec<mistralrs::Tool>, mistralrs::ToolChoice)> {
        RequestLike::take_tools(&mut self.inner)
    }
    fn take_sampling_params(&mut self) -> mistralrs::SamplingParams {
        RequestLike::take_sampling_params(&mut self.inner)
    }
    fn take_web_search_options(&mut self) -> Option<mistralrs::WebSearchOptions> {
        RequestLike::take_web_search_options(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::{held_back, stop_at};

    #[test]
    fn a_stop_sequence_is_found_and_its_first_part_held_back() {
        let stops = ["```".to_string(), "\n\nQuestion".to_string()];
        // Arriving merged with what follows, as Qwen writes a closing fence.
        assert_eq!(stop_at("answer = 2\n```\n\n", &stops), Some(11));
        // The earliest of several.
        assert_eq!(stop_at("x = 1\n\nQuestion ```", &stops), Some(5));
        assert_eq!(stop_at("anything", &[String::new()]), None);
        // Arriving in parts: the part that may begin a stop waits; anything else goes.
        assert_eq!(held_back("answer = 2\n``", &stops), 2);
        assert_eq!(held_back("answer = 2\n\nQue", &stops), 5);
        assert_eq!(held_back("answer = 2\n", &stops), 1);
        assert_eq!(held_back("answer = 2", &stops), 0);
        assert_eq!(held_back("é", &["éa".to_string()]), 2);
        assert_eq!(held_back("`", &[]), 0);
    }
}
