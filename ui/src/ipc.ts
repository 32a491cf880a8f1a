// The only file that talks to the Rust backend: every command and event the page uses.
// Types mirror tandem-core's serialized structs (router::Plan, run::Summary, ledger::LedgerEntry,
// conversations::Turn) and the shell's own (Chip, SettingsView); the IPC tests on the Rust side
// check those shapes field by field.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { getCurrentWebviewWindow } from "@tauri-apps/api/webviewWindow";

export type Verdict = "public" | "maskable" | "local_only";
export type RouteName = "local" | "cloud" | "split";
export type Policy = "private" | "balanced" | "performance";

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

export interface LoadedModel {
  name: string;
  path: string;
  architecture: string;
  device: string;
  dtype: string;
  threads: number;
  load_seconds: number;
}

export interface PlanFragment { source: string; start: number; end: number; class: Verdict }
export interface Plan {
  route: RouteName;
  strategy: string | null;
  fragments: PlanFragment[];
  complexity: number;
  reasons: string[];
}

export interface Summary {
  text: string;
  route: RouteName | null;
  agent: string | null;
  cloud_tokens: number;
  local_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  all_cloud_cost_usd: number;
  energy_local_j: number;
  energy_cloud_j: number;
  masked: number;
  withheld: number;
  fell_back: boolean;
}

export type RunEvent =
  | { type: "plan"; plan: Plan }
  | { type: "step"; step: string; place: string }
  | { type: "text"; text: string }
  | { type: "notice"; text: string };

export interface Turn {
  task: string;
  ts_ms: number;
  question: string;
  attachments: string[];
  documents: { name: string; text: string; truncated: boolean }[];
  answer: string;
  plan: Plan | null;
  summary: Summary | null;
  notices: string[];
  error: string | null;
  stopped: boolean;
  elapsed_ms: number;
}

export interface Asked { conversation: string; turn: Turn }
export interface ConversationInfo { id: string; title: string; created_ms: number; updated_ms: number; turns: number }

export interface LedgerEntry {
  id: number;
  ts_ms: number;
  task: string;
  status: "sent" | "failed" | "blocked";
  agent: string;
  provider: string;
  model: string;
  bytes: number;
  sha256: string;
  payload: string | null;
  reasons: string[];
  tokens_in: number | null;
  tokens_out: number | null;
  cost_usd: number | null;
  error: string | null;
}
export interface Totals {
  sent: number; blocked: number; bytes_sent: number; cloud_tokens: number;
  cost_usd: number; local_runs: number; local_tokens: number;
}
export interface LedgerView { entries: LedgerEntry[]; totals: Totals; path: string }

export interface Chip {
  id: string;
  name: string;
  chars: number;
  verdict: Verdict;
  counts: Record<string, number>;
  notes: string[];
}
export type AttachEvent =
  | { state: "reading"; key: string; name: string }
  | { state: "ready"; key: string; chip: Chip }
  | { state: "failed"; key: string; name: string; error: CommandError };

export interface ProviderView {
  name: string; wire: "openai" | "anthropic"; base_url: string; needs_key: boolean;
  key: "env" | "store" | null; agents: string[];
}
export interface GatewayView { running: boolean; port: number | null; new_token: string | null }
export interface SettingsView {
  policy: Policy; cloud_paused: boolean; providers: ProviderView[]; keychain_error: string | null;
  gateway: GatewayView; shortcut: string; menu_bar_only: boolean;
}
export interface Prefs { policy: Policy | null; cloud_paused: boolean; shortcut: string | null; gateway: boolean }

export interface HardwareProbe {
  hardware: { cpu: { brand: string; logical_cores: number; physical_cores: number | null }; memory: { total_bytes: number; available_bytes: number } } & Record<string, unknown>;
  recommendation: { recommended_model: string | null; reasons?: string[] } & Record<string, unknown>;
}

export interface Folder { path: string; sensitive: boolean; include?: string[]; exclude?: string[] }
export interface PassStats { seen: number; indexed: number; unchanged: number; failed: number; removed: number }
export interface IndexStatus {
  files: number; indexed: number; failed: number; queued: number; chunks: number;
  by_verdict: Record<string, number>; failures: [string, string][];
}
export interface FoldersView { folders: Folder[]; status: IndexStatus }
export type IndexEvent =
  | { state: "progress"; stats: PassStats }
  | { state: "done"; stats: PassStats }
  | { state: "failed"; error: CommandError };

export interface ModelView {
  name: string; parameters_b: number; quantization: string; size: number; license: string;
  installed: boolean; fits: boolean; est_decode_tok_s: number | null; reason: string; loaded: boolean; chosen: boolean;
}
export type FetchProgress =
  | { stage: "downloading"; done_bytes: number; total_bytes: number | null }
  | { stage: "verifying" }
  | { stage: "optimizing"; to: string };

/** Errors from commands carry a stable code (see tandem-core's ErrorCode). */
export interface CommandError { code: string; message: string }

export function isCommandError(e: unknown): e is CommandError {
  return typeof e === "object" && e !== null && "code" in e && "message" in e;
}

export function ask(
  args: { conversation: string | null; prompt: string; attachments: string[]; task: string; maxTokens?: number },
  onEvent: (e: RunEvent) => void,
): Promise<Asked> {
  const channel = new Channel<RunEvent>();
  channel.onmessage = onEvent;
  return invoke<Asked>("ask", { ...args, onEvent: channel });
}

export const stop = (task: string) => invoke<boolean>("stop", { task });
export const conversations = () => invoke<ConversationInfo[]>("conversations");
export const conversation = (id: string) => invoke<Turn[]>("conversation", { id });
export const deleteConversation = (id: string) => invoke<boolean>("delete_conversation", { id });
export const whatLeft = (task: string) => invoke<LedgerEntry[]>("what_left", { task });
export const pickFiles = () => invoke<number>("pick_files");
export const detachFile = (id: string) => invoke<boolean>("detach_file", { id });
export const ledger = (limit?: number) => invoke<LedgerView>("ledger", { limit });
export const exportLedger = () => invoke<string | null>("export_ledger");
export const getSettings = () => invoke<SettingsView>("get_settings");
export const setPolicy = (policy: Policy) => invoke<Policy>("set_policy", { policy });
export const setMenuBarOnly = (enabled: boolean) => invoke<boolean>("set_menu_bar_only", { enabled });
export const setCloudPaused = (paused: boolean) => invoke<boolean>("set_cloud_paused", { paused });
export const setKey = (provider: string, key: string) => invoke<void>("set_key", { provider, key });
export const deleteKey = (provider: string) => invoke<boolean>("delete_key", { provider });
export const addProvider = (p: { name: string; wire: string; baseUrl: string; needsKey: boolean; model: string | null; key: string | null }) =>
  invoke<void>("add_provider", p);
export const setGateway = (enabled: boolean, port?: number) => invoke<GatewayView>("set_gateway", { enabled, port });
export const localModelStatus = () => invoke<LoadedModel>("local_model_status");
export const probeHardware = () => invoke<HardwareProbe>("probe_hardware");
export const hideQuick = () => invoke<void>("hide_quick");
export const folders = () => invoke<FoldersView>("folders");
export const addFolder = (sensitive: boolean) => invoke<Folder | null>("add_folder", { sensitive });
export const setFolderSensitive = (path: string, sensitive: boolean) => invoke<Folder>("set_folder_sensitive", { path, sensitive });
export const removeFolder = (path: string) => invoke<boolean>("remove_folder", { path });
export const indexNow = () => invoke<PassStats>("index_now");
export const onIndex = (f: (e: IndexEvent) => void): Promise<UnlistenFn> =>
  listen<IndexEvent>("tandem://index", (e) => f(e.payload));
export const models = () => invoke<ModelView[]>("models");
export const chooseModel = (name: string) => invoke<void>("choose_model", { name });
export function downloadModel(name: string, onProgress: (p: FetchProgress) => void): Promise<unknown> {
  const channel = new Channel<FetchProgress>();
  channel.onmessage = onProgress;
  return invoke("download_model", { name, onProgress: channel });
}
export const uiReady = () => invoke<number>("ui_ready");
export const openMain = (conversation: string | null) => invoke<void>("open_main", { conversation });

/** Files dropped on (or picked in) this window only: the shell sends each window its own. */
export const onAttach = (f: (e: AttachEvent) => void): Promise<UnlistenFn> =>
  getCurrentWebviewWindow().listen<AttachEvent>("tandem://attach", (e) => f(e.payload));
export const onPrefs = (f: (p: Prefs) => void): Promise<UnlistenFn> =>
  listen<Prefs>("tandem://prefs", (e) => f(e.payload));
export const onQuickShown = (f: () => void): Promise<UnlistenFn> => listen("tandem://quick-shown", () => f());
export const onOpenConversation = (f: (id: string) => void): Promise<UnlistenFn> =>
  listen<string>("tandem://open-conversation", (e) => f(e.payload));

/** A task id for a new question (the page needs it to stop the answer). */
export function newTaskId(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return "t-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
