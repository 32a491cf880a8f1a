// Wires the page to the backend (through ipc.ts only). Two faces share this bundle: the main
// window (index.html) and the quick-ask window (quick.html, body data-window="quick").
import * as ipc from "./ipc";
import { installCopyButtons, markdownInto } from "./markdown";
import type { AttachEvent, Chip, LedgerEntry, Plan, PlanFragment, RunEvent, Turn } from "./ipc";
import {
  accelerator, chipText, errorText, filterEntries, showProgress, formatModel, hardwareText, modelOffer, POLICY_TEXT, indexEventText, indexStatusText, modelText, progressText, formatSummary, formatTotals, payloadText, pieces,
  placeholderPieces, routeLabel, savings, localShare, networkText, turnStatus, applyTheme, themeOf, THEME_KEY,
} from "./view";

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;
const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

/** Chips waiting for the next question, and their rendering into `box`. */
class ChipTray {
  chips = new Map<string, { chip?: Chip; name: string; error?: string }>();
  constructor(private box: HTMLElement) {}
  on(e: AttachEvent) {
    if (e.state === "reading") this.chips.set(e.key, { name: e.name });
    if (e.state === "ready") this.chips.set(e.key, { name: e.chip.name, chip: e.chip });
    if (e.state === "failed") this.chips.set(e.key, { name: e.name, error: errorText(e.error) });
    this.render();
  }
  ids(): string[] {
    return [...this.chips.values()].flatMap((c) => (c.chip ? [c.chip.id] : []));
  }
  names(): string[] {
    return [...this.chips.values()].flatMap((c) => (c.chip ? [c.chip.name] : []));
  }
  clear() {
    for (const [k, c] of this.chips) if (c.chip || c.error) this.chips.delete(k);
    this.render();
  }
  render() {
    this.box.replaceChildren();
    for (const [key, c] of this.chips) {
      const span = el("span", "chip");
      if (!c.chip && !c.error) {
        span.classList.add("reading");
        span.textContent = `${c.name} · reading…`;
      } else if (c.error) {
        span.classList.add("failed");
        span.textContent = `${c.name} · ${c.error}`;
        span.title = c.error;
      } else if (c.chip) {
        const chip = c.chip;
        span.dataset.verdict = chip.verdict;
        span.append(el("span", "chip-text", chipText(chip)));
        if (chip.notes.length) span.title = chip.notes.join("\n");
        const x = el("button", "", "×");
        x.setAttribute("aria-label", `Remove ${chip.name}`);
        x.onclick = () => {
          void ipc.detachFile(chip.id);
          this.chips.delete(key);
          this.render();
        };
        span.append(x);
      }
      this.box.append(span);
    }
  }
}

/** A figure with its label, for the ledger dashboard and the hardware card. */
function card(label: string, value: string): HTMLElement {
  const c = el("div", "card");
  c.append(el("b", "", value), el("span", "hint", label));
  return c;
}

function badge(route: string | null | undefined, strategy?: string | null): HTMLElement {
  const b = el("span", `badge ${route ?? ""}`, routeLabel(route, strategy));
  b.setAttribute("aria-label", `Route: ${routeLabel(route, strategy)}`);
  return b;
}

/** `text` with the plan's masked and private fragments of `source` marked. */
function marked(text: string, fragments: PlanFragment[], source: string): HTMLElement {
  const pre = el("pre", "original");
  for (const p of pieces(text, fragments, source)) {
    if (p.cls === "public") pre.append(p.text);
    else {
      const m = el("mark", p.cls, p.text);
      m.title = p.cls === "local_only" ? "stayed on this device" : "masked before sending";
      pre.append(m);
    }
  }
  return pre;
}

/** "What left this device": the exact payloads next to the original with private parts marked. */
async function renderLeft(box: HTMLElement, turn: Turn) {
  box.replaceChildren(el("p", "hint", "Reading the ledger…"));
  let rows: LedgerEntry[];
  try {
    rows = await ipc.whatLeft(turn.task);
  } catch (e) {
    box.replaceChildren(el("p", "error", errorText(e)));
    return;
  }
  box.replaceChildren();
  if (rows.length === 0) {
    box.append(el("p", "nothing-left", "Nothing left this device."));
    return;
  }
  for (const r of rows) {
    const head = el("div", "metrics",
      `${r.destination === "device" ? `${r.status} to your device` : r.status} · ${r.agent} (${r.provider}, ${r.model}) · ${r.bytes} bytes · sha256 ${r.sha256.slice(0, 12)}…` +
        (r.wire_sha256 ? ` · request body ${r.wire_bytes} bytes, sha256 ${r.wire_sha256.slice(0, 12)}…` : "") +
        (r.error ? ` · ${r.error}` : ""));
    const cols = el("div", "cols");
    const orig = el("div");
    orig.append(el("strong", "", "Your question"));
    const frs = turn.plan?.fragments ?? [];
    orig.append(marked(turn.question, frs, "prompt"));
    for (const d of turn.documents ?? []) {
      const dp = marked(d.text, frs, d.name);
      if (d.truncated) dp.append(el("span", "hint", " … (cut)"));
      orig.append(el("strong", "", d.name), dp);
    }
    const sent = el("div");
    sent.append(el("strong", "", r.status === "blocked" ? "Blocked (nothing sent)" : "Sent, exactly"));
    const out = el("pre", "payload");
    for (const p of placeholderPieces(payloadText(r))) {
      out.append(p.placeholder ? el("mark", "placeholder", p.text) : document.createTextNode(p.text));
    }
    sent.append(out);
    cols.append(orig, sent);
    box.append(head, cols);
  }
}

/** One question and answer in the thread; returns handles to update while it streams. */
function turnView(question: string, files: string[]) {
  const root = el("article", "turn");
  const q = el("div", "question", question);
  const head = el("div", "actions");
  const b = badge(null);
  head.append(b);
  const reasons = el("ul", "reasons");
  const answer = el("div", "answer md");
  const render = markdownInto(answer);
  let streamed = "";
  const stream = (text: string) => { streamed += text; render.update(streamed); };
  const notices = el("div", "notice");
  const metrics = el("div", "metrics");
  const leftBtn = el("button", "link", "What left this device");
  leftBtn.hidden = true;
  const left = el("div", "left-panel");
  left.hidden = true;
  root.append(q);
  if (files.length) root.append(el("div", "files", `Attached: ${files.join(", ")}`));
  root.append(head, reasons, answer, notices, metrics, leftBtn, left);
  const setPlan = (p: Plan) => {
    root.querySelector(".badge")?.replaceWith(badge(p.route, p.strategy));
    reasons.replaceChildren(...p.reasons.map((r) => el("li", "", r)));
  };
  const finish = (t: Turn) => {
    render.done(t.answer);
    if (t.plan) setPlan(t.plan);
    // A cloud step that failed fell back to the local model: the badge says where it ran.
    if (t.summary?.fell_back) root.querySelector(".badge")?.replaceWith(badge("local"));
    notices.replaceChildren(...t.notices.map((n) => el("div", "", n)));
    const status = turnStatus(t);
    metrics.textContent = (t.summary ? formatSummary(t.summary, t.elapsed_ms) : "") + (status ? ` ${status}` : "");
    leftBtn.hidden = false;
    leftBtn.onclick = () => {
      left.hidden = !left.hidden;
      if (!left.hidden) void renderLeft(left, t);
    };
  };
  return { root, answer, notices, setPlan, finish, stream, cancel: render.cancel };
}

function mainWindow() {
  const thread = $<HTMLElement>("#thread");
  const form = $<HTMLFormElement>("#ask-form");
  const prompt = $<HTMLTextAreaElement>("#prompt");
  const askBtn = $<HTMLButtonElement>("#ask");
  const stopBtn = $<HTMLButtonElement>("#stop");
  const status = $<HTMLElement>("#model-status");
  const pause = $<HTMLInputElement>("#pause-cloud");
  const chips = new ChipTray($<HTMLElement>("#chips"));
  let conversation: string | null = null;
  let running: string | null = null;

  // Waits for the engine's load (at start, and after another model is chosen).
  const refreshStatus = () => ipc.localModelStatus()
    .then((m) => { status.textContent = formatModel(m); status.dataset.state = "ready"; })
    .catch((e) => { status.textContent = `Local model unavailable: ${errorText(e)}`; status.dataset.state = "error"; });
  void refreshStatus();
  void ipc.onAttach((e) => chips.on(e));
  void ipc.onPrefs((p) => { pause.checked = p.cloud_paused; });
  void ipc.onOpenConversation((id) => void openConversation(id));
  // What the router knows about the network, where every question starts.
  const net = $<HTMLElement>("#net-status");
  void ipc.onNetwork((s) => {
    const text = networkText(s);
    net.hidden = text === null;
    net.textContent = text ?? "";
    net.dataset.state = s.state === "offline" ? "error" : "loading";
  });
  ipc.getSettings().then((s) => {
    pause.checked = s.cloud_paused;
    // Scanning with rules only is a weaker guarantee: say so where every question starts.
    const notice = $<HTMLElement>("#scan-notice");
    notice.hidden = !s.scan_notice;
    notice.textContent = s.scan_notice ? "Names: rules only" : "";
    notice.title = s.scan_notice ?? "";
  }).catch(() => {});
  pause.onchange = () => void ipc.setCloudPaused(pause.checked).catch((e) => alert(errorText(e)));

  // First run: a welcome beside the chat (never in its way) until finished or dismissed.
  const onboarding = $<HTMLElement>("#onboarding");
  async function showOnboarding() {
    onboarding.hidden = false;
    const current = await ipc.getSettings().then((s) => s.policy).catch(() => "balanced" as const);
    $<HTMLElement>("#onb-policies").replaceChildren(...(["private", "balanced", "performance"] as const).map((p) => {
      const label = el("label", "onb-policy");
      const input = document.createElement("input");
      input.type = "radio";
      input.name = "onb-policy";
      input.value = p;
      input.checked = p === current;
      input.onchange = () => void ipc.setPolicy(p).catch((e) => alert(errorText(e)));
      label.append(input, el("span", "", POLICY_TEXT[p]));
      return label;
    }));
    try {
      const [h, models] = await Promise.all([ipc.probeHardware(), ipc.models()]);
      $<HTMLElement>("#onb-hardware").textContent = hardwareText(h);
      const offer = modelOffer(h, models);
      $<HTMLElement>("#onb-model").textContent = offer.text;
      // The card is drawn while the engine may still be loading: say so once it has loaded.
      if (offer.download === null && models.some((m) => m.chosen && !m.loaded)) {
        void ipc.localModelStatus().then(() => ipc.models())
          .then((now) => { $<HTMLElement>("#onb-model").textContent = modelOffer(h, now).text; }).catch(() => {});
      }
      const dl = $<HTMLButtonElement>("#onb-download");
      dl.hidden = offer.download === null;
      if (offer.download) {
        const name = offer.download;
        dl.textContent = `Download ${name}`;
        dl.onclick = () => {
          dl.disabled = true;
          const bar = $<HTMLProgressElement>("#onb-bar");
          void ipc.downloadModel(name, (p) => { $<HTMLElement>("#onb-progress").textContent = progressText(name, p); showProgress(bar, p); })
            .then(() => ipc.chooseModel(name))
            .then(() => { showProgress(bar, null); $<HTMLElement>("#onb-progress").textContent = `${name} downloaded, verified and loading.`; dl.hidden = true; return refreshStatus(); })
            .catch((e) => { showProgress(bar, null); $<HTMLElement>("#onb-progress").textContent = errorText(e); dl.disabled = false; });
        };
      }
    } catch (e) {
      $<HTMLElement>("#onb-hardware").textContent = `Could not look at this machine: ${errorText(e)}`;
    }
  }
  $<HTMLButtonElement>("#onb-sample").onclick = () => {
    const status = $<HTMLElement>("#onb-sample-status");
    status.textContent = "Reading the sample…";
    void ipc.attachSample()
      .then(() => { status.textContent = "Attached below the prompt: see what was found, then ask about it."; prompt.value ||= "What is the closing balance, and which payments look unusual?"; prompt.focus(); })
      .catch((e) => { status.textContent = errorText(e); });
  };
  $<HTMLButtonElement>("#onb-connect").onclick = () => { show("settings"); $<HTMLElement>("#providers")?.scrollIntoView(); };
  $<HTMLButtonElement>("#onb-local").onclick = () => {
    pause.checked = true;
    void ipc.setCloudPaused(true).then(() => { $<HTMLElement>("#onb-progress").textContent = "Staying local: Pause cloud is on."; })
      .catch((e) => alert(errorText(e)));
  };
  $<HTMLButtonElement>("#onb-done").onclick = () => {
    onboarding.hidden = true;
    void ipc.setOnboarded(true);
    prompt.focus();
  };
  void ipc.getSettings().then((s) => { if (!s.onboarded) void showOnboarding(); }).catch(() => {});
  $<HTMLButtonElement>("#onb-again").onclick = () => {
    void ipc.setOnboarded(false);
    show("chat");
    void showOnboarding();
  };

  // Tabs, with arrow keys between them.
  const tabs = ["chat", "ledger", "settings"];
  const show = (name: string) => {
    for (const t of tabs) {
      $<HTMLElement>(`#tab-${t}`).setAttribute("aria-selected", String(t === name));
      $<HTMLElement>(`#view-${t}`).hidden = t !== name;
    }
    if (name === "ledger") void loadLedger();
    if (name === "settings") void loadSettings();
  };
  for (const t of tabs) {
    const b = $<HTMLButtonElement>(`#tab-${t}`);
    b.onclick = () => show(t);
    b.onkeydown = (ev) => {
      const i = tabs.indexOf(t);
      const next = ev.key === "ArrowRight" ? tabs[(i + 1) % 3] : ev.key === "ArrowLeft" ? tabs[(i + 2) % 3] : null;
      if (next) { show(next); $<HTMLButtonElement>(`#tab-${next}`).focus(); }
    };
  }

  const search = $<HTMLInputElement>("#conversation-search");
  async function refreshList() {
    const list = $<HTMLUListElement>("#conversation-list");
    const q = search.value.trim();
    const items = await (q ? ipc.searchConversations(q) : ipc.conversations()).catch(() => []);
    list.replaceChildren(...items.map((c) => {
      const li = el("li");
      const b = el("button", "", c.title);
      b.title = c.title;
      if (c.id === conversation) b.setAttribute("aria-current", "true");
      b.onclick = () => void openConversation(c.id);
      li.append(b);
      return li;
    }));
    if (q && !items.length) list.replaceChildren(el("li", "hint", "No conversation matches."));
    const current = items.find((c) => c.id === conversation);
    if (current) $<HTMLElement>("#conversation-title").textContent = current.title;
    $<HTMLElement>("#conversation-bar").hidden = conversation === null;
  }
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void refreshList(), 150);
  });

  // The open conversation: rename in place, export, delete (a second press confirms).
  const title = $<HTMLElement>("#conversation-title");
  const renameInput = $<HTMLInputElement>("#rename-input");
  const renameBtn = $<HTMLButtonElement>("#rename-conversation");
  const deleteBtn = $<HTMLButtonElement>("#delete-conversation");
  const convStatus = $<HTMLElement>("#conversation-status");
  const endRename = () => { renameInput.hidden = true; title.hidden = false; renameBtn.textContent = "Rename"; };
  const saveRename = async () => {
    if (!conversation) return;
    try {
      await ipc.renameConversation(conversation, renameInput.value);
      convStatus.textContent = "Renamed.";
      endRename();
      await refreshList();
    } catch (e) {
      convStatus.textContent = errorText(e);
    }
  };
  renameBtn.onclick = () => {
    if (!renameInput.hidden) { void saveRename(); return; }
    renameInput.value = title.textContent ?? "";
    renameInput.hidden = false;
    title.hidden = true;
    renameBtn.textContent = "Save";
    renameInput.focus();
    renameInput.select();
  };
  renameInput.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); void saveRename(); }
    if (ev.key === "Escape") { ev.preventDefault(); endRename(); }
  });
  const exportAs = (format: "markdown" | "json") => async () => {
    if (!conversation) return;
    try {
      const p = await ipc.exportConversation(conversation, format);
      convStatus.textContent = p ? `Exported to ${p}` : "";
    } catch (e) {
      convStatus.textContent = errorText(e);
    }
  };
  $<HTMLButtonElement>("#export-md").onclick = exportAs("markdown");
  $<HTMLButtonElement>("#export-json").onclick = exportAs("json");
  let confirmTimer: ReturnType<typeof setTimeout> | undefined;
  deleteBtn.onclick = async () => {
    if (!conversation) return;
    if (deleteBtn.dataset.confirm !== "1") {
      deleteBtn.dataset.confirm = "1";
      deleteBtn.textContent = "Delete for good?";
      clearTimeout(confirmTimer);
      confirmTimer = setTimeout(() => { delete deleteBtn.dataset.confirm; deleteBtn.textContent = "Delete"; }, 4000);
      return;
    }
    delete deleteBtn.dataset.confirm;
    deleteBtn.textContent = "Delete";
    try {
      await ipc.deleteConversation(conversation);
      conversation = null;
      thread.replaceChildren(el("p", "hint", "Conversation deleted (its turns and its masking vault)."));
      convStatus.textContent = "";
      await refreshList();
    } catch (e) {
      convStatus.textContent = errorText(e);
    }
  };

  async function openConversation(id: string) {
    conversation = id;
    endRename();
    convStatus.textContent = "";
    thread.replaceChildren();
    for (const t of await ipc.conversation(id)) {
      const v = turnView(t.question, t.attachments);
      v.finish(t);
      thread.append(v.root);
    }
    thread.scrollTop = thread.scrollHeight;
    void refreshList();
  }

  $<HTMLButtonElement>("#new-chat").onclick = () => {
    conversation = null;
    thread.replaceChildren(el("p", "hint", "New conversation."));
    void refreshList();
    prompt.focus();
  };
  $<HTMLButtonElement>("#attach").onclick = () => void ipc.pickFiles().catch((e) => alert(errorText(e)));

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const question = prompt.value.trim();
    if (!question || running) return;
    $<HTMLElement>("#thread-hint")?.remove();
    const task = ipc.newTaskId();
    running = task;
    askBtn.disabled = true;
    stopBtn.hidden = false;
    const v = turnView(question, chips.names());
    thread.append(v.root);
    const onEvent = (e: RunEvent) => {
      if (e.type === "plan") v.setPlan(e.plan);
      if (e.type === "text") { v.stream(e.text); thread.scrollTop = thread.scrollHeight; }
      if (e.type === "notice") v.notices.append(el("div", "", e.text));
    };
    try {
      const res = await ipc.ask({ conversation, prompt: question, attachments: chips.ids(), task }, onEvent);
      conversation = res.conversation;
      v.finish(res.turn);
      prompt.value = "";
      chips.clear();
      void refreshList();
    } catch (e) {
      v.cancel();
      v.answer.className = "answer error";
      v.answer.textContent = errorText(e);
    } finally {
      running = null;
      askBtn.disabled = false;
      stopBtn.hidden = true;
    }
  });
  stopBtn.onclick = () => { if (running) void ipc.stop(running); };
  prompt.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit();
  });

  // The loaded entries, shown through the filters (agent, status, dates) above the table.
  let entries: LedgerEntry[] = [];
  const filterIds = ["#filter-agent", "#filter-status", "#filter-from", "#filter-to"];
  function renderLedgerRows() {
    const body = $<HTMLElement>("#ledger-table tbody");
    const [agent, status, from, to] = filterIds.map((id) => $<HTMLInputElement>(id).value);
    const shown = filterEntries(entries, { agent, status, from, to });
    $<HTMLElement>("#filter-count").textContent = shown.length === entries.length ? `${entries.length} rows` : `${shown.length} of ${entries.length} rows`;
    body.replaceChildren(...shown.map((r) => {
      const tr = el("tr");
      tr.dataset.task = r.task;
      const pre = el("pre", "", r.payload === null ? "(not kept: blocked)" : payloadText(r));
      const cells = [
        new Date(r.ts_ms).toLocaleString(), r.destination === "device" ? `${r.status} to your device` : r.status, `${r.agent} · ${r.model}`, String(r.bytes),
        r.tokens_in === null ? "" : `${r.tokens_in} → ${r.tokens_out ?? 0}`,
        r.cost_usd === null ? "" : `$${r.cost_usd.toFixed(5)}`,
      ].map((t) => el("td", "", t));
      const td = el("td");
      td.append(pre);
      tr.append(...cells, td);
      return tr;
    }));
  }
  for (const id of filterIds) $<HTMLInputElement>(id).addEventListener("change", renderLedgerRows);

  async function loadLedger() {
    const body = $<HTMLElement>("#ledger-table tbody");
    try {
      const [view, convs] = await Promise.all([ipc.ledger(200), ipc.conversations()]);
      const turns = (await Promise.all(convs.slice(0, 50).map((c) => ipc.conversation(c.id)))).flat();
      const s = savings(turns);
      $<HTMLElement>("#dashboard").replaceChildren(
        card("requests sent", String(view.totals.sent)),
        card("blocked by the guard", String(view.totals.blocked)),
        card("bytes that left", String(view.totals.bytes_sent)),
        card("cloud cost", `$${s.cost.toFixed(4)}`),
        card("all-cloud would cost", `$${s.allCloud.toFixed(4)}`),
        card("saved versus all-cloud", `$${Math.max(0, s.allCloud - s.cost).toFixed(4)}`),
        card("answered on your hardware", localShare(s) || "—"),
        card("energy (estimate)", `${s.energyJ.toFixed(0)} J`),
        card("local runs", `${view.totals.local_runs} (${view.totals.local_tokens} tokens)`),
      );
      // The chart code loads with the Ledger tab, not at start (idle memory).
      const { dashboardCharts } = await import("./charts");
      $<HTMLElement>("#charts").replaceChildren(...dashboardCharts(turns));
      $<HTMLElement>("#ledger-path").textContent = `${formatTotals(view.totals)} — ${view.path}`;
      entries = view.entries;
      const agentSel = $<HTMLSelectElement>("#filter-agent");
      const keep = agentSel.value;
      agentSel.replaceChildren(el("option", "", "all"), ...[...new Set(entries.map((r) => r.agent))].sort().map((a) => {
        const o = el("option", "", a) as HTMLOptionElement;
        o.value = a;
        return o;
      }));
      (agentSel.firstChild as HTMLOptionElement).value = "";
      agentSel.value = keep;
      renderLedgerRows();
    } catch (e) {
      body.replaceChildren(el("tr", "error", errorText(e)));
    }
  }
  $<HTMLButtonElement>("#ledger-refresh").onclick = () => void loadLedger();
  $<HTMLButtonElement>("#ledger-export").onclick = () =>
    void ipc.exportLedger().then((p) => { if (p) $<HTMLElement>("#ledger-path").textContent = `Exported to ${p}`; })
      .catch((e) => alert(errorText(e)));

  const theme = $<HTMLSelectElement>("#theme");
  theme.value = themeOf(localStorage.getItem(THEME_KEY));
  theme.onchange = () => {
    const t = themeOf(theme.value);
    localStorage.setItem(THEME_KEY, t);
    applyTheme(document.documentElement, t);
  };
  async function loadSettings() {
    const s = await ipc.getSettings();
    $<HTMLSelectElement>("#policy").value = s.policy;
    $<HTMLInputElement>("#shortcut").value = s.shortcut;
    $<HTMLInputElement>("#menu-bar-only").checked = s.menu_bar_only;
    const kerr = $<HTMLElement>("#keychain-error");
    kerr.hidden = !s.keychain_error;
    kerr.textContent = s.keychain_error ? `Keys cannot be stored: ${s.keychain_error}` : "";
    $<HTMLInputElement>("#gateway").checked = s.gateway.running;
    $<HTMLElement>("#gateway-status").textContent = s.gateway.running ? `Listening on http://127.0.0.1:${s.gateway.port}/v1` : "Off";
    $<HTMLUListElement>("#providers").replaceChildren(...s.providers.map((p) => {
      const li = el("li");
      li.append(el("span", "name", p.trust === "device" ? `${p.name} (your device)` : p.name), el("span", "hint", `${p.agents.join(", ") || "no agents"} · ${p.base_url}`));
      const state = el("span", "", !p.needs_key ? "no key needed" : p.key === "store" ? "key in keychain" : p.key === "env" ? "key from environment" : "no key");
      li.append(state);
      if (p.needs_key) {
        const input = el("input") as HTMLInputElement;
        input.type = "password";
        input.autocomplete = "off";
        input.placeholder = "paste API key";
        input.setAttribute("aria-label", `API key for ${p.name}`);
        const save = el("button", "secondary", "Save key");
        save.onclick = () => void ipc.setKey(p.name, input.value).then(() => { input.value = ""; void loadSettings(); }).catch((e) => alert(errorText(e)));
        li.append(input, save);
        if (p.key === "store") {
          const del = el("button", "secondary", "Delete key");
          del.onclick = () => void ipc.deleteKey(p.name).then(() => loadSettings());
          li.append(del);
        }
      }
      return li;
    }));
    void loadFolders();
    void loadModels();
    ipc.probeHardware().then((h) => {
      const hw = h.hardware;
      $<HTMLElement>("#hardware").replaceChildren(
        card("CPU", `${hw.cpu.logical_cores} cores`),
        card("memory", `${(hw.memory.total_bytes / 2 ** 30).toFixed(0)} GiB`),
        card("recommended model", String(h.recommendation.recommended_model ?? "none fits")),
      );
    }).catch(() => {});
  }
  async function loadModels() {
    const list = await ipc.models().catch(() => []);
    $<HTMLUListElement>("#models").replaceChildren(...list.map((m) => {
      const li = el("li");
      const state = m.loaded ? "loaded" : m.chosen ? "chosen, not loaded" : m.installed ? "downloaded" : "";
      li.append(el("span", "name", m.name), el("span", "", modelText(m)), el("span", "hint", state));
      li.title = m.reason;
      if (!m.installed) {
        const b = el("button", "secondary", "Download");
        b.onclick = () => {
          b.disabled = true;
          const bar = $<HTMLProgressElement>("#model-bar");
          void ipc.downloadModel(m.name, (p) => { $<HTMLElement>("#model-progress").textContent = progressText(m.name, p); showProgress(bar, p); })
            .then(() => { showProgress(bar, null); $<HTMLElement>("#model-progress").textContent = `${m.name} downloaded and verified.`; return loadModels(); })
            .catch((e) => { showProgress(bar, null); $<HTMLElement>("#model-progress").textContent = errorText(e); b.disabled = false; });
        };
        li.append(b);
      } else if (!m.chosen) {
        const b = el("button", "secondary", "Use this model");
        b.onclick = () => void ipc.chooseModel(m.name).then(() => {
          status.textContent = `Loading ${m.name}…`;
          status.dataset.state = "loading";
          void loadModels();
          return refreshStatus().then(() => loadModels());
        }).catch((e) => alert(errorText(e)));
        li.append(b);
      }
      return li;
    }));
  }

  async function loadFolders() {
    const v = await ipc.folders().catch((e) => { $<HTMLElement>("#index-status").textContent = errorText(e); return null; });
    if (!v) return;
    $<HTMLElement>("#index-status").textContent = indexStatusText(v.status);
    $<HTMLElement>("#index-failures").replaceChildren(...v.status.failures.slice(0, 10).map(([p, why]) => el("li", "error", `${p}: ${why}`)));
    $<HTMLUListElement>("#folders").replaceChildren(...v.folders.map((f) => {
      const li = el("li");
      const mark = el("label", "inline");
      const box = el("input") as HTMLInputElement;
      box.type = "checkbox";
      box.checked = f.sensitive;
      box.onchange = () => void ipc.setFolderSensitive(f.path, box.checked).then(() => loadFolders()).catch((e) => alert(errorText(e)));
      mark.append(box, " sensitive");
      const rm = el("button", "secondary", "Remove");
      rm.setAttribute("aria-label", `Stop watching ${f.path}`);
      rm.onclick = () => void ipc.removeFolder(f.path).then(() => loadFolders());
      li.append(el("span", "name", f.sensitive ? "Sensitive" : "Normal"), el("span", "", f.path), mark, rm);
      return li;
    }));
  }
  void ipc.onIndex((e) => {
    $<HTMLElement>("#index-status").textContent = indexEventText(e);
    if (e.state !== "progress") setTimeout(() => void loadFolders(), 300);
  });
  $<HTMLButtonElement>("#add-folder").onclick = () => void ipc.addFolder(false).then(() => loadFolders()).catch((e) => alert(errorText(e)));
  $<HTMLButtonElement>("#add-sensitive-folder").onclick = () => void ipc.addFolder(true).then(() => loadFolders()).catch((e) => alert(errorText(e)));
  $<HTMLInputElement>("#menu-bar-only").onchange = (ev) =>
    void ipc.setMenuBarOnly((ev.target as HTMLInputElement).checked).catch((e) => alert(errorText(e)));
  $<HTMLButtonElement>("#index-now").onclick = () => void ipc.indexNow().catch((e) => alert(errorText(e)));

  // The quick-ask shortcut: keys pressed with Ctrl/Alt/Super are recorded, anything else types.
  const shortcut = $<HTMLInputElement>("#shortcut");
  const shortcutStatus = $<HTMLElement>("#shortcut-status");
  shortcut.addEventListener("keydown", (ev) => {
    const acc = accelerator(ev);
    if (acc) { ev.preventDefault(); shortcut.value = acc; }
  });
  $<HTMLFormElement>("#shortcut-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    shortcutStatus.className = "hint";
    shortcutStatus.textContent = "…";
    ipc.setShortcut(shortcut.value).then((s) => {
      shortcut.value = s;
      shortcutStatus.textContent = `Saved: ${s} opens quick ask`;
    }).catch((e) => {
      shortcutStatus.className = "error";
      shortcutStatus.textContent = errorText(e);
    });
  });

  $<HTMLSelectElement>("#policy").onchange = (ev) =>
    void ipc.setPolicy((ev.target as HTMLSelectElement).value as ipc.Policy).catch((e) => alert(errorText(e)));
  $<HTMLInputElement>("#gateway").onchange = (ev) => {
    const on = (ev.target as HTMLInputElement).checked;
    ipc.setGateway(on).then((g) => {
      $<HTMLElement>("#gateway-status").textContent = g.running
        ? `Listening on http://127.0.0.1:${g.port}/v1` + (g.new_token ? ` — token (shown once): ${g.new_token}` : " — token in the keychain (tandem serve --rotate-token makes a new one)")
        : "Off";
    }).catch((e) => { alert(errorText(e)); (ev.target as HTMLInputElement).checked = false; });
  };
  $<HTMLFormElement>("#provider-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target as HTMLFormElement);
    void ipc.addProvider({
      name: String(f.get("name")), wire: String(f.get("wire")), baseUrl: String(f.get("baseUrl")),
      needsKey: f.get("needsKey") !== null, model: String(f.get("model") || "") || null, key: String(f.get("key") || "") || null,
      trust: f.get("trust") === "device" ? "device" : "cloud",
    }).then(() => { (ev.target as HTMLFormElement).reset(); return loadSettings(); }).catch((e) => alert(errorText(e)));
  });

  void refreshList();
  void ipc.uiReady().catch(() => {});
}

function quickWindow() {
  const form = $<HTMLFormElement>("#quick-form");
  const input = $<HTMLInputElement>("#quick-prompt");
  const answer = $<HTMLElement>("#quick-answer");
  const b = $<HTMLElement>("#quick-badge");
  const open = $<HTMLButtonElement>("#quick-open");
  const chips = new ChipTray($<HTMLElement>("#quick-chips"));
  let conversation: string | null = null;
  let running: string | null = null;
  void ipc.onAttach((e) => chips.on(e));
  void ipc.onQuickShown(() => { input.focus(); input.select(); });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      if (running) void ipc.stop(running);
      void ipc.hideQuick();
    }
  });
  open.onclick = () => void ipc.openMain(conversation);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const q = input.value.trim();
    if (!q || running) return;
    running = ipc.newTaskId();
    answer.textContent = "";
    answer.className = "answer md";
    const render = markdownInto(answer);
    let streamed = "";
    b.hidden = false;
    b.className = "badge";
    b.textContent = "…";
    try {
      const res = await ipc.ask({ conversation: null, prompt: q, attachments: chips.ids(), task: running }, (e) => {
        if (e.type === "plan") { b.className = `badge ${e.plan.route}`; b.textContent = routeLabel(e.plan.route, e.plan.strategy); }
        if (e.type === "text") { streamed += e.text; render.update(streamed); }
      });
      render.done(res.turn.answer);
      conversation = res.conversation;
      open.hidden = false;
      chips.clear();
    } catch (e) {
      render.cancel();
      answer.className = "answer error";
      answer.textContent = errorText(e);
    } finally {
      running = null;
    }
  });
  input.focus();
}

installCopyButtons();
// Appearance is the page's own setting (both windows share the origin's storage): applied
// before anything renders, and followed when the other window changes it.
applyTheme(document.documentElement, themeOf(localStorage.getItem(THEME_KEY)));
window.addEventListener("storage", (e) => {
  if (e.key === THEME_KEY) applyTheme(document.documentElement, themeOf(e.newValue));
});
if (document.body.dataset.window === "quick") quickWindow();
else mainWindow();
