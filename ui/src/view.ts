// Rendering helpers kept free of IPC so they can be tested in jsdom.
import type { GenerationMetrics, LoadedModel } from "./ipc";

export function formatMetrics(m: GenerationMetrics): string {
  const parts = [
    `${m.prompt_tokens} prompt + ${m.completion_tokens} tokens`,
    `first token ${(m.ttft_ms / 1000).toFixed(2)} s`,
    `${m.decode_tok_per_s.toFixed(1)} tok/s`,
  ];
  if (m.cpu_ms !== null) parts.push(`CPU ${(m.cpu_ms / 1000).toFixed(1)} s`);
  return parts.join(" · ");
}

export function formatModel(m: LoadedModel): string {
  return `${m.name} · ${m.device.toUpperCase()} · ${m.threads} threads`;
}

export function errorText(e: unknown): string {
  if (typeof e === "object" && e !== null && "message" in e) {
    const code = "code" in e ? ` (${String((e as { code: unknown }).code)})` : "";
    return `${String((e as { message: unknown }).message)}${code}`;
  }
  return String(e);
}
