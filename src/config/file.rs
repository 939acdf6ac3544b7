//! The TOML file as written by the operator: plain serde structs that reject unknown keys.
//! [`super::compile`] turns them into the validated [`super::Config`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::auth::{ApiKeyEntry, ApiTokenEntry};

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub server: ServerFile,
    pub demo_origin: Option<DemoOriginFile>,
    #[serde(default)]
    pub accounts: Vec<AccountFile>,
    #[serde(default)]
    pub zones: Vec<ZoneFile>,
    #[serde(default)]
    pub api_keys: Vec<ApiKeyEntry>,
    #[serde(default)]
    pub api_tokens: Vec<ApiTokenEntry>,
}

/// One value or a list of them (`listen = "a"` or `listen = ["a", "b"]`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn as_slice(&self) -> &[String] {
        match self {
            OneOrMany::One(one) => std::slice::from_ref(one),
            OneOrMany::Many(many) => many,
        }
    }
}

/// `[server]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub listen: OneOrMany,
    pub admin_listen: Option<String>,
    pub threads: Option<usize>,
    pub state_path: Option<PathBuf>,
    pub grace_period_seconds: Option<u64>,
    pub graceful_shutdown_timeout_seconds: Option<u64>,
    pub upstream_keepalive_pool_size: Option<usize>,
    pub work_stealing: Option<bool>,
}

/// `[demo_origin]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoOriginFile {
    pub listen: String,
}

/// `[[accounts]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountFile {
    pub id: String,
    pub name: String,
}

/// `[[zones]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneFile {
    pub id: String,
    pub name: String,
    pub account_id: String,
    pub plan: Option<String>,
    pub origin: String,
    #[serde(default)]
    pub origin_tls: bool,
    pub origin_sni: Option<String>,
    pub origin_verify_cert: Option<bool>,
    pub origin_connect_timeout_ms: Option<u64>,
    pub origin_read_timeout_ms: Option<u64>,
    #[serde(default)]
    pub compression: bool,
    #[serde(default)]
    pub debug_header: bool,
    #[serde(default)]
    pub esc: Vec<EscFile>,
}

/// `[[zones.esc]]`: one customization entry; every action is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EscFile {
    pub description: Option<String>,
    pub when: Option<String>,
    pub request_headers: Option<HeaderEditsFile>,
    pub host_header: Option<String>,
    pub rewrite_uri: Option<RewriteUriFile>,
    pub redirect: Option<RedirectFile>,
    pub resolve_override: Option<String>,
    pub sni: Option<String>,
    pub feature_exceptions: Option<Vec<String>>,
    pub response_headers: Option<HeaderEditsFile>,
    pub add_cookies: Option<Vec<String>>,
    pub custom_error: Option<CustomErrorFile>,
    pub status_redirect: Option<StatusRedirectFile>,
}

/// `{ set = {..}, add = {..}, remove = [..] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderEditsFile {
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    #[serde(default)]
    pub add: BTreeMap<String, String>,
    #[serde(default)]
    pub remove: Vec<String>,
}

/// `{ path, query }` or `{ path_regex, path_replace, query }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewriteUriFile {
    pub path: Option<String>,
    pub query: Option<String>,
    pub path_regex: Option<String>,
    pub path_replace: Option<String>,
}

/// `{ to, status, preserve_query }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedirectFile {
    pub to: String,
    pub status: Option<u16>,
    #[serde(default)]
    pub preserve_query: bool,
}

/// `{ status = [..], content_type, body }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomErrorFile {
    pub status: Vec<u16>,
    pub content_type: Option<String>,
    pub body: String,
}

/// `{ status = [..], to, code }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusRedirectFile {
    pub status: Vec<u16>,
    pub to: String,
    pub code: Option<u16>,
}
