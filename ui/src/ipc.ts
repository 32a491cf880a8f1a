// The only file that talks to the Rust backend. Types mirror tandem-core's
// serialized structs (local::StreamEvent, GenerationMetrics, LoadedModel).
import { Channel, invoke } from "@tauri-apps/api/core";

export interface GenerationMetrics {
  prompt_tokens: number;
  completion_tokens: number;
  ttft_ms: number;
  prompt_tok_per_s: number;
  decode_tok_per_s: number;
  wall_ms: number;
  cpu_ms: number | null;
  finish_reason: string;
}

export type StreamEvent =
  | { type: "token"; text: string }
  | { type: "done"; metrics: GenerationMetrics };

export interface Answer {
  text: string;
  model: string;
  metrics: GenerationMetrics;
}

export interface LoadedModel {
  name: string;
  path: string;
  architecture: string;
  device: string;
  dtype: string;
  threads: number;
  load_seconds: number;
}

/** Errors from commands carry a stable code (see tandem-core's ErrorCode). */
export interface CommandError {
  code: string;
  message: string;
}

export function isCommandError(e: unknown): e is CommandError {
  return typeof e === "object" && e !== null && "code" in e && "message" in e;
}

export async function askLocal(prompt: string, onEvent: (e: StreamEvent) => void, maxTokens?: number): Promise<Answer> {
  const channel = new Channel<StreamEvent>();
  channel.onmessage = onEvent;
  return invoke<Answer>("ask_local", { prompt, maxTokens, onEvent: channel });
}

export async function localModelStatus(): Promise<LoadedModel> {
  return invoke<LoadedModel>("local_model_status");
}
