// The dashboard as pictures: series computed from the stored answers' summaries (cost, what
// all-cloud would have cost, energy, where each answer ran, per agent) and drawn as small SVG
// charts — no chart library, no remote anything; every chart has a title and a text
// alternative for screen readers.
import type { Summary } from "./bindings";

export type DayPoint = {
  day: string; // YYYY-MM-DD, local time
  cost: number;
  allCloud: number;
  energyJ: number;
  local: number; // answers that ran on this device
  cloud: number; // answers that used a cloud agent (cloud or split)
};

type TurnLike = { ts_ms: number; summary: Summary | null };

const dayOf = (ms: number) => {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
};

/** One point per day that had answers, oldest first (at most the last `days`). */
export function dailySeries(turns: TurnLike[], days = 14): DayPoint[] {
  const by = new Map<string, DayPoint>();
  for (const t of turns) {
    if (!t.summary) continue;
    const day = dayOf(t.ts_ms);
    const p = by.get(day) ?? { day, cost: 0, allCloud: 0, energyJ: 0, local: 0, cloud: 0 };
    const s = t.summary;
    p.cost += s.cost_usd;
    p.allCloud += s.all_cloud_cost_usd;
    p.energyJ += s.energy_local_j + s.energy_cloud_j;
    if (s.agent && !s.fell_back) p.cloud += 1;
    else p.local += 1;
    by.set(day, p);
  }
  return [...by.values()].sort((a, b) => a.day.localeCompare(b.day)).slice(-days);
}

/** Cost per cloud agent, largest first. */
export function perAgent(turns: TurnLike[]): { agent: string; cost: number; answers: number }[] {
  const by = new Map<string, { agent: string; cost: number; answers: number }>();
  for (const t of turns) {
    const a = t.summary?.agent;
    if (!a || t.summary?.fell_back) continue;
    const p = by.get(a) ?? { agent: a, cost: 0, answers: 0 };
    p.cost += t.summary!.cost_usd;
    p.answers += 1;
    by.set(a, p);
  }
  return [...by.values()].sort((x, y) => y.cost - x.cost || y.answers - x.answers);
}

const NS = "http://www.w3.org/2000/svg";
const svgEl = (tag: string, attrs: Record<string, string | number>) => {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

export type Series = { name: string; values: number[]; cls: string };

/**
 * Grouped bars: one group per label, one bar per series; a legend, and a text alternative
 * (`aria-label`) listing every value, so the chart reads without sight.
 */
export function barChart(title: string, labels: string[], series: Series[], fmt: (v: number) => string): HTMLElement {
  const fig = document.createElement("figure");
  fig.className = "chart";
  const cap = document.createElement("figcaption");
  cap.textContent = title;
  const W = 320, H = 140, pad = 22;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H + pad}`, role: "img", class: "chart-svg" });
  const alt = labels.map((l, i) => `${l}: ${series.map((s) => `${s.name} ${fmt(s.values[i] ?? 0)}`).join(", ")}`).join("; ");
  svg.setAttribute("aria-label", `${title}. ${alt || "No data yet."}`);
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  if (!labels.length || max <= 0) {
    const t = svgEl("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "chart-empty" });
    t.textContent = labels.length ? "All zero so far" : "No data yet";
    svg.append(t);
  } else {
    const group = (W - pad) / labels.length;
    const bar = Math.min(36, Math.max(2, (group * 0.8) / series.length));
    const inset = (group - bar * series.length) / 2;
    svg.append(svgEl("line", { x1: pad, y1: H, x2: W, y2: H, class: "chart-axis" }));
    labels.forEach((label, i) => {
      series.forEach((s, j) => {
        const v = s.values[i] ?? 0;
        const h = (v / max) * (H - 10);
        const r = svgEl("rect", {
          x: pad + i * group + inset + j * bar, y: H - h, width: bar - 1, height: Math.max(h, v > 0 ? 1 : 0), class: `bar ${s.cls}`,
        });
        const tip = svgEl("title", {});
        tip.textContent = `${label} · ${s.name}: ${fmt(v)}`;
        r.append(tip);
        svg.append(r);
      });
      if (labels.length <= 8 || i % Math.ceil(labels.length / 8) === 0) {
        const t = svgEl("text", { x: pad + i * group + group / 2, y: H + 14, "text-anchor": "middle", class: "chart-label" });
        // Days as MM-DD; other labels (agents) cut to fit.
        t.textContent = /^\d{4}-\d\d-\d\d$/.test(label) ? label.slice(5) : label.slice(0, 12);
        svg.append(t);
      }
    });
    const top = svgEl("text", { x: 2, y: 10, class: "chart-label" });
    top.textContent = fmt(max);
    svg.append(top);
  }
  const legend = document.createElement("div");
  legend.className = "chart-legend";
  for (const s of series) {
    const k = document.createElement("span");
    k.className = `key ${s.cls}`;
    k.textContent = s.name;
    legend.append(k);
  }
  fig.append(cap, svg, legend);
  return fig;
}

/** The dashboard's charts for the stored answers. */
export function dashboardCharts(turns: TurnLike[]): HTMLElement[] {
  const days = dailySeries(turns);
  const labels = days.map((d) => d.day);
  const usd = (v: number) => `$${v.toFixed(4)}`;
  const agents = perAgent(turns);
  return [
    barChart("Cloud cost per day, and what all-cloud would have cost", labels, [
      { name: "cloud cost", values: days.map((d) => d.cost), cls: "s-cost" },
      { name: "all-cloud", values: days.map((d) => d.allCloud), cls: "s-all" },
    ], usd),
    barChart("Energy per day (estimate)", labels, [
      { name: "energy", values: days.map((d) => d.energyJ), cls: "s-energy" },
    ], (v) => `${v.toFixed(0)} J`),
    barChart("Where answers ran, per day", labels, [
      { name: "this device", values: days.map((d) => d.local), cls: "s-local" },
      { name: "cloud", values: days.map((d) => d.cloud), cls: "s-cloud" },
    ], (v) => String(Math.round(v))),
    barChart("Cloud cost per agent", agents.map((a) => a.agent), [
      { name: "cost", values: agents.map((a) => a.cost), cls: "s-cost" },
    ], usd),
  ];
}
