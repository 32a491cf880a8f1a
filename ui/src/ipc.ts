// The only file that talks to the Rust backend: every command and event the page uses.
// Payload types come from src/bindings.ts, generated from the Rust types (ts-rs).
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { getCurrentWebviewWindow } from "@tauri-apps/api/webviewWindow";

// Payload types are generated from the Rust types (src/bindings.ts, ts-rs; a Rust test fails
// when they drift). Re-exported here so the rest of the page imports from one module.
import type {
  Asked, AttachEvent, CommandError, ConversationInfo, ExportFormat, FetchProgress, Folder, FoldersView, GatewayView,
  HardwareProbe, IndexEvent, LedgerEntry, LedgerView, LoadedModel, ModelView, PassStats, Policy, Prefs,
  Route, RunEvent, SettingsView, Turn,
} from "./bindings";
export type {
  Asked, AttachEvent, Chip, CommandError, ConversationInfo, Document, Folder, FoldersView, FetchProgress,
  GatewayView, GenerationMetrics, HardwareProbe, IndexEvent, IndexStatus, LedgerEntry, LedgerStatus,
  LedgerView, LoadedModel, ModelView, PassStats, Plan, PlanFragment, Policy, Prefs, ProviderView,
  RunEvent, SettingsView, Strategy, Summary, Totals, Turn, Verdict,
} from "./bindings";
export type RouteName = Route;

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
export const renameConversation = (id: string, title: string) => invoke<null>("rename_conversation", { id, title });
export const searchConversations = (query: string) => invoke<ConversationInfo[]>("search_conversations", { query });
export const exportConversation = (id: string, format: ExportFormat) =>
  invoke<string | null>("export_conversation", { id, format });
export const whatLeft = (task: string) => invoke<LedgerEntry[]>("what_left", { task });
export const pickFiles = () => invoke<number>("pick_files");
/** Attaches the welcome's sample statement; its chip arrives as a `tandem://attach` event. */
export const attachSample = () => invoke<void>("attach_sample");
export const detachFile = (id: string) => invoke<boolean>("detach_file", { id });
export const ledger = (limit?: number) => invoke<LedgerView>("ledger", { limit });
export const exportLedger = () => invoke<string | null>("export_ledger");
export const getSettings = () => invoke<SettingsView>("get_settings");
export const setPolicy = (policy: Policy) => invoke<Policy>("set_policy", { policy });
export const setOnboarded = (done: boolean) => invoke<boolean>("set_onboarded", { done });
export const setMenuBarOnly = (enabled: boolean) => invoke<boolean>("set_menu_bar_only", { enabled });
export const setCloudPaused = (paused: boolean) => invoke<boolean>("set_cloud_paused", { paused });
export const setShortcut = (shortcut: string) => invoke<string>("set_shortcut", { shortcut });
export const setKey = (provider: string, key: string) => invoke<void>("set_key", { provider, key });
export const deleteKey = (provider: string) => invoke<boolean>("delete_key", { provider });
export const addProvider = (p: { name: string; wire: string; baseUrl: string; needsKey: boolean; model: string | null; key: string | null; trust: "cloud" | "device" }) =>
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
/** The cloud providers' reachability, as the core's network monitor reports it (the shell
 * forwards the core's events; written here by hand: the core's `Event` has no generated type). */
export interface NetworkStatus { state: "online" | "degraded" | "offline"; probed: boolean }
export const onNetwork = (f: (s: NetworkStatus) => void): Promise<UnlistenFn> =>
  listen<{ type: string; status?: NetworkStatus }>("tandem://event", (e) => {
    if (e.payload.type === "network" && e.payload.status) f(e.payload.status);
  });
export const onQuickShown = (f: () => void): Promise<UnlistenFn> => listen("tandem://quick-shown", () => f());
export const onOpenConversation = (f: (id: string) => void): Promise<UnlistenFn> =>
  listen<string>("tandem://open-conversation", (e) => f(e.payload));

/** A task id for a new question (the page needs it to stop the answer). */
export function newTaskId(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return "t-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
