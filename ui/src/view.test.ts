import { describe, expect, it } from "vitest";
import {
  accelerator, chipText, errorText, formatMetrics, formatModel, formatSummary, labelCount, payloadText, pieces,
  placeholderPieces, routeLabel, savings, localShare, networkText,
} from "./view";
import type { LedgerEntry, Summary } from "./ipc";

const summary: Summary = {
  text: "", route: "split", agent: "claude-sonnet", cloud_tokens: 120, local_tokens: 30, prompt_tokens: 100,
  completion_tokens: 50, cost_usd: 0.0012, all_cloud_cost_usd: 0.0034, energy_local_j: 12.5, energy_cloud_j: 240,
  masked: 2, withheld: 0, fell_back: false, answered_by: "cloud", confidence: null, keep: null, escalated: false,
};

describe("view helpers", () => {
  it("formats metrics", () => {
    const s = formatMetrics({
      prompt_tokens: 31, completion_tokens: 64, ttft_ms: 1250, prompt_tok_per_s: 24.8,
      decode_tok_per_s: 29.44, wall_ms: 3400, cpu_ms: 6200, finish_reason: "stop",
    });
    expect(s).toBe("31 prompt + 64 tokens · first token 1.25 s · 29.4 tok/s · CPU 6.2 s");
  });
  it("shows error codes", () => {
    expect(errorText({ code: "models.not_fetched", message: "not downloaded" })).toBe("not downloaded (models.not_fetched)");
    expect(errorText("plain")).toBe("plain");
  });
  it("formats the model", () => {
    expect(formatModel({ name: "m", path: "/p", architecture: "llama", device: "cpu", dtype: "f32", threads: 2, load_seconds: 1 }))
      .toBe("m · CPU · 2 threads");
  });
  it("writes chips like a person would", () => {
    expect(chipText({ id: "1", name: "statement.pdf", chars: 900, verdict: "local_only", counts: { IBAN_CODE: 3 }, notes: [] }))
      .toBe("statement.pdf · 3 IBANs · stays local");
    expect(chipText({ id: "2", name: "note.txt", chars: 9, verdict: "maskable", counts: { EMAIL_ADDRESS: 1 }, notes: [] }))
      .toBe("note.txt · 1 email address · masked before the cloud");
    // Names come from the label registry (generated into bindings.ts); an unknown label still reads.
    expect(labelCount("HEALTH_CONDITION", 2)).toBe("2 health details");
    expect(labelCount("DE_TAX_ID", 1)).toBe("1 tax ID");
    expect(labelCount("MEDICAL_CONDITION", 2)).toBe("2 × medical condition");
  });
  it("summarises an answer: tokens, time, cost, energy", () => {
    expect(formatSummary(summary, 4200)).toBe(
      "30 local + 120 cloud tokens · 4.2 s · cost $0.00120 (all-cloud $0.00340) · ≈ 252.5 J · 2 masked");
    expect(routeLabel("split")).toBe("Split");
    expect(routeLabel("local", "device")).toBe("Your device");
    expect(formatSummary({ ...summary, agent: "your device: desk", cloud_tokens: 0, masked: 0 }, 1000).startsWith("your device: desk · ")).toBe(true);
    expect(savings([{ summary }, { summary: null }]).allCloud).toBeCloseTo(0.0034);
    const local = { ...summary, answered_by: "local", cloud_tokens: 0 };
    const share = savings([{ summary }, { summary: local }, { summary: null }]);
    expect(share.answered).toBe(2);
    expect(localShare(share)).toBe("1 of 2 (50%)");
    expect(localShare({ local: 0, answered: 0 })).toBe("");
    expect(networkText({ state: "offline", probed: true })).toBe("Offline: answering on this device");
    expect(networkText({ state: "degraded", probed: true })).toContain("short tasks stay local");
    expect(networkText({ state: "offline", probed: false })).toBeNull();
    expect(networkText({ state: "online", probed: true })).toBeNull();
  });
  it("cuts the question by the plan's UTF-8 byte offsets", () => {
    const q = "Café bill: IBAN DE89 3704 0044 0532 0130 00. Why?";
    const start = new TextEncoder().encode("Café bill: ").length;
    const end = new TextEncoder().encode("Café bill: IBAN DE89 3704 0044 0532 0130 00.").length;
    const p = pieces(q, [{ source: "prompt", start, end, class: "maskable" }, { source: "bank.txt", start: 0, end: 3, class: "local_only" }]);
    expect(p).toEqual([
      { text: "Café bill: ", cls: "public" },
      { text: "IBAN DE89 3704 0044 0532 0130 00.", cls: "maskable" },
      { text: " Why?", cls: "public" },
    ]);
  });
  it("finds placeholders in what was sent, and shows messages not JSON", () => {
    expect(placeholderPieces("pay [IBAN_1] now").map((p) => p.placeholder)).toEqual([false, true, false]);
    const e = { payload: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi [EMAIL_1]" }] }) } as LedgerEntry;
    expect(payloadText(e)).toBe("user: hi [EMAIL_1]");
    expect(payloadText({ payload: null } as LedgerEntry)).toBe("");
  });
});

describe("indexing texts", async () => {
  const { indexEventText, indexStatusText } = await import("./view");
  it("says what a pass did", () => {
    expect(indexEventText({ state: "done", stats: { seen: 3, indexed: 2, unchanged: 1, failed: 0, removed: 0 } }))
      .toBe("Indexed: 3 files seen · 2 indexed · 1 unchanged · 0 failed · 0 removed");
    expect(indexEventText({ state: "failed", error: { code: "index.db", message: "locked" } })).toBe("Indexing failed: locked (index.db)");
    expect(indexStatusText({ files: 3, indexed: 2, failed: 1, expired: 0, queued: 0, chunks: 4, by_verdict: { local_only: 1, public: 1 }, failures: [] }))
      .toBe("2 of 3 files indexed, 1 failed (1 local only, 1 public)");
    expect(indexStatusText({ files: 3, indexed: 2, failed: 0, expired: 1, queued: 0, chunks: 4, by_verdict: { public: 2 }, failures: [] }))
      .toBe("2 of 3 files indexed, 1 past retention (2 public)");
  });
});

describe("model card texts", async () => {
  const { modelText, progressText } = await import("./view");
  it("says size, speed and fit, and download progress", () => {
    expect(modelText({ name: "m", parameters_b: 1.7, quantization: "Q4_K_M", size: 1073741824, license: "apache-2.0",
      installed: false, fits: true, est_decode_tok_s: 12.4, reason: "", loaded: false, chosen: false }))
      .toBe("1.7 B · Q4_K_M · 1024 MB · ~12 tok/s here · fits");
    expect(progressText("m", { stage: "downloading", done_bytes: 52428800, total_bytes: 104857600 })).toBe("m: 50.0 of 100.0 MB (50%)");
    expect(progressText("m", { stage: "verifying" })).toBe("m: verifying sha256…");
  });
  it("records a pressed shortcut in the shell's accelerator syntax", () => {
    const k = (key: string, code: string, mods: Partial<{ ctrlKey: boolean; altKey: boolean; shiftKey: boolean; metaKey: boolean }>) =>
      accelerator({ key, code, ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...mods });
    expect(k(" ", "Space", { ctrlKey: true, shiftKey: true })).toBe("Ctrl+Shift+Space");
    expect(k("K", "KeyK", { altKey: true, shiftKey: true })).toBe("Alt+Shift+K");
    expect(k("1", "Digit1", { metaKey: true })).toBe("Super+1");
    expect(k("F5", "F5", { ctrlKey: true })).toBe("Ctrl+F5");
    expect(k("Control", "ControlLeft", { ctrlKey: true })).toBeNull();
    expect(k("a", "KeyA", {})).toBeNull();
    expect(k("A", "KeyA", { shiftKey: true })).toBeNull();
  });
});

describe("first run", async () => {
  const { hardwareText, modelOffer, POLICY_TEXT } = await import("./view");
  const probe = (rec: string | null) => ({
    hardware: { os: "linux", arch: "x86_64", cpu: { logical_cores: 8 }, memory: { total_bytes: 16 * 2 ** 30 }, gpus: [], npus: [] },
    recommendation: { recommended_model: rec },
  }) as never;
  const model = (over: object) => ({ name: "qwen", parameters_b: 1.5, quantization: "Q4_K_M", size: 1117320768, license: "apache-2.0",
    installed: false, fits: true, est_decode_tok_s: 9.4, reason: "", loaded: false, chosen: false, ...over });
  it("describes the machine and offers the recommended model", () => {
    expect(hardwareText(probe("qwen"))).toBe("8 CPU threads, 16 GiB memory, no GPU.");
    expect(modelOffer(probe("qwen"), [model({})])).toEqual({
      text: "Recommended local model: qwen (1.5 B parameters, 1066 MB, about 9 tokens a second here).", download: "qwen" });
    expect(modelOffer(probe("qwen"), [model({ installed: true, loaded: true })]).download).toBeNull();
    // Already the one in use while it loads: never "choose it in Settings".
    expect(modelOffer(probe("qwen"), [model({ installed: true, chosen: true })]).text).toMatch(/It is loading\.$/);
    expect(modelOffer(probe("qwen"), [model({ installed: true })]).text).toMatch(/choose it in Settings\.$/);
    expect(modelOffer(probe(null), []).text).toContain("No local model");
    expect(Object.keys(POLICY_TEXT)).toEqual(["private", "balanced", "performance"]);
  });
});

describe("ledger filters", async () => {
  const { filterEntries } = await import("./view");
  const row = (agent: string, status: string, d: number) => ({ agent, status, ts_ms: new Date(2026, 11, d, 10).getTime() }) as never;
  const rows = [row("gpt", "sent", 1), row("claude", "blocked", 2), row("gpt", "failed", 3)];
  it("keeps what matches every filter, dates inclusive", () => {
    const f = (over: object) => filterEntries(rows, { agent: "", status: "", from: "", to: "", ...over }).length;
    expect(f({})).toBe(3);
    expect(f({ agent: "gpt" })).toBe(2);
    expect(f({ status: "blocked" })).toBe(1);
    expect(f({ from: "2026-12-02" })).toBe(2);
    expect(f({ to: "2026-12-02" })).toBe(2);
    expect(f({ from: "2026-12-02", to: "2026-12-02", agent: "claude" })).toBe(1);
  });
});

describe("download progress bars", async () => {
  const { progressFraction, showProgress } = await import("./view");
  it("fills as bytes arrive and is indeterminate while it cannot tell", () => {
    expect(progressFraction({ stage: "downloading", done_bytes: 25, total_bytes: 100 })).toBe(0.25);
    expect(progressFraction({ stage: "downloading", done_bytes: 25, total_bytes: null })).toBeNull();
    expect(progressFraction({ stage: "verifying" })).toBeNull();
    const bar = document.createElement("progress");
    showProgress(bar, { stage: "downloading", done_bytes: 50, total_bytes: 100 });
    expect([bar.hidden, bar.value]).toEqual([false, 0.5]);
    showProgress(bar, { stage: "verifying" });
    expect(bar.hasAttribute("value")).toBe(false);
    showProgress(bar, null);
    expect(bar.hidden).toBe(true);
  });
});

describe("appearance", () => {
  it("keeps light and dark, and reads anything else as the system's choice", async () => {
    const { themeOf } = await import("./view");
    expect(themeOf("dark")).toBe("dark");
    expect(themeOf("light")).toBe("light");
    expect(themeOf(null)).toBe("system");
    expect(themeOf("purple")).toBe("system");
  });
  it("sets data-theme on the root, and removes it for the system's choice", async () => {
    const { applyTheme } = await import("./view");
    const root = { dataset: {} as Record<string, string> } as unknown as HTMLElement;
    applyTheme(root, "dark");
    expect(root.dataset.theme).toBe("dark");
    applyTheme(root, "system");
    expect(root.dataset.theme).toBeUndefined();
  });
});
