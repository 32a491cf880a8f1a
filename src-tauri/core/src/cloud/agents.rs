//! Agents (a model on a provider with a role, capabilities, price and context length), the
//! providers they run on, the default catalog merged with the user's `cloud.toml`, and the
//! picker that chooses the best available agent for a task's needs and budget.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CloudError, Wire};

/// The catalog shipped with Tandem.
const BUILTIN: &str = include_str!("catalog.toml");
/// The user's additions and overrides, inside the configuration directory.
pub const USER_FILE: &str = "cloud.toml";

/// Where a provider is and how to talk to it. Never holds a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub name: String,
    pub wire: Wire,
    pub base_url: String,
    /// Local servers (llama.cpp, Ollama, vLLM) may need no key.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub needs_key: bool,
    /// A cloud provider gets masked text only; a device the user owns may get private
    /// material (never the cloud's share of a task).
    #[serde(default, skip_serializing_if = "Trust::is_cloud")]
    pub trust: Trust,
}

/// Whom a provider belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Someone else's computer: sees masked text only; Pause cloud stops it.
    #[default]
    Cloud,
    /// An inference server the user owns (Ollama, llama.cpp's llama-server, vLLM) on this
    /// machine or the LAN: the router may send it private material the local model is too
    /// weak for; recorded in the ledger as a device transmission; Pause devices stops it.
    Device,
}

impl Trust {
    pub fn is_cloud(&self) -> bool {
        *self == Trust::Cloud
    }
}

impl std::str::FromStr for Trust {
    type Err = CloudError;
    fn from_str(s: &str) -> Result<Self, CloudError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cloud" => Ok(Trust::Cloud),
            "device" => Ok(Trust::Device),
            other => Err(CloudError::Config(format!(
                "unknown trust {other:?} (cloud or device)"
            ))),
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    Reasoning,
    Code,
    WebSearch,
    LongContext,
    Vision,
}

impl std::str::FromStr for Capability {
    type Err = CloudError;
    fn from_str(s: &str) -> Result<Self, CloudError> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "reasoning" => Ok(Capability::Reasoning),
            "code" => Ok(Capability::Code),
            "web_search" | "web" | "search" => Ok(Capability::WebSearch),
            "long_context" => Ok(Capability::LongContext),
            "vision" => Ok(Capability::Vision),
            other => Err(CloudError::Config(format!(
                "unknown capability {other:?} (reasoning, code, web_search, long_context, vision)"
            ))),
        }
    }
}

/// A named profile: which model on which provider, in which role, at what price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    pub name: String,
    pub provider: String,
    pub model: String,
    /// System prompt; empty means the catalog's `default_role`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    #[serde(default)]
    pub capabilities: BTreeSet<Capability>,
    /// USD per million input tokens.
    #[serde(default)]
    pub price_in: f64,
    /// USD per million output tokens.
    #[serde(default)]
    pub price_out: f64,
    /// Context length in tokens.
    #[serde(default = "default_context")]
    pub context: u64,
    /// 1-10, higher is better; breaks the choice between agents that all qualify.
    #[serde(default = "default_quality")]
    pub quality: u8,
}

fn default_context() -> u64 {
    32_768
}

fn default_quality() -> u8 {
    5
}

impl Agent {
    /// An agent with no role, capabilities or price, a 128k context and middle quality: what
    /// `tandem cloud add --model` creates before the user fills in more.
    pub fn new(name: &str, provider: &str, model: &str) -> Self {
        Self {
            name: name.into(),
            provider: provider.into(),
            model: model.into(),
            role: String::new(),
            capabilities: BTreeSet::new(),
            price_in: 0.0,
            price_out: 0.0,
            context: 128_000,
            quality: default_quality(),
        }
    }

    /// Estimated USD for a request of this size.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.price_in + output_tokens as f64 * self.price_out) / 1e6
    }
}

/// What a task needs from an agent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Needs {
    pub capabilities: BTreeSet<Capability>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Most the task may cost in USD; `None` means no limit.
    pub max_cost: Option<f64>,
}

/// The file shape of both the built-in catalog and the user's `cloud.toml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_role: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<Agent>,
}

impl CatalogFile {
    /// The user's file; a missing file is an empty one.
    pub fn read(path: &Path) -> Result<Self, CloudError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(CloudError::Config(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        };
        toml::from_str(&text)
            .map_err(|e| CloudError::Config(format!("{}: {}", path.display(), e.message())))
    }

    /// Writes atomically (temp file + rename) so an interrupted write loses nothing.
    pub fn write(&self, path: &Path) -> Result<(), CloudError> {
        let io =
            |e: std::io::Error| CloudError::Config(format!("cannot write {}: {e}", path.display()));
        let text = toml::to_string_pretty(self)
            .map_err(|e| CloudError::Config(format!("cannot encode the catalog: {e}")))?;
        crate::private_fs::write_private(path, text.as_bytes()).map_err(io)
    }

    /// Adds or replaces (by name) a provider.
    pub fn upsert_provider(&mut self, p: ProviderConfig) {
        self.providers.retain(|x| x.name != p.name);
        self.providers.push(p);
    }

    pub fn upsert_agent(&mut self, a: Agent) {
        self.agents.retain(|x| x.name != a.name);
        self.agents.push(a);
    }

    /// Removes a provider and the agents on it; whether anything was removed.
    pub fn remove_provider(&mut self, name: &str) -> bool {
        let before = self.providers.len() + self.agents.len();
        self.providers.retain(|p| p.name != name);
        self.agents.retain(|a| a.provider != name && a.name != name);
        before != self.providers.len() + self.agents.len()
    }
}

/// The merged catalog the hosts use.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    pub default_role: String,
    pub providers: Vec<ProviderConfig>,
    pub agents: Vec<Agent>,
}

/// `<config>/tandem/cloud.toml`.
/// Adds (or replaces) a provider, and an agent on it when given, in the user's catalog file
/// at `path`; refuses what the loader would refuse, so the file never becomes unloadable.
pub fn add_to_user_file(
    path: &Path,
    provider: ProviderConfig,
    agent: Option<Agent>,
) -> Result<(), CloudError> {
    crate::cloud::connect_provider(&provider)?;
    let mut file = CatalogFile::read(path)?;
    file.upsert_provider(provider);
    if let Some(a) = agent {
        file.upsert_agent(a);
    }
    Catalog::builtin().with_user(file.clone())?;
    file.write(path)
}

pub fn user_file() -> PathBuf {
    crate::config::config_dir().join(USER_FILE)
}

impl Catalog {
    pub fn builtin() -> Self {
        // The shipped file is checked by a unit test; a broken one would fail CI, not users.
        let file: CatalogFile = toml::from_str(BUILTIN).unwrap_or_default();
        Self::from_file(file)
    }

    fn from_file(file: CatalogFile) -> Self {
        Self {
            default_role: file.default_role.unwrap_or_default(),
            providers: file.providers,
            agents: file.agents,
        }
    }

    /// The built-in catalog with the user's entries added or replacing same-named ones.
    pub fn with_user(mut self, user: CatalogFile) -> Result<Self, CloudError> {
        if let Some(r) = user.default_role {
            self.default_role = r;
        }
        for p in user.providers {
            super::base_url_for(&p.base_url, p.trust)?;
            self.providers.retain(|x| x.name != p.name);
            self.providers.push(p);
        }
        for a in user.agents {
            self.agents.retain(|x| x.name != a.name);
            self.agents.push(a);
        }
        for a in &self.agents {
            if self.provider(&a.provider).is_none() {
                return Err(CloudError::Config(format!(
                    "agent {:?} uses provider {:?}, which is not configured",
                    a.name, a.provider
                )));
            }
        }
        Ok(self)
    }

    /// Built-in + `<config>/tandem/cloud.toml`.
    pub fn load() -> Result<Self, CloudError> {
        Self::builtin().with_user(CatalogFile::read(&user_file())?)
    }

    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name)
    }

    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Whether `agent` runs on one of the user's own devices.
    pub fn is_device(&self, agent: &Agent) -> bool {
        self.provider(&agent.provider)
            .is_some_and(|p| p.trust == Trust::Device)
    }

    /// The device agent private work may use: `named` when it is one, else the best-rated
    /// one whose provider `available` accepts.
    pub fn device(
        &self,
        named: Option<&str>,
        available: impl Fn(&ProviderConfig) -> bool,
    ) -> Option<&Agent> {
        let usable = |a: &&Agent| {
            self.provider(&a.provider)
                .is_some_and(|p| p.trust == Trust::Device && available(p))
        };
        if let Some(n) = named {
            return self.agent(n).filter(usable);
        }
        self.agents
            .iter()
            .filter(usable)
            .max_by(|a, b| a.quality.cmp(&b.quality).then(b.name.cmp(&a.name)))
    }

    /// The agent's system prompt.
    pub fn role_of<'a>(&'a self, agent: &'a Agent) -> &'a str {
        if agent.role.is_empty() {
            &self.default_role
        } else {
            &agent.role
        }
    }

    /// The best agent whose provider `available` accepts (a key is stored, it is not offline)
    /// that has every needed capability, a context long enough and a price within budget:
    /// highest quality first, then cheapest, then by name (stable choices).
    pub fn pick(
        &self,
        needs: &Needs,
        available: impl Fn(&ProviderConfig) -> bool,
    ) -> Result<&Agent, CloudError> {
        // The user's own devices are not cloud agents: they are chosen by `device`, for
        // private work only.
        let usable: Vec<&Agent> = self
            .agents
            .iter()
            .filter(|a| {
                self.provider(&a.provider)
                    .is_some_and(|p| p.trust == Trust::Cloud && available(p))
            })
            .collect();
        if usable.is_empty() {
            return Err(CloudError::NoAgent(
                "no cloud provider is available (store a key with `tandem keys set PROVIDER`)"
                    .into(),
            ));
        }
        let capable: Vec<&Agent> = usable
            .iter()
            .copied()
            .filter(|a| needs.capabilities.is_subset(&a.capabilities))
            .filter(|a| a.context >= needs.input_tokens + needs.output_tokens)
            .collect();
        if capable.is_empty() {
            let caps: Vec<String> = needs
                .capabilities
                .iter()
                .map(|c| format!("{c:?}").to_lowercase())
                .collect();
            return Err(CloudError::NoAgent(format!(
                "no available agent has [{}] and a context of {} tokens",
                caps.join(", "),
                needs.input_tokens + needs.output_tokens
            )));
        }
        let cost = |a: &Agent| a.cost(needs.input_tokens, needs.output_tokens);
        let affordable = capable
            .iter()
            .copied()
            .filter(|a| needs.max_cost.is_none_or(|max| cost(a) <= max));
        affordable
            .max_by(|a, b| {
                a.quality
                    .cmp(&b.quality)
                    .then(cost(b).total_cmp(&cost(a)))
                    .then(b.name.cmp(&a.name))
            })
            .ok_or_else(|| {
                let cheapest = capable.iter().map(|a| cost(a)).fold(f64::INFINITY, f64::min);
                CloudError::NoAgent(format!(
                    "the cheapest capable agent costs about ${cheapest:.4}, over the budget of ${:.4}",
                    needs.max_cost.unwrap_or(0.0)
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(c: &[Capability]) -> BTreeSet<Capability> {
        c.iter().copied().collect()
    }

    #[test]
    fn the_shipped_catalog_parses_and_is_consistent() {
        let file: CatalogFile = toml::from_str(BUILTIN).expect("catalog.toml parses");
        let c = Catalog::from_file(file)
            .with_user(CatalogFile::default())
            .unwrap();
        assert!(c.providers.len() >= 8 && c.agents.len() >= 10);
        assert!(c.providers.iter().any(|p| p.wire == Wire::Anthropic));
        assert!(!c.default_role.is_empty());
        for a in &c.agents {
            assert!(
                a.price_out >= a.price_in && a.context > 0 && (1..=10).contains(&a.quality),
                "{a:?}"
            );
        }
    }

    #[test]
    fn picks_by_capability_then_quality_then_price_within_budget() {
        let c = Catalog::builtin();
        let all = |_: &ProviderConfig| true;
        let search = Needs {
            capabilities: caps(&[Capability::WebSearch]),
            input_tokens: 2000,
            output_tokens: 500,
            max_cost: None,
        };
        assert_eq!(c.pick(&search, all).unwrap().name, "sonar-pro");
        let cheap = Needs {
            max_cost: Some(0.005),
            ..search.clone()
        };
        assert_eq!(c.pick(&cheap, all).unwrap().name, "sonar");
        let none = Needs {
            max_cost: Some(0.000_01),
            ..search
        };
        assert!(matches!(c.pick(&none, all), Err(CloudError::NoAgent(m)) if m.contains("budget")));
        // Only Anthropic has a key: the best reasoning agent there.
        let reasoning = Needs {
            capabilities: caps(&[Capability::Reasoning]),
            input_tokens: 1000,
            output_tokens: 1000,
            max_cost: None,
        };
        assert_eq!(
            c.pick(&reasoning, |p| p.name == "anthropic").unwrap().name,
            "claude-opus"
        );
        // A context longer than any Anthropic model allows moves to OpenAI's long-context ones.
        let long = Needs {
            input_tokens: 500_000,
            ..Needs::default()
        };
        assert_eq!(c.pick(&long, all).unwrap().name, "gpt-4.1");
        assert!(
            matches!(c.pick(&reasoning, |_| false), Err(CloudError::NoAgent(m)) if m.contains("keys set"))
        );
    }

    #[test]
    fn user_entries_replace_by_name_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cloud.toml");
        let mut user = CatalogFile::read(&path).unwrap();
        assert_eq!(user, CatalogFile::default());
        user.upsert_provider(ProviderConfig {
            name: "openai".into(),
            wire: Wire::Openai,
            base_url: "http://127.0.0.1:1/v1".into(),
            needs_key: true,
            trust: Default::default(),
        });
        user.upsert_agent(Agent {
            name: "mine".into(),
            provider: "openai".into(),
            model: "m".into(),
            role: String::new(),
            capabilities: caps(&[Capability::Code]),
            price_in: 0.0,
            price_out: 0.0,
            context: 8192,
            quality: 3,
        });
        user.write(&path).unwrap();
        let c = Catalog::builtin()
            .with_user(CatalogFile::read(&path).unwrap())
            .unwrap();
        assert_eq!(
            c.provider("openai").unwrap().base_url,
            "http://127.0.0.1:1/v1"
        );
        assert_eq!(c.agent("mine").unwrap().model, "m");
        assert_eq!(c.role_of(c.agent("mine").unwrap()), c.default_role);
        assert!(user.remove_provider("openai"));
        assert!(user.agents.is_empty());

        std::fs::write(
            &path,
            "[[agents]]\nname='x'\nprovider='nowhere'\nmodel='m'\n",
        )
        .unwrap();
        let err = Catalog::builtin()
            .with_user(CatalogFile::read(&path).unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("nowhere"), "{err}");
        std::fs::write(
            &path,
            "[[providers]]\nname='x'\nwire='grpc'\nbase_url='http://a'\n",
        )
        .unwrap();
        assert!(matches!(
            CatalogFile::read(&path),
            Err(CloudError::Config(_))
        ));
        std::fs::write(
            &path,
            "[[providers]]\nname='x'\nwire='openai'\nbase_url='ftp://a'\n",
        )
        .unwrap();
        assert!(Catalog::builtin()
            .with_user(CatalogFile::read(&path).unwrap())
            .is_err());
    }
}
