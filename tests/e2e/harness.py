"""Runs the real app under Xvfb and drives it over WebDriver (tauri-driver + WebKitWebDriver,
plain HTTP calls): shared by the window test (window.py) and the responsiveness benchmark
(bench/app_responsive.py). `Session` owns the processes and stops them on close."""
import base64, http.client, json, os, shutil, signal, socket, subprocess, tempfile, time, urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = shutil.which("tauri-driver") or os.path.expanduser("~/.cargo/bin/tauri-driver")


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


def cloud_toml(port):
    """One agent on the loopback provider (tests/e2e/loopback.py) at `port`."""
    return f'''[[providers]]
name = "lb"
wire = "openai"
base_url = "http://127.0.0.1:{port}/v1"

[[agents]]
name = "lb"
provider = "lb"
model = "echo"
capabilities = ["reasoning", "code"]
quality = 100
'''


class Session:
    """The app on its own Xvfb display with every data file in a fresh temporary folder.
    `data` is that folder; `env` the app's environment (for xdotool and helpers)."""

    def __init__(self, app, out, cloud=None, key=None, extra_env=None, session_bus=False):
        self.procs = []
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.data = tempfile.mkdtemp(prefix="tandem-e2e-")
        config = os.path.join(self.data, "config")
        os.makedirs(config)
        if cloud:
            with open(os.path.join(config, "cloud.toml"), "w") as f:
                f.write(cloud)
        display = f":{free_port() % 400 + 100}"
        d = self.data
        env = dict(os.environ, DISPLAY=display, TANDEM_MODELS_DIR=os.path.join(ROOT, "models"), TANDEM_MODEL="smollm2-135m-instruct", TANDEM_THREADS="2",
                   TANDEM_CONFIG_DIR=config, TANDEM_LEDGER=os.path.join(d, "ledger.sqlite3"),
                   TANDEM_CONVERSATIONS=os.path.join(d, "conv.sqlite3"), TANDEM_PREFS=os.path.join(d, "prefs.json"),
                   TANDEM_INDEX=os.path.join(d, "index.sqlite3"))
        if key:
            env["TANDEM_KEY_LB"] = key
        env.update(extra_env or {})
        # WebKitWebDriver's screenshots hang when the app turns accelerated compositing off (its
        # default on Linux, see src-tauri/src/main.rs); sessions turn it back on. The default
        # is covered by bench/app_startup.sh (the page runs and answers IPC) and app_memory.sh.
        env.setdefault("WEBKIT_DISABLE_COMPOSITING_MODE", "0")
        self.env = env
        try:
            if session_bus:
                self._bus()
            self._start(app, display, out)
        except BaseException:
            self.close()
            raise

    def _start(self, app, display, out):
        self.s = None
        self.spawn(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        port, native = free_port(), free_port()
        log = open(os.path.join(out, "driver.log"), "w")
        self.spawn([DRIVER, "--port", str(port), "--native-port", str(native)], stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        wait_for("tauri-driver", lambda: _up(base), timeout=30, every=0.2)
        caps = {"capabilities": {"alwaysMatch": {"browserName": "wry", "tauri:options": {"application": app}}}}
        self.sid = call("POST", f"{base}/session", caps)["sessionId"]
        self.s = f"{base}/session/{self.sid}"

    def _bus(self):
        """A private session bus without service activation (nothing is started on demand: no
        keyring daemon, no portal), so the app sees a desktop's bus and the tray host only."""
        conf = os.path.join(self.data, "session.conf")
        with open(conf, "w") as f:
            f.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>""")
        p = self.spawn(["dbus-daemon", f"--config-file={conf}", "--nofork", "--print-address=1"],
                       stdout=subprocess.PIPE, text=True)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = p.stdout.readline().strip()

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, env=getattr(self, "env", None), **kw)
        self.procs.append(p)
        return p

    def call(self, method, path, body=None, timeout=120):
        """A WebDriver call on this session: `path` is relative to /session/{id}/."""
        return call(method, f"{self.s}/{path}", body, timeout)

    def js(self, script, *args):
        return call("POST", f"{self.s}/execute/sync", {"script": script, "args": list(args)})

    def js_async(self, script, *args, timeout=120):
        """Runs `script` with a `done` callback as its last argument; returns what it passes."""
        return call("POST", f"{self.s}/execute/async", {"script": script, "args": list(args)}, timeout=timeout)

    def invoke(self, command, args=None, timeout=120):
        """Calls a shell command through the page's IPC; returns its JSON answer (or raises)."""
        r = self.js_async("const done=arguments[arguments.length-1];window.__TAURI_INTERNALS__.invoke(arguments[0],arguments[1])"
                          ".then(v=>done({ok:v}),e=>done({err:e}))", command, args or {}, timeout=timeout)
        if r is None or "err" in r:
            raise RuntimeError(f"{command}: {r and r['err']}")
        return r.get("ok")

    def unnamed_controls(self):
        """Form controls and tabs on the page without an accessible name (label, aria-label,
        aria-labelledby, title, a button's text or a placeholder): what a screen reader could
        not announce."""
        return self.js("""
const name = (e) => (e.getAttribute('aria-label') || (e.labels && e.labels.length && e.labels[0].textContent) ||
  (e.getAttribute('aria-labelledby') && document.getElementById(e.getAttribute('aria-labelledby'))?.textContent) ||
  e.getAttribute('title') || (e.tagName === 'BUTTON' ? e.textContent : '') || e.getAttribute('placeholder') || '').trim();
return [...document.querySelectorAll('input,select,textarea,button,[role=tab]')]
  .filter(e => e.offsetParent !== null && !name(e)).map(e => e.outerHTML.slice(0, 120));""")

    def element(self, css):
        return list(call("POST", f"{self.s}/element", {"using": "css selector", "value": css}).values())[0]

    def shot(self, name):
        with open(os.path.join(self.out, name), "wb") as f:
            f.write(base64.b64decode(call("GET", f"{self.s}/screenshot")))

    def wait_model(self):
        state = wait_for("the model to load", lambda: self.js(
            "const e=document.querySelector('#model-status');return e&&e.dataset.state!=='loading'?e.dataset.state+': '+e.textContent:null"))
        print("e2e: status", state)
        assert state.startswith("ready"), state
        return state

    def xdo(self, *a):
        subprocess.run(["xdotool", *a], env=self.env, check=True)

    def visible(self, name):
        return subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name], env=self.env,
                              capture_output=True).returncode == 0

    def close(self):
        try:
            if getattr(self, "s", None):
                call("DELETE", self.s, timeout=20)
        except Exception as e:  # the app must not be orphaned; report and go on
            print("e2e: deleting the session failed:", e)
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        # The session's ledger, conversations and index are test data, but data all the same:
        # they go with the session (TANDEM_E2E_KEEP=1 keeps them to debug a failure).
        if os.environ.get("TANDEM_E2E_KEEP") != "1":
            shutil.rmtree(self.data, ignore_errors=True)


def _up(base):
    try:
        urllib.request.urlopen(base + "/status", timeout=1)
        return True
    except Exception:
        return False
