#!/usr/bin/env python3
"""End-to-end test of the desktop window: the real app under Xvfb, driven through
tauri-driver/WebKitWebDriver with plain WebDriver HTTP calls. A question is typed,
the local model's answer must stream into the window (several partial states are
seen before the final one), and a screenshot is kept in <target>/e2e/window.png.

Usage: window.py /abs/path/to/tandem-app
"""
import base64, http.client, json, os, shutil, signal, socket, subprocess, sys, time, urllib.request

APP = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(os.path.dirname(os.path.dirname(APP)), "e2e")
DRIVER = shutil.which("tauri-driver") or os.path.expanduser("~/.cargo/bin/tauri-driver")
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(method, url, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    # tauri-driver occasionally drops a connection to WebKitWebDriver on a loaded
    # 2-core machine (seen here as RemoteDisconnected); the request did not reach
    # the page then, so sending it again is safe.
    for attempt in range(4):
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read() or b"{}").get("value")
        except (http.client.RemoteDisconnected, ConnectionResetError) as e:
            if attempt == 3:
                raise
            print(f"e2e: {method} {url.rsplit('/', 1)[-1]}: {e!r}, retrying")
            time.sleep(0.5 * (attempt + 1))


def wait_for(what, fn, timeout=180, every=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise SystemExit(f"e2e: timed out waiting for {what}")


def main():
    os.makedirs(OUT, exist_ok=True)
    display = f":{free_port() % 400 + 100}"
    env = dict(os.environ, DISPLAY=display, TANDEM_MODELS_DIR=os.path.join(ROOT, "models"), TANDEM_THREADS="2")
    procs.append(subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1)
    port, native = free_port(), free_port()
    log = open(os.path.join(OUT, "driver.log"), "w")
    procs.append(subprocess.Popen([DRIVER, "--port", str(port), "--native-port", str(native)],
                                  env=env, stdout=log, stderr=log))
    base = f"http://127.0.0.1:{port}"
    wait_for("tauri-driver", lambda: _up(base), timeout=30, every=0.2)
    caps = {"capabilities": {"alwaysMatch": {"browserName": "wry", "tauri:options": {"application": APP}}}}
    sid = call("POST", f"{base}/session", caps)["sessionId"]
    s = f"{base}/session/{sid}"
    try:
        def js(script, *args):
            return call("POST", f"{s}/execute/sync", {"script": script, "args": list(args)})

        state = wait_for("the model to load", lambda: js(
            "const e=document.querySelector('#model-status');return e&&e.dataset.state!=='loading'?e.dataset.state+': '+e.textContent:null"))
        print("e2e: status", state)
        assert state.startswith("ready"), state

        el = call("POST", f"{s}/element", {"using": "css selector", "value": "#prompt"})
        eid = list(el.values())[0]
        call("POST", f"{s}/element/{eid}/value", {"text": "What is the capital of Germany?"})
        btn = list(call("POST", f"{s}/element", {"using": "css selector", "value": "#ask"}).values())[0]
        call("POST", f"{s}/element/{btn}/click", {})

        seen = []
        def progressed():
            t = js("const a=document.querySelector('.answer');return a?a.textContent:''") or ""
            if t and (not seen or seen[-1] != t):
                seen.append(t)
            return js("return document.querySelector('#metrics').textContent")
        metrics = wait_for("the answer to finish", progressed)
        final = seen[-1] if seen else ""
        print(f"e2e: answer {final!r}\ne2e: metrics {metrics}\ne2e: {len(seen)} distinct states seen while streaming")
        png = call("GET", f"{s}/screenshot")
        with open(os.path.join(OUT, "window.png"), "wb") as f:
            f.write(base64.b64decode(png))
        assert "berlin" in final.lower(), final
        assert len(seen) >= 3, f"the answer did not stream: {seen}"
        assert all(final.startswith(p) for p in seen[:-1]), "partial states are prefixes of the answer"
        print("e2e: ok, screenshot in", os.path.join(OUT, "window.png"))
    finally:
        try:
            call("DELETE", s)
        except Exception as e:  # the app must not be orphaned; report and go on
            print("e2e: deleting the session failed:", e)


def _up(base):
    try:
        urllib.request.urlopen(base + "/status", timeout=1)
        return True
    except Exception:
        return False


if __name__ == "__main__":
    try:
        main()
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
