//! Two providers of different wire formats configured from the CLI, keys in a real Secret
//! Service (a private D-Bus session + gnome-keyring, unlocked with a test password), and a
//! streamed answer through each from the loopback provider, which records what it received.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tandem_core::cloud::loopback::Loopback;

const KEY: &str = "sk-loopback-cli-9f8e7d6c5b4a";

/// A Secret Service of our own: a D-Bus session bus without service activation (so no locked
/// keyring is auto-started) and gnome-keyring-daemon in the foreground, owned by the test.
pub(super) struct Keychain {
    dir: PathBuf,
    bus: Child,
    keyring: Option<Child>,
    address: String,
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Keychain {
    pub(super) fn start(dir: &Path) -> Option<Self> {
        if !have("dbus-daemon") || !have("gnome-keyring-daemon") {
            assert!(
                std::env::var_os("TANDEM_REQUIRE_KEYCHAIN").is_none(),
                "TANDEM_REQUIRE_KEYCHAIN is set but dbus-daemon or gnome-keyring-daemon is missing"
            );
            eprintln!("skipping the Secret Service test: install dbus-daemon and gnome-keyring");
            return None;
        }
        let dir = dir.to_path_buf();
        for d in ["data", "run", "home"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let socket = dir.join("bus");
        let conf = dir.join("session.conf");
        std::fs::write(
            &conf,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>"#,
                socket.display()
            ),
        )
        .unwrap();
        let bus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", conf.display()))
            .arg("--nofork")
            .stdout(Stdio::null())
            // It warns that it cannot raise its file limit when not run by root's session.
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while !socket.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "dbus-daemon did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut k = Self {
            address: format!("unix:path={}", socket.display()),
            dir,
            bus,
            keyring: None,
        };
        k.start_keyring();
        Some(k)
    }

    pub(super) fn env(&self, c: &mut Command) {
        c.env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env("XDG_RUNTIME_DIR", self.dir.join("run"))
            .env("HOME", self.dir.join("home"));
    }

    /// Starts (or restarts) the keyring daemon on the same files; it unlocks the login keyring
    /// with the password on stdin and prints its environment once it serves.
    fn start_keyring(&mut self) {
        let mut c = Command::new("gnome-keyring-daemon");
        c.args(["--foreground", "--unlock", "--components=secrets"]);
        self.env(&mut c);
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"tandem-test-password").unwrap();
        drop(stdin);
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        self.keyring = Some(child);
    }

    fn stop_keyring(&mut self) {
        if let Some(mut c) = self.keyring.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Keychain {
    fn drop(&mut self) {
        self.stop_keyring();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}

struct Env<'a> {
    keychain: &'a Keychain,
    config: PathBuf,
}

impl Env<'_> {
    fn run(&self, args: &[&str], stdin: &str, extra: &[(&str, &str)]) -> Output {
        let mut c = super::tandem();
        self.keychain.env(&mut c);
        c.env("TANDEM_CONFIG_DIR", &self.config)
            .env("TANDEM_NER", "off")
            .env_remove("TANDEM_KEY_LB_OPENAI")
            .env_remove("TANDEM_KEY_LB_ANTHROPIC")
            .envs(extra.iter().copied())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    fn ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.run(args, stdin, &[]);
        assert!(
            out.status.success(),
            "tandem {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

#[test]
fn two_providers_from_the_cli_with_keys_in_the_secret_service() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut keychain) = Keychain::start(tmp.path()) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lb = rt.block_on(Loopback::start(KEY)).unwrap();
    let config = tmp.path().join("config");
    let env = Env {
        keychain: &keychain,
        config: config.clone(),
    };
    let base = lb.base_url();

    env.ok(
        &[
            "cloud",
            "add",
            "lb-openai",
            "--wire",
            "openai",
            "--base-url",
            &base,
            "--model",
            "echo",
        ],
        "",
    );
    env.ok(
        &[
            "cloud",
            "add",
            "lb-anthropic",
            "--wire",
            "anthropic",
            "--base-url",
            &base,
            "--model",
            "echo",
            "--capabilities",
            "reasoning,code",
        ],
        "",
    );
    let file = std::fs::read_to_string(tmp.path().join("config/cloud.toml")).unwrap();
    assert!(
        file.contains("lb-anthropic") && !file.contains(KEY),
        "{file}"
    );
    let bad = env.run(
        &["cloud", "add", "x", "--wire", "grpc", "--base-url", &base],
        "",
        &[],
    );
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("cloud.config"));

    // The keychain may need a moment after the daemon printed its environment.
    let t = Instant::now();
    loop {
        let out = env.run(&["keys", "set", "lb-openai"], &format!("{KEY}\n"), &[]);
        if out.status.success() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "keys set: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    env.ok(&["keys", "set", "lb-anthropic"], &format!("  {KEY}\n"));

    // Persisted by the keyring daemon, not the process that stored them: restart the daemon.
    keychain.stop_keyring();
    keychain.start_keyring();
    let env = Env {
        keychain: &keychain,
        config,
    };
    let t = Instant::now();
    let listed = loop {
        let out = env.run(&["keys", "list", "--json"], "", &[]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if out.status.success() && text.contains("lb-anthropic") {
            break text;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "keys list: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let v: serde_json::Value = serde_json::from_str(listed.trim()).unwrap();
    for p in ["lb-openai", "lb-anthropic"] {
        assert!(
            v.as_array()
                .unwrap()
                .iter()
                .any(|e| e["provider"] == p && e["source"] == "store"),
            "{v}"
        );
    }
    assert!(!listed.contains(KEY));

    // A streamed answer through each; the provider saw the address masked, the user sees it back.
    let question = "Please write to ada.lovelace@posteo.de about the meeting";
    for agent in ["lb-openai", "lb-anthropic"] {
        let out = env.run(
            &["ask", "--agent", agent, "--json", "--explain", question],
            "",
            &[],
        );
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success() && err.contains("route: split (mask)"),
            "{err}"
        );
        let out = String::from_utf8(out.stdout).unwrap();
        let last = out.lines().last().unwrap();
        let v: serde_json::Value = serde_json::from_str(last).unwrap();
        assert_eq!(v["provider"], agent);
        assert_eq!(v["text"], question, "{out}");
        assert_eq!(v["masked"], 1);
        let sent = lb.received().last().unwrap().to_string();
        assert!(
            !sent.contains("ada.lovelace@posteo.de") && sent.contains("[EMAIL"),
            "{sent}"
        );
    }
    assert_eq!(lb.received().len(), 2, "one request per answer");

    // Public and too hard for the small local model: the cloud, on the best agent with a key
    // for reasoning (built-in agents have no key here).
    let out = env.run(
        &[
            "ask",
            "--cloud",
            "--needs",
            "reasoning",
            "--json",
            "--explain",
            "hello there",
        ],
        "",
        &[],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(err.contains("route: cloud"), "{err}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .contains("\"provider\":\"lb-anthropic\""),
        "{stdout}"
    );
    // A wholly private question stays on the device: the real local model answers.
    let before = lb.received().len();
    let out = env.run(
        &[
            "ask",
            "--json",
            "--explain",
            "--max-tokens",
            "8",
            "I was diagnosed with HIV last week and I am scared.",
        ],
        "",
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("route: local"),
        "{err}"
    );
    assert_eq!(lb.received().len(), before, "nothing left the device");

    // A wrong key (from the opt-in environment variable) is named, never shown, and the local
    // model answers instead.
    let out = env.run(
        &["ask", "--agent", "lb-anthropic", "--json", "hi"],
        "",
        &[("TANDEM_KEY_LB_ANTHROPIC", "sk-wrong-1234")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && err.contains("key rejected by lb-anthropic")
            && !err.contains("sk-wrong"),
        "{err}"
    );
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["fell_back"], true);

    env.ok(&["keys", "delete", "lb-openai"], "");
    let out = env.run(&["ask", "--agent", "lb-openai", "hi"], "", &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("tandem keys set lb-openai"));
    // Every request that left is in the ledger, with the payload exactly as sent.
    let ledger = env.ok(&["ledger", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4, "{v}");
    let text = env.ok(&["ledger"], "");
    assert!(
        text.contains("sent 4 request(s)") && text.contains("local runs"),
        "{text}"
    );
    assert!(entries
        .iter()
        .all(|e| !e["payload"].as_str().unwrap_or("").contains("posteo")));
    assert_eq!(
        entries.iter().filter(|e| e["status"] == "failed").count(),
        1,
        "the rejected key"
    );
    drop(rt);
}

#[test]
fn without_a_keychain_keys_set_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = super::tandem();
    c.env(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}/none", tmp.path().display()),
    )
    .env("XDG_RUNTIME_DIR", tmp.path())
    .env("TANDEM_CONFIG_DIR", tmp.path())
    .args(["keys", "set", "openai"])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"sk-x\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("secrets.unavailable") && err.contains("TANDEM_KEY_"),
        "{err}"
    );
}
