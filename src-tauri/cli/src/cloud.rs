//! `tandem keys …` and `tandem cloud …`: thin translations between the terminal and
//! tandem-core's cloud, secrets and network modules.

use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal};

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use serde_json::json;
use tandem_core::cloud::agents::{
    self, Agent, Capability, Catalog, CatalogFile, ProviderConfig, Trust,
};
use tandem_core::cloud::{self, Wire};
use tandem_core::network::{MonitorConfig, NetworkMonitor, Target};
use tandem_core::pause::{self, PauseSwitch};
use tandem_core::secrets::{self, ApiKey, KeySource, Keys};

use crate::coded;

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Store a provider's API key in the OS keychain (typed without echo, or piped on stdin).
    Set { provider: String },
    /// Providers that have a key, and where it comes from (never the key itself).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider's key from the OS keychain.
    Delete { provider: String },
}

#[derive(Subcommand)]
pub enum CloudCommand {
    /// Providers and agents (built-in catalog + <config>/tandem/cloud.toml) and key status.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add or replace a provider in <config>/tandem/cloud.toml.
    Add {
        name: String,
        /// openai (Chat Completions and compatible servers) or anthropic (Messages API).
        #[arg(long)]
        wire: String,
        /// For example https://api.openai.com/v1 or http://127.0.0.1:8080/v1.
        #[arg(long)]
        base_url: String,
        /// Also add an agent that uses this model on the provider.
        #[arg(long)]
        model: Option<String>,
        /// The agent's name (default: the provider's name).
        #[arg(long, requires = "model")]
        agent: Option<String>,
        /// The agent's capabilities: reasoning, code, web_search, long_context, vision.
        #[arg(long, value_delimiter = ',', requires = "model")]
        capabilities: Vec<String>,
        /// The server needs no API key (a local llama.cpp, Ollama or vLLM server).
        #[arg(long)]
        no_key: bool,
        /// cloud (default: sees masked text only) or device (a server you own, on this
        /// machine or your LAN: it may answer private tasks the local model is too weak for;
        /// plain http allowed for loopback and private addresses, with a warning).
        #[arg(long, default_value = "cloud")]
        trust: String,
    },
    /// Remove a provider (and its agents) from <config>/tandem/cloud.toml.
    Remove { name: String },
    /// Pause cloud (for every host: the app, `tandem ask`, a running `tandem serve`).
    Pause {
        /// Pause your devices (`--trust device` providers) instead; Pause cloud does not stop them.
        #[arg(long)]
        devices: bool,
    },
    /// Resume: cloud providers (or, with --devices, your devices) may be used again.
    Resume {
        #[arg(long)]
        devices: bool,
    },
    /// Pause cloud's state; when not paused, probe the providers once and print online /
    /// degraded / offline with round-trip times (a paused Tandem does not probe).
    Status {
        #[arg(long)]
        json: bool,
    },
}

/// Opens the keychain off the async workers (D-Bus and friends block).
async fn keys() -> Result<Keys> {
    Ok(tokio::task::spawn_blocking(Keys::os).await?)
}

fn catalog() -> Result<Catalog> {
    Catalog::load().map_err(coded)
}

pub async fn keys_cmd(command: KeysCommand) -> Result<()> {
    let keys = keys().await?;
    match command {
        KeysCommand::Set { provider } => {
            secrets::check_provider_name(&provider).map_err(coded)?;
            if catalog()?.provider(&provider).is_none() {
                eprintln!("note: {provider} is not a configured provider yet (`tandem cloud add {provider} …`)");
            }
            let key = read_key(&provider)?;
            let store = keys.store().map_err(coded)?.clone();
            let p = provider.clone();
            tokio::task::spawn_blocking(move || store.set(&p, &key))
                .await?
                .map_err(coded)?;
            eprintln!("stored the key for {provider} in the OS keychain");
            Ok(())
        }
        KeysCommand::List { json } => {
            let catalog = catalog()?;
            let names: Vec<String> = catalog.providers.iter().map(|p| p.name.clone()).collect();
            let found = tokio::task::spawn_blocking(move || -> Result<Vec<(String, KeySource)>> {
                let mut out = Vec::new();
                for n in names {
                    if let Some((_, src)) = keys.get(&n).map_err(coded)? {
                        out.push((n, src));
                    }
                }
                Ok(out)
            })
            .await??;
            if json {
                let list: Vec<_> = found
                    .iter()
                    .map(|(n, s)| json!({"provider": n, "source": s}))
                    .collect();
                println!("{}", serde_json::to_string(&list)?);
            } else if found.is_empty() {
                println!("no keys stored (tandem keys set PROVIDER)");
            } else {
                for (n, s) in found {
                    let from = match s {
                        KeySource::Env => format!("environment ({})", secrets::env_var(&n)),
                        KeySource::Store => "OS keychain".to_string(),
                    };
                    println!("{n}\t{from}");
                }
            }
            Ok(())
        }
        KeysCommand::Delete { provider } => {
            secrets::check_provider_name(&provider).map_err(coded)?;
            let store = keys.store().map_err(coded)?.clone();
            let p = provider.clone();
            let had = tokio::task::spawn_blocking(move || store.delete(&p))
                .await?
                .map_err(coded)?;
            if had {
                eprintln!("deleted the key for {provider}");
            } else {
                eprintln!("no key was stored for {provider}");
            }
            Ok(())
        }
    }
}

/// From the terminal without echo, else the first line of stdin.
fn read_key(provider: &str) -> Result<ApiKey> {
    let raw = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("API key for {provider} (input hidden): "))
            .context("cannot read the key from the terminal")?
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("cannot read the key from stdin")?;
        line
    };
    ApiKey::new(&raw).map_err(coded)
}

pub async fn cloud_cmd(command: CloudCommand) -> Result<()> {
    let path = cloud::agents::user_file();
    match command {
        CloudCommand::List { json } => {
            let catalog = catalog()?;
            let keys = keys().await?;
            let c = catalog.clone();
            let with_key: BTreeSet<String> = tokio::task::spawn_blocking(move || {
                c.providers
                    .iter()
                    .filter(|p| matches!(keys.get(&p.name), Ok(Some(_))))
                    .map(|p| p.name.clone())
                    .collect()
            })
            .await?;
            if json {
                let providers: Vec<_> = catalog
                    .providers
                    .iter()
                    .map(|p| {
                        json!({"name": p.name, "wire": p.wire, "base_url": p.base_url,
                        "needs_key": p.needs_key, "has_key": with_key.contains(&p.name)})
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string(
                        &json!({"providers": providers, "agents": catalog.agents})
                    )?
                );
                return Ok(());
            }
            println!("providers ({}):", path.display());
            for p in &catalog.providers {
                let key = if !p.needs_key {
                    "no key needed"
                } else if with_key.contains(&p.name) {
                    "key stored"
                } else {
                    "no key"
                };
                println!(
                    "  {:<12} {:<9} {:<40} {key}",
                    p.name,
                    format!("{:?}", p.wire).to_lowercase(),
                    p.base_url
                );
            }
            println!("agents:");
            for a in &catalog.agents {
                let caps: Vec<String> = a
                    .capabilities
                    .iter()
                    .map(|c| format!("{c:?}").to_lowercase())
                    .collect();
                println!(
                    "  {:<24} {:<11} {:<34} ${}/${} per Mtok, {}k ctx, q{} [{}]",
                    a.name,
                    a.provider,
                    a.model,
                    a.price_in,
                    a.price_out,
                    a.context / 1000,
                    a.quality,
                    caps.join(",")
                );
            }
            Ok(())
        }
        CloudCommand::Add {
            name,
            wire,
            base_url,
            model,
            agent,
            capabilities,
            no_key,
            trust,
        } => {
            secrets::check_provider_name(&name).map_err(coded)?;
            let wire: Wire = wire.parse().map_err(coded)?;
            let trust: Trust = trust.parse().map_err(coded)?;
            if trust == Trust::Device {
                if let Some(w) = tandem_core::cloud::plain_http_warning(&base_url) {
                    eprintln!("warning: {w}");
                }
            }
            let provider = ProviderConfig {
                name: name.clone(),
                wire,
                base_url,
                needs_key: !no_key,
                trust,
            };
            let agent = match model {
                Some(model) => {
                    let capabilities = capabilities
                        .iter()
                        .map(|c| c.parse::<Capability>())
                        .collect::<Result<_, _>>()
                        .map_err(coded)?;
                    let agent_name = agent.unwrap_or_else(|| name.clone());
                    let agent = Agent {
                        capabilities,
                        ..Agent::new(&agent_name, &name, &model)
                    };
                    eprintln!("agent {} → {} on {name}", agent.name, agent.model);
                    Some(agent)
                }
                None => None,
            };
            agents::add_to_user_file(&path, provider, agent).map_err(coded)?;
            eprintln!("saved {name} to {}", path.display());
            if !no_key {
                eprintln!("next: tandem keys set {name}");
            }
            Ok(())
        }
        CloudCommand::Remove { name } => {
            let mut file = CatalogFile::read(&path).map_err(coded)?;
            if !file.remove_provider(&name) {
                bail!(
                    "{name} is not in {} (built-in providers cannot be removed)",
                    path.display()
                );
            }
            file.write(&path).map_err(coded)?;
            eprintln!("removed {name}");
            Ok(())
        }
        CloudCommand::Pause { devices: false } => set_pause(true),
        CloudCommand::Resume { devices: false } => set_pause(false),
        CloudCommand::Pause { devices: true } => set_device_pause(true),
        CloudCommand::Resume { devices: true } => set_device_pause(false),
        CloudCommand::Status { json } if PauseSwitch::shared().is_paused() => {
            if json {
                println!("{}", json!({"paused": true, "probed": false}));
            } else {
                println!("Pause cloud: on (providers are not probed; tandem cloud resume)");
            }
            Ok(())
        }
        CloudCommand::Status { json } => {
            let catalog = catalog()?;
            let targets: Vec<Target> = catalog
                .providers
                .iter()
                .filter_map(|p| cloud::connect_provider(p).ok())
                .map(|c| Target {
                    provider: c.name().to_string(),
                    url: c.base().clone(),
                })
                .collect();
            let status = NetworkMonitor::check(&targets, &MonitorConfig::default()).await;
            if json {
                let mut v = serde_json::to_value(&status)?;
                if let Some(o) = v.as_object_mut() {
                    o.insert("paused".into(), json!(false));
                    o.insert("probed".into(), json!(true));
                }
                println!("{v}");
            } else {
                println!("Pause cloud: off");
                println!("network: {:?}", status.state);
                for p in &status.providers {
                    let rtt = p
                        .rtt_ms
                        .map(|r| format!("{r:.0} ms"))
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "  {:<12} {:<9} {rtt:>8}  {}",
                        p.provider,
                        format!("{:?}", p.state).to_lowercase(),
                        p.last_error.as_deref().unwrap_or("")
                    );
                }
            }
            Ok(())
        }
    }
}

/// `tandem cloud pause` / `resume`: throws the switch every host reads.
fn set_device_pause(on: bool) -> Result<()> {
    let switch = PauseSwitch::devices();
    switch.set(on).with_context(|| {
        format!(
            "cannot switch Pause devices ({})",
            pause::devices_path().display()
        )
    })?;
    eprintln!(
        "{}",
        if on {
            "Pause devices is on: nothing is sent to your devices (every host)"
        } else {
            "Pause devices is off: your devices may answer private tasks"
        }
    );
    Ok(())
}

fn set_pause(on: bool) -> Result<()> {
    let switch = PauseSwitch::shared();
    switch.set(on).with_context(|| {
        format!(
            "cannot switch Pause cloud ({})",
            pause::default_path().display()
        )
    })?;
    eprintln!(
        "{}",
        if on {
            "Pause cloud is on: nothing is sent to cloud providers (every host)"
        } else {
            "Pause cloud is off: cloud providers may be used"
        }
    );
    Ok(())
}
