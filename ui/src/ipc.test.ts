// The IPC module against Tauri's mocked backend: command names and argument shapes are the
// contract with the Rust side (tests/ipc.rs calls the same names with the same fields).
import { afterEach, describe, expect, it } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import * as ipc from "./ipc";

afterEach(() => clearMocks());

describe("ipc", () => {
  it("asks with a task id and attachments, and returns the stored turn", async () => {
    const calls: [string, unknown][] = [];
    mockIPC((cmd, args) => {
      calls.push([cmd, args]);
      if (cmd === "ask") return { conversation: "c1", turn: { task: (args as { task: string }).task, answer: "Berlin" } };
      if (cmd === "stop") return true;
    });
    const task = ipc.newTaskId();
    expect(task).toMatch(/^t-[0-9a-f]{16}$/);
    const res = await ipc.ask({ conversation: null, prompt: "Capital?", attachments: ["chip1"], task }, () => {});
    expect(res.turn.answer).toBe("Berlin");
    expect(calls[0][0]).toBe("ask");
    expect(calls[0][1]).toMatchObject({ conversation: null, prompt: "Capital?", attachments: ["chip1"], task });
    expect(await ipc.stop(task)).toBe(true);
  });
  it("passes command errors through with their codes", async () => {
    mockIPC(() => { throw { code: "secrets.bad_key", message: "bad key" }; });
    await expect(ipc.setKey("openai", "a\nb")).rejects.toEqual({ code: "secrets.bad_key", message: "bad key" });
    const e = await ipc.whatLeft("t").catch((x) => x);
    expect(ipc.isCommandError(e)).toBe(true);
  });
});
