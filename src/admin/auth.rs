//! Who is calling: credential headers → [`Caller`], checked against the config's `[[api_keys]]`
//! and `[[api_tokens]]` compiled once per config version into a [`CredentialIndex`].
//!
//! Keys and tokens are never stored or logged: the config holds their SHA-256, a presented
//! secret is hashed and compared with every configured digest in constant time (no early exit,
//! so timing does not say which entry, if any, came close).

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};

use super::codes;
use super::envelope::{ApiError, ErrorItem};
use crate::config::auth::{ApiKeyEntry, ApiTokenEntry};
use crate::config::{Config, ZoneConfig};

/// One permission a token can hold. A Global-API-key caller holds all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// `GET .../disable_esc`.
    EscRead,
    /// `POST`/`DELETE .../disable_esc` (implies `esc:read`).
    EscEdit,
    /// `GET` on WAF routes.
    WafRead,
    /// Writes on WAF routes (implies `waf:read`).
    WafEdit,
    /// `GET /zones`, `GET /zones/{id}`.
    ZoneRead,
    /// `GET /accounts`, `GET /accounts/{id}`.
    AccountRead,
    /// `POST /escgate/reload`.
    ConfigReload,
}

impl Permission {
    /// Every permission, in documentation order.
    pub const ALL: [Permission; 7] = [
        Permission::EscRead,
        Permission::EscEdit,
        Permission::WafRead,
        Permission::WafEdit,
        Permission::ZoneRead,
        Permission::AccountRead,
        Permission::ConfigReload,
    ];

    /// The config spelling: `esc:read`, `esc:edit`, `waf:read`, `waf:edit`, `zone:read`,
    /// `account:read`, `config:reload`.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::EscRead => "esc:read",
            Permission::EscEdit => "esc:edit",
            Permission::WafRead => "waf:read",
            Permission::WafEdit => "waf:edit",
            Permission::ZoneRead => "zone:read",
            Permission::AccountRead => "account:read",
            Permission::ConfigReload => "config:reload",
        }
    }

    /// Parses the config spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The permissions this one grants (edit implies read).
    fn grants(self) -> u8 {
        match self {
            Permission::EscEdit => self.bit() | Permission::EscRead.bit(),
            Permission::WafEdit => self.bit() | Permission::WafRead.bit(),
            other => other.bit(),
        }
    }
}

/// Accounts a credential covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountScope {
    /// `["*"]`: every account, and node-wide operations.
    All,
    /// These account ids (and all their zones).
    Listed(HashSet<String>),
}

impl AccountScope {
    fn from_list(list: &[String]) -> Self {
        if list.iter().any(|a| a == "*") {
            AccountScope::All
        } else {
            AccountScope::Listed(list.iter().cloned().collect())
        }
    }

    fn covers(&self, account_id: &str) -> bool {
        match self {
            AccountScope::All => true,
            AccountScope::Listed(ids) => ids.contains(account_id),
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token id, or the key's email.
    pub id: String,
    /// True for a bearer token, false for a Global API key.
    pub is_token: bool,
    permissions: u8,
    accounts: AccountScope,
    zones: HashSet<String>,
}

impl Caller {
    /// Whether the caller may perform operations needing `permission`.
    pub fn can(&self, permission: Permission) -> bool {
        self.permissions & permission.bit() != 0
    }

    /// Whether `zone` is in scope: named directly, or its account is covered.
    pub fn covers_zone(&self, zone: &ZoneConfig) -> bool {
        self.zones.contains(&zone.id) || self.accounts.covers(&zone.account_id)
    }

    /// Whether the account is in scope (a zone grant does not cover its account).
    pub fn covers_account(&self, account_id: &str) -> bool {
        self.accounts.covers(account_id)
    }

    /// Node-wide operations (reload) need `config:reload` and, for a key, `accounts = ["*"]`.
    pub fn can_reload(&self) -> bool {
        self.can(Permission::ConfigReload) && (self.is_token || self.accounts == AccountScope::All)
    }

    /// The permission names held, for the `permissions` field of discovery objects.
    pub fn permission_names(&self) -> Vec<&'static str> {
        Permission::ALL
            .into_iter()
            .filter(|p| self.can(*p))
            .map(Permission::as_str)
            .collect()
    }
}

#[derive(Debug)]
struct KeyCredential {
    email: String,
    digest: [u8; 32],
    caller: Caller,
}

#[derive(Debug)]
struct TokenCredential {
    digest: [u8; 32],
    caller: Caller,
}

/// The compiled credentials of one config version.
#[derive(Debug, Default)]
pub struct CredentialIndex {
    keys: Vec<KeyCredential>,
    tokens: Vec<TokenCredential>,
}

/// Every problem of the `[[api_keys]]`/`[[api_tokens]]` entries, naming the key path. The config
/// loader calls this so a bad entry rejects the file; [`CredentialIndex::compile`] skips bad
/// entries (they can never match) rather than failing a running server.
pub fn validate_entries(keys: &[ApiKeyEntry], tokens: &[ApiTokenEntry]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if !valid_email(&key.email) {
            problems.push(format!(
                "api_keys[{i}].email: an address like ops@example.com expected, got {:?}",
                key.email
            ));
        }
        if parse_digest(&key.key_sha256).is_none() {
            problems.push(format!("api_keys[{i}].key_sha256: 64 lowercase hex expected (`escgate hash-secret` prints it)"));
        }
        if key.accounts.is_empty() {
            problems.push(format!(
                "api_keys[{i}].accounts: at least one account id or \"*\" expected"
            ));
        }
    }
    for (i, token) in tokens.iter().enumerate() {
        if token.id.len() != 32
            || !token
                .id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            problems.push(format!(
                "api_tokens[{i}].id: 32 lowercase hex expected, got {:?}",
                token.id
            ));
        }
        if parse_digest(&token.token_sha256).is_none() {
            problems.push(format!("api_tokens[{i}].token_sha256: 64 lowercase hex expected (`escgate hash-secret` prints it)"));
        }
        for (j, p) in token.permissions.iter().enumerate() {
            if Permission::parse(p).is_none() {
                problems.push(format!(
                    "api_tokens[{i}].permissions[{j}]: one of {} expected, got {p:?}",
                    Permission::ALL.map(Permission::as_str).join(", ")
                ));
            }
        }
        if token.zones.is_empty() && token.accounts.is_empty() {
            problems.push(format!(
                "api_tokens[{i}]: zones or accounts must name at least one id"
            ));
        }
    }
    problems
}

fn parse_digest(text: &str) -> Option<[u8; 32]> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut digest = [0u8; 32];
    hex::decode_to_slice(text, &mut digest).ok()?;
    Some(digest)
}

/// SHA-256 of a secret, lowercase hex: what `key_sha256`/`token_sha256` hold.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

impl CredentialIndex {
    /// Compiles the credentials of `config`; invalid entries are left out.
    pub fn compile(config: &Config) -> Self {
        let all_permissions = Permission::ALL.iter().fold(0, |bits, p| bits | p.grants());
        let keys = config
            .api_keys
            .iter()
            .filter_map(|key| {
                Some(KeyCredential {
                    email: key.email.to_ascii_lowercase(),
                    digest: parse_digest(&key.key_sha256)?,
                    caller: Caller {
                        id: key.email.clone(),
                        is_token: false,
                        permissions: all_permissions,
                        accounts: AccountScope::from_list(&key.accounts),
                        zones: HashSet::new(),
                    },
                })
            })
            .collect();
        let tokens = config
            .api_tokens
            .iter()
            .filter_map(|token| {
                let permissions = token
                    .permissions
                    .iter()
                    .filter_map(|p| Permission::parse(p))
                    .fold(0, |bits, p| bits | p.grants());
                Some(TokenCredential {
                    digest: parse_digest(&token.token_sha256)?,
                    caller: Caller {
                        id: token.id.clone(),
                        is_token: true,
                        permissions,
                        accounts: AccountScope::from_list(&token.accounts),
                        zones: token.zones.iter().cloned().collect(),
                    },
                })
            })
            .collect();
        CredentialIndex { keys, tokens }
    }

    /// Authenticates a request from its headers. `Authorization` wins when present; otherwise
    /// both `X-Auth-Email` and `X-Auth-Key` are needed.
    pub fn authenticate(&self, headers: &http::HeaderMap) -> Result<Caller, ApiError> {
        if let Some(value) = headers.get(http::header::AUTHORIZATION) {
            let token = bearer_token(value.as_bytes()).ok_or_else(|| {
                invalid_headers(vec![ErrorItem::new(
                    codes::INVALID_AUTHORIZATION_HEADER,
                    "Invalid format for Authorization header",
                )])
            })?;
            return self.find_token(token);
        }
        let email = headers.get("x-auth-email");
        let key = headers.get("x-auth-key");
        let (Some(email), Some(key)) = (email, key) else {
            return Err(ApiError::bad_request(
                codes::MISSING_CREDENTIALS,
                "Missing X-Auth-Key, X-Auth-Email or Authorization headers",
            ));
        };
        let email = email.to_str().ok().filter(|e| valid_email(e));
        let key = key.to_str().ok().filter(|k| valid_key(k));
        let mut chain = Vec::new();
        if key.is_none() {
            chain.push(ErrorItem::new(
                codes::INVALID_KEY_HEADER,
                "Invalid format for X-Auth-Key header",
            ));
        }
        if email.is_none() {
            chain.push(ErrorItem::new(
                codes::INVALID_EMAIL_HEADER,
                "Invalid format for X-Auth-Email header",
            ));
        }
        match (email, key) {
            (Some(email), Some(key)) => self.find_key(email, key),
            _ => Err(invalid_headers(chain)),
        }
    }

    fn find_token(&self, token: &str) -> Result<Caller, ApiError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found: Option<&Caller> = None;
        for candidate in &self.tokens {
            if bool::from(candidate.digest.ct_eq(&digest)) {
                found = Some(&candidate.caller);
            }
        }
        found
            .cloned()
            .ok_or_else(|| ApiError::new(403, codes::INVALID_TOKEN, "Invalid access token"))
    }

    fn find_key(&self, email: &str, key: &str) -> Result<Caller, ApiError> {
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let email = email.to_ascii_lowercase();
        let mut found: Option<&Caller> = None;
        for candidate in &self.keys {
            let matches: Choice =
                candidate.digest.ct_eq(&digest) & Choice::from(u8::from(candidate.email == email));
            if bool::from(matches) {
                found = Some(&candidate.caller);
            }
        }
        found.cloned().ok_or_else(|| {
            ApiError::new(
                403,
                codes::UNKNOWN_KEY,
                "Unknown X-Auth-Key or X-Auth-Email",
            )
        })
    }
}

fn invalid_headers(chain: Vec<ErrorItem>) -> ApiError {
    ApiError::from_items(
        400,
        vec![ErrorItem::new(codes::INVALID_HEADERS, "Invalid request headers").with_chain(chain)],
    )
}

/// `Bearer <token>` (scheme case-insensitive); the token is 1–512 characters of the RFC 6750
/// token alphabet.
fn bearer_token(value: &[u8]) -> Option<&str> {
    let value = std::str::from_utf8(value).ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_start_matches(' ');
    let alphabet = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer")
        && (1..=512).contains(&token.len())
        && token.chars().all(alphabet))
    .then_some(token)
}

/// 3–254 visible ASCII characters, one `@` with something on both sides.
fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    (3..=254).contains(&email.len())
        && !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && email.bytes().all(|b| b.is_ascii_graphic())
}

/// 1–256 visible ASCII characters.
fn valid_key(key: &str) -> bool {
    (1..=256).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            api_keys: vec![ApiKeyEntry {
                email: "ops@example.com".into(),
                key_sha256: hash_secret("the-key"),
                accounts: vec!["acct".into()],
            }],
            api_tokens: vec![ApiTokenEntry {
                id: "0123456789abcdef0123456789abcdef".into(),
                token_sha256: hash_secret("the-token"),
                permissions: vec!["esc:edit".into()],
                zones: vec!["z1".into()],
                accounts: vec![],
            }],
            ..Default::default()
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, http::HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn code(result: Result<Caller, ApiError>) -> (u16, u32) {
        let e = result.unwrap_err();
        (e.status, e.errors[0].code)
    }

    #[test]
    fn keys_and_tokens_authenticate_and_failures_have_their_codes() {
        let index = CredentialIndex::compile(&config());
        let key = index
            .authenticate(&headers(&[
                ("x-auth-email", "OPS@example.com"),
                ("x-auth-key", "the-key"),
            ]))
            .unwrap();
        assert!(!key.is_token && key.can(Permission::ConfigReload) && !key.can_reload());
        assert!(key.covers_account("acct") && !key.covers_account("other"));

        let token = index
            .authenticate(&headers(&[("authorization", "Bearer the-token")]))
            .unwrap();
        assert!(token.can(Permission::EscRead) && token.can(Permission::EscEdit));
        assert!(!token.can(Permission::ZoneRead));
        assert!(!token.covers_account("acct"));

        assert_eq!(code(index.authenticate(&headers(&[]))), (400, 9106));
        assert_eq!(
            code(index.authenticate(&headers(&[("x-auth-key", "the-key")]))),
            (400, 9106)
        );
        assert_eq!(
            code(index.authenticate(&headers(&[("authorization", "Basic abc")]))),
            (400, 6003)
        );
        assert_eq!(
            code(index.authenticate(&headers(&[("authorization", "Bearer bad token")]))),
            (400, 6003)
        );
        assert_eq!(
            code(index.authenticate(&headers(&[
                ("x-auth-email", "not-an-email"),
                ("x-auth-key", "k")
            ]))),
            (400, 6003)
        );
        assert_eq!(
            code(index.authenticate(&headers(&[
                ("x-auth-email", "ops@example.com"),
                ("x-auth-key", "wrong")
            ]))),
            (403, 9103)
        );
        assert_eq!(
            code(index.authenticate(&headers(&[("authorization", "Bearer nope")]))),
            (403, 9109)
        );
    }

    #[test]
    fn validation_names_each_bad_entry() {
        let mut cfg = config();
        cfg.api_tokens[0].permissions.push("esc:write".into());
        cfg.api_tokens[0].token_sha256 = "XYZ".into();
        cfg.api_keys[0].email = "nobody".into();
        let problems = validate_entries(&cfg.api_keys, &cfg.api_tokens);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems
            .iter()
            .any(|p| p.starts_with("api_tokens[0].permissions[1]")));
        assert!(validate_entries(&config().api_keys, &config().api_tokens).is_empty());
    }
}
