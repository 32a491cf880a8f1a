import { describe, expect, it } from "vitest";
import { barChart, dailySeries, dashboardCharts, perAgent } from "./charts";
import type { Summary } from "./bindings";

const sum = (over: Partial<Summary>): Summary => ({
  text: "", route: "local", agent: null, cloud_tokens: 0, local_tokens: 0, prompt_tokens: 0, completion_tokens: 0,
  cost_usd: 0, all_cloud_cost_usd: 0, energy_local_j: 0, energy_cloud_j: 0, masked: 0, withheld: 0, fell_back: false,
  answered_by: null, confidence: null, keep: null, escalated: false, ...over,
});
const day = (d: number, h = 12) => new Date(2026, 11, d, h).getTime();

describe("dashboard charts", () => {
  const turns = [
    { ts_ms: day(1), summary: sum({ energy_local_j: 10, all_cloud_cost_usd: 0.002 }) },
    { ts_ms: day(1, 15), summary: sum({ route: "split", agent: "gpt", cost_usd: 0.001, all_cloud_cost_usd: 0.003, energy_cloud_j: 5 }) },
    { ts_ms: day(3), summary: sum({ route: "cloud", agent: "claude", cost_usd: 0.004, all_cloud_cost_usd: 0.004 }) },
    { ts_ms: day(3), summary: sum({ route: "cloud", agent: "gpt", cost_usd: 0.5, fell_back: true }) },
    { ts_ms: day(3), summary: null },
  ];

  it("sums each day and says where answers ran", () => {
    const s = dailySeries(turns);
    expect(s.map((p) => p.day)).toEqual(["2026-12-01", "2026-12-03"]);
    expect(s[0]).toMatchObject({ cost: 0.001, allCloud: 0.005, energyJ: 15, local: 1, cloud: 1 });
    // An answer that fell back ran on this device.
    expect(s[1]).toMatchObject({ local: 1, cloud: 1 });
    expect(perAgent(turns)).toEqual([
      { agent: "claude", cost: 0.004, answers: 1 },
      { agent: "gpt", cost: 0.001, answers: 1 },
    ]);
  });

  it("draws bars with a text alternative, and says when there is nothing", () => {
    const fig = barChart("Cost", ["2026-12-01", "2026-12-03"], [{ name: "cost", values: [1, 3], cls: "s-cost" }], (v) => `$${v}`);
    const svg = fig.querySelector("svg")!;
    expect(svg.getAttribute("role")).toBe("img");
    expect(svg.getAttribute("aria-label")).toBe("Cost. 2026-12-01: cost $1; 2026-12-03: cost $3");
    const bars = [...fig.querySelectorAll("rect.bar")];
    expect(bars.length).toBe(2);
    expect(Number(bars[1].getAttribute("height"))).toBeGreaterThan(Number(bars[0].getAttribute("height")));
    expect(fig.querySelector("figcaption")?.textContent).toBe("Cost");
    const empty = barChart("Energy", [], [{ name: "energy", values: [], cls: "s-energy" }], String);
    expect(empty.querySelector(".chart-empty")?.textContent).toBe("No data yet");
    expect(dashboardCharts(turns).length).toBe(4);
    const zero = barChart("Cost", ["2026-12-01"], [{ name: "cost", values: [0], cls: "s-cost" }], String);
    expect(zero.querySelector(".chart-empty")?.textContent).toBe("All zero so far");
  });
});
