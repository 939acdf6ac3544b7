//! Operator configuration: TOML file structs → validated, compiled [`Config`].
//!
//! SHARED CONTRACT (the admin API and WAF rely on these names; the proxy owner extends them):
//! `Config::{server, accounts, zones, api_keys, api_tokens}`, `Config::zone_by_id`,
//! `Config::account_by_id`, [`load_file`].

pub mod auth;

use std::net::SocketAddr;
use std::path::PathBuf;

/// `[server]`.
#[derive(Debug, Clone, Default)]
pub struct ServerConfig {
    /// Proxy listeners.
    pub listen: Vec<SocketAddr>,
    /// Admin API listener (`/client/v4`).
    pub admin_listen: Option<SocketAddr>,
    /// Worker threads of the proxy service.
    pub threads: usize,
    /// Tenant state store file.
    pub state_path: PathBuf,
}

/// Zone plan, as Cloudflare names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Plan {
    #[default]
    Free,
    Pro,
    Business,
    Enterprise,
}

impl Plan {
    /// `free`, `pro`, `business`, `enterprise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Pro => "pro",
            Plan::Business => "business",
            Plan::Enterprise => "enterprise",
        }
    }
}

/// `[[accounts]]`.
#[derive(Debug, Clone, Default)]
pub struct AccountConfig {
    /// 32 lowercase hex.
    pub id: String,
    pub name: String,
}

/// `[[zones]]`, validated and compiled.
#[derive(Debug, Clone, Default)]
pub struct ZoneConfig {
    /// 32 lowercase hex.
    pub id: String,
    /// Apex name, lowercase, e.g. `example.com` (serves its subdomains too).
    pub name: String,
    pub account_id: String,
    pub plan: Plan,
    /// Add an `escgate-esc` response header describing the ESC decision.
    pub debug_header: bool,
}

/// The validated, compiled operator configuration. Immutable once built; shared through
/// [`crate::state::Snapshot`].
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub server: ServerConfig,
    pub accounts: Vec<AccountConfig>,
    pub zones: Vec<ZoneConfig>,
    pub api_keys: Vec<auth::ApiKeyEntry>,
    pub api_tokens: Vec<auth::ApiTokenEntry>,
}

impl Config {
    /// The zone with this id.
    pub fn zone_by_id(&self, id: &str) -> Option<&ZoneConfig> {
        self.zones.iter().find(|z| z.id == id)
    }

    /// The account with this id.
    pub fn account_by_id(&self, id: &str) -> Option<&AccountConfig> {
        self.accounts.iter().find(|a| a.id == id)
    }
}

/// Every problem found in a config file, each naming its key path
/// (`zones[1].esc[0].redirect.status: 301 or 302 or 303 or 307 or 308 expected, got 300`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct ConfigErrors(pub Vec<String>);

/// Reads, validates and compiles a config file.
pub fn load_file(path: &std::path::Path) -> Result<Config, ConfigErrors> {
    Err(ConfigErrors(vec![format!(
        "{}: config loading not built yet",
        path.display()
    )]))
}
