//! `[[api_keys]]` and `[[api_tokens]]`: who may call the admin API, as written in the TOML file.
//!
//! SHARED CONTRACT: the config loader embeds these raw structs in the root file struct; the admin
//! module validates and compiles them into its credential index.

use serde::Deserialize;

/// Global-API-key style credential: `X-Auth-Email` + `X-Auth-Key`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyEntry {
    pub email: String,
    /// Lowercase hex SHA-256 of the key (`escgate hash-secret` prints it); the key itself is never stored.
    pub key_sha256: String,
    /// Account ids this key covers (and all their zones), or `["*"]` for every account.
    pub accounts: Vec<String>,
}

/// Bearer token credential: `Authorization: Bearer <token>`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ApiTokenEntry {
    /// Public token id (returned by `/user/tokens/verify`), 32 lowercase hex.
    pub id: String,
    /// Lowercase hex SHA-256 of the token.
    pub token_sha256: String,
    /// `esc:read`, `esc:edit`, `waf:read`, `waf:edit`, `zone:read`, `account:read`, `config:reload`.
    pub permissions: Vec<String>,
    /// Zone ids this token covers.
    #[serde(default)]
    pub zones: Vec<String>,
    /// Account ids this token covers (and all their zones); `"*"` for every account.
    #[serde(default)]
    pub accounts: Vec<String>,
}
