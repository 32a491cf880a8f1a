// Rendering helpers kept free of IPC so they can be tested in jsdom. Everything user- or
// model-written is put in the DOM as text, never as HTML.
import type { FetchProgress, HardwareProbe, IndexEvent, IndexStatus, ModelView, PassStats, Policy } from "./ipc";
import type { Chip, GenerationMetrics, LedgerEntry, LoadedModel, Plan, PlanFragment, Summary, Totals, Turn, Verdict } from "./ipc";
import { LABEL_NAMES } from "./bindings";

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

export function routeLabel(route: string | null | undefined, strategy?: string | null): string {
  // Private work one of the user's own servers answered (`--trust device`).
  if (strategy === "device") return "Your device";
  switch (route) {
    case "local": return "Local";
    case "cloud": return "Cloud";
    case "split": return "Split";
    default: return "…";
  }
}

const usd = (x: number) => (x < 0.01 && x > 0 ? `$${x.toFixed(5)}` : `$${x.toFixed(2)}`);
const joules = (j: number) => (j >= 1000 ? `${(j / 1000).toFixed(1)} kJ` : `${j.toFixed(1)} J`);

/** Tokens, time, cost and energy of one answer. */
export function formatSummary(s: Summary, elapsedMs: number): string {
  const parts = [`${s.local_tokens} local + ${s.cloud_tokens} cloud tokens`, `${(elapsedMs / 1000).toFixed(1)} s`];
  // Private work a device of the user's answered says so first ("your device: NAME").
  if (s.agent?.startsWith("your device:")) parts.unshift(s.agent);
  parts.push(`cost ${usd(s.cost_usd)}${s.all_cloud_cost_usd > 0 ? ` (all-cloud ${usd(s.all_cloud_cost_usd)})` : ""}`);
  parts.push(`≈ ${joules(s.energy_local_j + s.energy_cloud_j)}`);
  // Self-knowledge: the local model's confidence, and whether it kept or passed the task on.
  if (s.confidence !== null && s.confidence !== undefined) {
    parts.unshift(s.escalated ? `escalated: local confidence ${s.confidence.toFixed(2)}` : `local confidence ${s.confidence.toFixed(2)}`);
  }
  if (s.masked) parts.push(`${s.masked} masked`);
  if (s.withheld) parts.push(`${s.withheld} withheld`);
  return parts.join(" · ");
}

export function labelCount(label: string, n: number): string {
  const known = LABEL_NAMES[label];
  if (known) return `${n} ${n === 1 ? known[0] : known[1]}`;
  const words = label.toLowerCase().replace(/_/g, " ");
  return `${n} × ${words}`;
}

export function verdictText(v: Verdict): string {
  switch (v) {
    case "local_only": return "stays local";
    case "maskable": return "masked before the cloud";
    default: return "nothing sensitive found";
  }
}

/** "statement.pdf · 3 IBANs · stays local" */
export function chipText(c: Chip): string {
  const counts = Object.entries(c.counts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([l, n]) => labelCount(l, n));
  return [c.name, ...counts, verdictText(c.verdict)].join(" · ");
}

export interface Piece { text: string; cls: Verdict }

/** Cuts `text` into pieces by the plan's fragments of `source` (byte offsets from Rust are
 *  UTF-8; they are converted so non-ASCII text highlights the right characters). */
export function pieces(text: string, fragments: PlanFragment[], source = "prompt"): Piece[] {
  const bytes = new TextEncoder().encode(text);
  const dec = new TextDecoder();
  const frs = fragments.filter((f) => f.source === source).sort((a, b) => a.start - b.start);
  const out: Piece[] = [];
  let at = 0;
  for (const f of frs) {
    if (f.start < at || f.end > bytes.length) continue;
    if (f.start > at) out.push({ text: dec.decode(bytes.slice(at, f.start)), cls: "public" });
    out.push({ text: dec.decode(bytes.slice(f.start, f.end)), cls: f.class });
    at = f.end;
  }
  if (at < bytes.length) out.push({ text: dec.decode(bytes.slice(at)), cls: "public" });
  return out.filter((p) => p.text.length > 0);
}

/** A payload split around placeholders such as [IBAN_1], so they can be highlighted. */
export function placeholderPieces(payload: string): { text: string; placeholder: boolean }[] {
  const out: { text: string; placeholder: boolean }[] = [];
  const re = /\[[A-Z][A-Z_]*_\d+\]/g;
  let at = 0;
  for (const m of payload.matchAll(re)) {
    const i = m.index ?? 0;
    if (i > at) out.push({ text: payload.slice(at, i), placeholder: false });
    out.push({ text: m[0], placeholder: true });
    at = i + m[0].length;
  }
  if (at < payload.length) out.push({ text: payload.slice(at), placeholder: false });
  return out;
}

/** The user-facing text of a logged payload: the messages' contents, not the JSON envelope. */
export function payloadText(e: LedgerEntry): string {
  if (!e.payload) return "";
  try {
    const v = JSON.parse(e.payload) as { messages?: { role: string; content: unknown }[]; system?: unknown };
    const msgs = v.messages ?? [];
    const sys = typeof v.system === "string" ? [`system: ${v.system}`] : [];
    return [...sys, ...msgs.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`)].join("\n\n");
  } catch {
    return e.payload;
  }
}

export function planReasons(p: Plan | null): string[] {
  return p ? p.reasons : [];
}

export function turnStatus(t: Turn): string {
  if (t.error) return `failed (${t.error})`;
  if (t.stopped) return "stopped";
  return "";
}

export function formatTotals(t: Totals): string {
  const devices = t.device_sent ? ` · ${t.device_sent} to your devices (${t.device_bytes} bytes)` : "";
  return `${t.sent} sent · ${t.blocked} blocked · ${t.bytes_sent} bytes · ${t.cloud_tokens} cloud tokens · ${usd(t.cost_usd)} · ${t.local_runs} local runs (${t.local_tokens} tokens)${devices}`;
}

/** Saving of the routed answers against sending each whole task to the cloud. */
export function savings(turns: { summary: Summary | null }[]): { cost: number; allCloud: number; energyJ: number; local: number; answered: number } {
  let cost = 0, allCloud = 0, energyJ = 0, local = 0, answered = 0;
  for (const t of turns) {
    if (!t.summary) continue;
    cost += t.summary.cost_usd;
    allCloud += t.summary.all_cloud_cost_usd;
    energyJ += t.summary.energy_local_j + t.summary.energy_cloud_j;
    answered += 1;
    // Answers written on the user's own hardware (this machine or a device of theirs).
    if (t.summary.answered_by !== "cloud" && t.summary.cloud_tokens === 0) local += 1;
  }
  return { cost, allCloud, energyJ, local, answered };
}

/** "7 of 10 (70%) answered on your hardware", "" before any answer. */
export function localShare(s: { local: number; answered: number }): string {
  if (!s.answered) return "";
  return `${s.local} of ${s.answered} (${Math.round((100 * s.local) / s.answered)}%)`;
}

/** The network as the router sees it, for the header; null when there is nothing to say. */
export function networkText(s: { state: "online" | "degraded" | "offline"; probed: boolean }): string | null {
  if (!s.probed || s.state === "online") return null;
  return s.state === "offline" ? "Offline: answering on this device" : "Slow network: short tasks stay local";
}

export function passText(p: PassStats): string {
  return `${p.seen} files seen · ${p.indexed} indexed · ${p.unchanged} unchanged · ${p.failed} failed · ${p.removed} removed`;
}

export function indexEventText(e: IndexEvent): string {
  if (e.state === "progress") return `Indexing… ${passText(e.stats)}`;
  if (e.state === "done") return `Indexed: ${passText(e.stats)}`;
  return `Indexing failed: ${errorText(e.error)}`;
}

export function indexStatusText(s: IndexStatus): string {
  const v = Object.entries(s.by_verdict).map(([k, n]) => `${n} ${k.replace("_", " ")}`).join(", ");
  return `${s.indexed} of ${s.files} files indexed${s.queued ? `, ${s.queued} queued` : ""}${s.failed ? `, ${s.failed} failed` : ""}${s.expired ? `, ${s.expired} past retention` : ""}${v ? ` (${v})` : ""}`;
}

export function progressText(name: string, p: FetchProgress): string {
  if (p.stage === "downloading") {
    const mb = (b: number) => (b / 2 ** 20).toFixed(1);
    const pct = p.total_bytes ? ` (${Math.floor((100 * p.done_bytes) / p.total_bytes)}%)` : "";
    return `${name}: ${mb(p.done_bytes)}${p.total_bytes ? ` of ${mb(p.total_bytes)}` : ""} MB${pct}`;
  }
  if (p.stage === "verifying") return `${name}: verifying sha256…`;
  return `${name}: optimizing to ${p.to}…`;
}

/** How far a download is, 0..1, for a progress bar; `null` while it cannot tell (no size yet,
 *  or verifying), which shows an indeterminate bar. */
export function progressFraction(p: FetchProgress): number | null {
  if (p.stage === "downloading" && p.total_bytes) return Math.min(1, p.done_bytes / p.total_bytes);
  return null;
}

/** Shows `p` on a <progress> element (visible while the download runs). */
export function showProgress(bar: HTMLProgressElement, p: FetchProgress | null): void {
  bar.hidden = p === null;
  if (p === null) return;
  const f = progressFraction(p);
  if (f === null) bar.removeAttribute("value");
  else bar.value = f;
}

export function modelText(m: ModelView): string {
  const speed = m.est_decode_tok_s ? ` · ~${m.est_decode_tok_s.toFixed(0)} tok/s here` : "";
  return `${m.parameters_b} B · ${m.quantization} · ${(m.size / 2 ** 20).toFixed(0)} MB${speed} · ${m.fits ? "fits" : "does not fit"}`;
}

/** The accelerator (Tauri's syntax) for a key pressed with Ctrl, Alt or Super held, e.g.
 *  "Ctrl+Shift+K"; null while only modifiers are down or without one of those three (then the
 *  key is plain typing in the field). */
export function accelerator(e: { key: string; code: string; ctrlKey: boolean; altKey: boolean; shiftKey: boolean; metaKey: boolean }): string | null {
  if (!(e.ctrlKey || e.altKey || e.metaKey)) return null;
  if (["Control", "Alt", "Shift", "Meta", "OS", "AltGraph"].includes(e.key)) return null;
  const key = e.code.startsWith("Key") ? e.code.slice(3)
    : e.code.startsWith("Digit") ? e.code.slice(5)
    : e.code === "" ? e.key.toUpperCase() : e.code;
  const mods = [e.ctrlKey && "Ctrl", e.altKey && "Alt", e.shiftKey && "Shift", e.metaKey && "Super"].filter(Boolean);
  return [...mods, key].join("+");
}

/** The policy modes in one sentence each (first run and Settings). */
export const POLICY_TEXT: Record<Policy, string> = {
  private: "Private: only text with nothing sensitive in it may leave; everything else is answered on this device.",
  balanced: "Balanced (recommended): identifiers are masked, private passages and files from sensitive folders stay here, hard tasks get the cloud's help.",
  performance: "Performance: the cloud is used more often for quality; identifiers are still masked and private passages still stay here.",
};

/** One line about this machine for the first-run card. */
export function hardwareText(h: HardwareProbe): string {
  const hw = h.hardware;
  const gpu = hw.gpus.length ? `, ${hw.gpus.map((g) => g.name).join(", ")}` : ", no GPU";
  return `${hw.cpu.logical_cores} CPU threads, ${(hw.memory.total_bytes / 2 ** 30).toFixed(0)} GiB memory${gpu}.`;
}

/** What the first-run card says about the recommended model, and whether to offer a download. */
export function modelOffer(h: HardwareProbe, models: ModelView[]): { text: string; download: string | null } {
  const name = h.recommendation.recommended_model;
  const m = models.find((x) => x.name === name);
  if (!name || !m) return { text: "No local model in the catalogue fits this machine: questions go to a cloud model (masked) or wait for one.", download: null };
  const speed = m.est_decode_tok_s ? `, about ${Math.round(m.est_decode_tok_s)} tokens a second here` : "";
  const what = `Recommended local model: ${m.name} (${m.parameters_b} B parameters, ${(m.size / 2 ** 20).toFixed(0)} MB${speed}).`;
  if (m.loaded) return { text: `${what} It is loaded.`, download: null };
  // Chosen (or, with no choice made, used because it is recommended and here) but still loading.
  if (m.installed && m.chosen) return { text: `${what} It is loading.`, download: null };
  if (m.installed) return { text: `${what} It is downloaded; choose it in Settings.`, download: null };
  return { text: what, download: m.name };
}

/** What the ledger is filtered by (empty: everything). Dates are YYYY-MM-DD, local time, inclusive. */
export type LedgerFilter = { agent: string; status: string; from: string; to: string };

/** The entries that pass `f`. */
export function filterEntries(entries: LedgerEntry[], f: LedgerFilter): LedgerEntry[] {
  const start = f.from ? new Date(`${f.from}T00:00:00`).getTime() : -Infinity;
  const end = f.to ? new Date(`${f.to}T00:00:00`).getTime() + 86_400_000 : Infinity;
  return entries.filter((e) =>
    (!f.agent || e.agent === f.agent) && (!f.status || e.status === f.status) && e.ts_ms >= start && e.ts_ms < end);
}

export type Theme = "system" | "light" | "dark";
export const THEME_KEY = "tandem.theme";

/** The stored appearance, or "system" for anything unknown (a stale or hand-edited value). */
export function themeOf(stored: string | null): Theme {
  return stored === "light" || stored === "dark" ? stored : "system";
}

/** Sets the page's theme: "system" leaves it to prefers-color-scheme (style.css). */
export function applyTheme(root: HTMLElement, theme: Theme): void {
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}
