import { describe, expect, it } from "vitest";
import { errorText, formatMetrics, formatModel } from "./view";

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
});
