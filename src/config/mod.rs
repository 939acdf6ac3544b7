//! Operator configuration: TOML file structs → validated, compiled [`Config`].
//!
//! SHARED CONTRACT (the admin API and WAF rely on these names; the proxy owner extends them):
//! `Config::{server, accounts, zones, api_keys, api_tokens}`, `Config::zone_by_id`,
//! `Config::account_by_id`, [`load_file`].

pub mod auth;
mod compile;
pub mod file;
mod reload;
pub mod upstream;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub use reload::reload;
use upstream::UpstreamTable;

/// Config file used when `--config` is not given.
pub const DEFAULT_CONFIG_PATH: &str = "config/escgate.toml";
/// `server.threads` default: one worker per proxy service.
pub const DEFAULT_THREADS: usize = 1;
/// `server.state_path` default.
pub const DEFAULT_STATE_PATH: &str = "var/state.json";
/// `server.grace_period_seconds` default (pingora's own default is 300).
pub const DEFAULT_GRACE_PERIOD_SECONDS: u64 = 10;
/// `server.graceful_shutdown_timeout_seconds` default.
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_SECONDS: u64 = 5;
/// `server.upstream_keepalive_pool_size` default: idle origin connections kept for reuse.
pub const DEFAULT_UPSTREAM_KEEPALIVE_POOL_SIZE: usize = 1024;
/// `zones.origin_connect_timeout_ms` default.
pub const DEFAULT_ORIGIN_CONNECT_TIMEOUT_MS: u64 = 5_000;
/// `zones.origin_read_timeout_ms` default; an origin slower than this is answered with 504.
pub const DEFAULT_ORIGIN_READ_TIMEOUT_MS: u64 = 30_000;

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
    /// Seconds pingora keeps serving after SIGTERM before it stops accepting work.
    pub grace_period_seconds: u64,
    /// Seconds pingora waits for its runtimes to finish at shutdown.
    pub graceful_shutdown_timeout_seconds: u64,
    /// Idle origin connections kept for reuse (pingora's pool).
    pub upstream_keepalive_pool_size: usize,
    /// Let idle worker threads steal tasks (pingora's `work_stealing`).
    pub work_stealing: bool,
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
    /// `origin` as written (`host:port`), resolved at load into [`Self::upstreams`].
    pub origin: String,
    /// Connect to the origin over TLS.
    pub origin_tls: bool,
    /// SNI sent to a TLS origin unless an ESC `sni` overrides it (default: the zone name).
    pub origin_sni: String,
    /// Compress responses (gzip, brotli, zstd as the client accepts) unless an ESC
    /// `feature_exceptions` entry says `compression`.
    pub compression: bool,
    /// ESC customizations, in config order.
    pub esc: Vec<crate::esc::EscEntry>,
    /// Ready origin peers for every address/SNI the entries can select.
    pub upstreams: UpstreamTable,
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
    /// `[demo_origin] listen`: the built-in echo origin, when configured.
    pub demo_origin: Option<SocketAddr>,
    /// Host → index into [`Self::zones`].
    pub zone_index: crate::zones::ZoneIndex,
}

impl Config {
    /// The zone with this id.
    pub fn zone_by_id(&self, id: &str) -> Option<&ZoneConfig> {
        self.zones.iter().find(|z| z.id == id)
    }

    /// The zone serving `host` (Host header text; case and port ignored).
    pub fn zone_for_host(&self, host: &str) -> Option<&ZoneConfig> {
        let index = self.zone_index.lookup(host)?;
        self.zones.get(index as usize)
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
pub fn load_file(path: &Path) -> Result<Config, ConfigErrors> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigErrors(vec![format!("{}: {e}", path.display())]))?;
    load_str(&text)
}

/// Validates and compiles config text (TOML).
pub fn load_str(text: &str) -> Result<Config, ConfigErrors> {
    crate::memory::releasing_transient(|| compile::compile(parse_apart(text)?))
}

/// Parses `text` on a short-lived thread. The TOML document peaks at several times the size of
/// the compiled config (about 100 MiB for 10,000 zones); glibc gives that thread its own arena,
/// so the peak is not interleaved with the long-lived compiled config and goes back to the OS
/// once freed (measured: RSS with 10,000 zones 118 MiB before, see the README's Performance).
fn parse_apart(text: &str) -> Result<file::FileConfig, ConfigErrors> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("config-parse".into())
            .spawn_scoped(scope, || parse(text))
        {
            Ok(parsing) => parsing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => parse(text),
        }
    })
}

fn parse(text: &str) -> Result<file::FileConfig, ConfigErrors> {
    toml::from_str(text).map_err(|e| ConfigErrors(vec![e.to_string().trim().to_string()]))
}

#[cfg(test)]
mod tests;
