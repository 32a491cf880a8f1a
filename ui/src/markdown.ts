// Answers as Markdown, rendered safely: markdown-it with raw HTML off (it is shown as text),
// no image ever loaded (its alt text is shown), no link that navigates or loads anything (the
// label stays, the address is shown beside it) — consistent with the CSP and with the
// reply-link rule (a placeholder left in a link is shown as written). Code blocks get a copy
// button; main.ts copies on click (one delegated handler).
import type MarkdownIt from "markdown-it";

// markdown-it is loaded on the first answer, not at start (idle memory): until it is there an
// answer shows as plain text, then renders.
let md: MarkdownIt | null = null;
let loading: Promise<MarkdownIt> | null = null;
const waiting = new Set<() => void>();

/** Loads and configures markdown-it once; resolves when answers can render. */
export function loadMarkdown(): Promise<MarkdownIt> {
  loading ??= import("markdown-it").then(({ default: MarkdownItCtor }) => {
    const m = configure(new MarkdownItCtor({ html: false, linkify: false, typographer: false, breaks: false }));
    md = m;
    for (const f of waiting) f();
    waiting.clear();
    return m;
  });
  return loading;
}

function configure(md: MarkdownIt): MarkdownIt {
  const escape = md.utils.escapeHtml;
  md.renderer.rules.image = (tokens, idx) => {
    const t = tokens[idx];
    const alt = t.children ? md.renderer.renderInlineAsText(t.children, md.options, {}) : t.content;
    return `<span class="md-image" title="image not loaded">[image${alt ? `: ${escape(alt)}` : ""}]</span>`;
  };
  md.renderer.rules.link_open = (tokens, idx, _opts, env: { links?: string[] }) => {
    (env.links ??= []).push(tokens[idx].attrGet("href") ?? "");
    return `<span class="md-link">`;
  };
  md.renderer.rules.link_close = (_tokens, _idx, _opts, env: { links?: string[] }) => {
    const href = env.links?.pop() ?? "";
    return `</span>${href ? ` <span class="md-url">(${escape(href)})</span>` : ""}`;
  };
  const codeBlock = (code: string, lang: string) =>
    `<div class="code"><button type="button" class="copy" aria-label="Copy code">Copy</button>` +
    `<pre><code${lang ? ` data-lang="${escape(lang)}"` : ""}>${escape(code)}</code></pre></div>`;
  md.renderer.rules.fence = (tokens, idx) => {
    const t = tokens[idx];
    return codeBlock(t.content, t.info.trim().split(/\s+/)[0] ?? "");
  };
  md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, "");
  return md;
}

const plain = (text: string) =>
  `<p class="plain">${text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p>`;

/** The answer as HTML (safe to assign to innerHTML: nothing in it comes from the text unescaped). */
export function renderMarkdown(text: string): string {
  if (!md) {
    void loadMarkdown();
    return plain(text);
  }
  return md.render(text, {});
}

/** Renders into `el`: `update` at most once per frame while an answer streams in (no flicker,
 *  no layout jump per token), `done` at once with the final text. */
export function markdownInto(el: HTMLElement): {
  update: (text: string) => void;
  done: (text: string) => void;
  cancel: () => void;
} {
  let pending: string | null = null;
  const raf = typeof requestAnimationFrame === "function" ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16);
  let last: string | null = null;
  const show = (text: string) => {
    el.innerHTML = renderMarkdown(text);
    el.dataset.source = text;
    last = text;
    if (!md) waiting.add(() => { if (last !== null) show(last); });
  };
  return {
    update(text: string) {
      const scheduled = pending !== null;
      pending = text;
      if (scheduled) return;
      raf(() => {
        if (pending === null) return;
        const t = pending;
        pending = null;
        show(t);
      });
    },
    done(text: string) {
      pending = null;
      show(text);
    },
    /** Drops a render still waiting for its frame (an error replaces the answer). */
    cancel() {
      pending = null;
      last = null;
    },
  };
}

/** Copies a code block's text when its button is pressed (one handler for the document). */
export function installCopyButtons(root: Document | HTMLElement = document): void {
  root.addEventListener("click", (ev) => {
    const b = (ev.target as HTMLElement | null)?.closest?.(".code .copy");
    if (!b) return;
    const code = b.parentElement?.querySelector("code")?.textContent ?? "";
    void navigator.clipboard?.writeText(code).then(
      () => { b.textContent = "Copied"; setTimeout(() => { b.textContent = "Copy"; }, 1200); },
      () => { b.textContent = "Copy failed"; },
    );
  });
}
