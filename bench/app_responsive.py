#!/usr/bin/env python3
"""Does the window stay responsive while the local model generates and while a folder is
indexed? The real app under Xvfb (tests/e2e/harness.py), the default model, three phases of
the same length: idle (the peer), a local answer being generated, an indexing pass over a
generated folder. In each phase the page measures
  - event-loop lag: how late a 20 ms timer fires (a blocked page shows as lag);
  - IPC round trip: `local_model_status`, called back to back with 50 ms pauses (a busy shell
    or a starved async runtime shows here);
  - input latency: a key pressed on the X server (xdotool, every 0.4 s) until the page's
    keydown handler runs (wall clock on both sides; includes starting xdotool, as the peer does).
Responsive here means: lag p95 < 50 ms, IPC p95 < 100 ms, input p95 < 100 ms (RAIL's 100 ms
for a visible response). Usage: bench/app_responsive.py [seconds per phase] [files to index]
"""
import os, random, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from harness import Session, wait_for  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
APP = os.path.join(os.path.abspath(TARGET), "debug", "tandem-app")
CLI = os.path.join(os.path.abspath(TARGET), "debug", "tandem")
PHASE = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
# 4,000 notes: at ~1,000 files/s the pass loads about half of an 8 s phase (400 ended in 0.4 s).
FILES = int(sys.argv[2]) if len(sys.argv) > 2 else 4000

PROBE = """
const P = window.__probe = {lags: [], rtts: [], keys: [], on: true};
const inv = window.__TAURI_INTERNALS__.invoke;
(function tick(t0) { setTimeout(() => { const n = performance.now(); P.lags.push(n - t0 - 20); if (P.on) tick(n); }, 20); })(performance.now());
(async () => { while (P.on) { const t = performance.now(); try { await inv('local_model_status'); } catch (e) {}
  P.rtts.push(performance.now() - t); await new Promise(r => setTimeout(r, 50)); } })();
document.addEventListener('keydown', () => P.keys.push(Date.now()), true);
"""


def corpus(n):
    """n notes of ~1.5 KB in 20 folders, one in five with an IBAN (like bench/index.sh's)."""
    d = tempfile.mkdtemp(prefix="tandem-resp-")
    rng = random.Random(7)
    words = ["invoice", "meeting", "garden", "budget", "travel", "doctor", "report", "project", "letter", "school"]
    for i in range(n):
        sub = os.path.join(d, f"f{i % 20:02d}")
        os.makedirs(sub, exist_ok=True)
        lines = [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(20)]
        if i % 5 == 0:
            lines.append("Pay to GB82 WEST 1234 5698 7654 32 by Friday.")
        with open(os.path.join(sub, f"note{i}.txt"), "w") as f:
            f.write("\n".join(lines))
    return d


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def measure(app, name, busy):
    """Runs the probe for PHASE seconds while `busy()` reports the load is still on."""
    app.js("const P=window.__probe;P.lags.length=0;P.rtts.length=0;P.keys.length=0;")
    sent, end, busy_all = [], time.time() + PHASE, True
    while time.time() < end:
        sent.append(time.time() * 1000)
        app.xdo("key", "x")
        time.sleep(0.4)
        busy_all = busy_all and busy()
    time.sleep(0.5)
    p = app.js("const P=window.__probe;return {lags:P.lags.slice(),rtts:P.rtts.slice(),keys:P.keys.slice()}")
    keys = [k - s for s, k in zip(sent, p["keys"])] if len(p["keys"]) == len(sent) else []
    row = {"phase": name, "load on throughout": busy_all,
           "lag": p["lags"], "rtt": p["rtts"], "keys": keys, "keys_lost": len(sent) - len(p["keys"])}
    return row


def main():
    app = Session(APP, os.path.join(TARGET, "e2e-bench"))
    rows = []
    try:
        app.wait_model()
        # The window's own input: pointer over the prompt (no window manager: keys follow it).
        app.js(PROBE)
        wid = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Tandem$"], env=app.env,
                             capture_output=True, text=True).stdout.split()[0]
        geo = dict(l.split("=") for l in subprocess.run(["xdotool", "getwindowgeometry", "--shell", wid], env=app.env,
                                                       capture_output=True, text=True).stdout.split())
        r = app.call("GET", f"element/{app.element('#prompt')}/rect")
        app.xdo("mousemove", str(int(geo["X"]) + int(r["x"]) + 20), str(int(geo["Y"]) + int(r["y"]) + 10))
        app.xdo("click", "1")
        time.sleep(0.3)
        app.invoke("set_cloud_paused", {"paused": True})
        rows.append(measure(app, "idle (peer)", lambda: True))
        # A control that shows the probes see a blocked page: 150 ms of busy script every 0.5 s.
        app.js("window.__stall=setInterval(()=>{const t=performance.now();while(performance.now()-t<150){}},500)")
        control = measure(app, "control: page blocked 150 ms every 0.5 s", lambda: True)
        app.js("clearInterval(window.__stall)")
        app.js("document.querySelector('#prompt').value=''")

        # Generation: a long local answer, asked again whenever one finishes inside the phase.
        def ask():
            app.js("document.querySelector('#prompt').value=arguments[0];document.querySelector('#ask-form').requestSubmit()",
                   "Write a long, detailed story about a lighthouse keeper and the storms of one winter.")
        def generating():
            done = app.js("const b=document.querySelector('#thread article.turn:last-of-type button.link');return !!b&&!b.hidden")
            if done:
                ask()
            return not done
        ask()
        wait_for("generation to start", lambda: app.js(
            "const a=document.querySelector('#thread article.turn:last-of-type .answer');return a&&a.textContent.length>0"), timeout=60)
        t0 = time.time()
        rows.append(measure(app, "generating (local model)", generating))
        wait_for("the answer to finish", lambda: app.js(
            "const b=document.querySelector('#thread article.turn:last-of-type button.link');return !!b&&!b.hidden"), timeout=300)
        gen_s = time.time() - t0

        # Indexing: a generated folder, added with the CLI (the same folders file), one pass.
        folder = corpus(FILES)
        subprocess.run([CLI, "folders", "add", folder, "--normal"], env=app.env, check=True, capture_output=True)
        # The pass is timed in the page, from the call to its answer: the phase below runs its
        # full length whether or not the pass has ended, so wall time here would only say
        # "at most the phase".
        app.js("window.__indexed=null;window.__idx_ms=null;const t=performance.now();"
               "window.__TAURI_INTERNALS__.invoke('index_now').then(s=>{window.__idx_ms=performance.now()-t;window.__indexed=s},e=>window.__indexed={error:e})")
        rows.append(measure(app, f"indexing ({FILES} files)", lambda: app.js("return window.__indexed===null")))
        stats = wait_for("the pass to end", lambda: app.js("return window.__indexed"), timeout=600)
        idx_s = (app.js("return window.__idx_ms") or float("nan")) / 1000
        app.js("window.__probe.on=false")
    finally:
        app.close()

    print(f"\n{PHASE:.0f} s per phase; generation ran {gen_s:.1f} s in all, the indexing pass {idx_s:.2f} s = {FILES / idx_s:.0f} files/s ({stats})\n")
    print("| phase | load on throughout | event-loop lag p50 / p95 / max | IPC round trip p50 / p95 / max (n) | key → page p50 / p95 / max (n, lost) |")
    print("|---|---|---|---|---|")
    f = lambda xs: f"{pct(xs, 50):.1f} / {pct(xs, 95):.1f} / {max(xs) if xs else float('nan'):.1f} ms"
    for r in rows:
        print(f"| {r['phase']} | {'yes' if r['load on throughout'] else 'no'} | {f(r['lag'])} | {f(r['rtt'])} ({len(r['rtt'])}) | "
              f"{f(r['keys'])} ({len(r['keys'])}, {r['keys_lost']}) |")
    print(f"| {control['phase']} | yes | {f(control['lag'])} | {f(control['rtt'])} ({len(control['rtt'])}) | "
          f"{f(control['keys'])} ({len(control['keys'])}, {control['keys_lost']}) |")
    ok = all(pct(r["lag"], 95) < 50 and pct(r["rtt"], 95) < 100 and r["keys"] and pct(r["keys"], 95) < 100 for r in rows)
    print(f"\nresponsive (lag p95 < 50 ms, IPC p95 < 100 ms, input p95 < 100 ms in every phase): {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
