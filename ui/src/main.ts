import { askLocal, localModelStatus } from "./ipc";
import { errorText, formatMetrics, formatModel } from "./view";

const form = document.querySelector<HTMLFormElement>("#ask-form")!;
const promptBox = document.querySelector<HTMLTextAreaElement>("#prompt")!;
const button = document.querySelector<HTMLButtonElement>("#ask")!;
const answer = document.querySelector<HTMLElement>("#answer")!;
const metrics = document.querySelector<HTMLElement>("#metrics")!;
const status = document.querySelector<HTMLElement>("#model-status")!;

localModelStatus()
  .then((m) => {
    status.textContent = formatModel(m);
    status.dataset.state = "ready";
  })
  .catch((e) => {
    status.textContent = `Local model unavailable: ${errorText(e)}`;
    status.dataset.state = "error";
  });

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const prompt = promptBox.value.trim();
  if (!prompt) return;
  button.disabled = true;
  metrics.textContent = "";
  answer.innerHTML = "";
  const out = document.createElement("p");
  out.className = "answer";
  answer.appendChild(out);
  try {
    const result = await askLocal(prompt, (e) => {
      if (e.type === "token") out.textContent += e.text;
    });
    // The final result is authoritative (covers tokens delivered after a repaint).
    out.textContent = result.text;
    metrics.textContent = formatMetrics(result.metrics);
  } catch (e) {
    out.className = "error";
    out.textContent = errorText(e);
  } finally {
    button.disabled = false;
  }
});

promptBox.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit();
});
