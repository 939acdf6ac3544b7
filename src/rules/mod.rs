//! The Rules language (Cloudflare's Wireshark-style filter expressions).
//!
//! PUBLIC CONTRACT (other modules rely on it; keep these names and signatures):
//! - [`Limits`]: caps on untrusted input, `Limits::default()` is sane.
//! - [`Filter::compile`]: parse + type-check + compile once; `Filter` is `Send + Sync + Clone`-cheap
//!   (wrap internals in `Arc`) and `Debug`.
//! - [`Filter::matches`]: evaluate against a borrowed [`RequestView`]; never panics.
//! - [`RulesError`]: `Display` says what is wrong and at which character offset.
//!
//! This file is a placeholder that only understands `true` and `false`; the real engine replaces it.

use std::net::IpAddr;

/// Caps applied when compiling untrusted expressions.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Maximum expression length in bytes (the spec's firewall-rule limit is 4 KB).
    pub max_len: usize,
    /// Maximum nesting depth of parentheses / sub-expressions.
    pub max_depth: usize,
    /// Maximum compiled size of one regex, in bytes.
    pub max_regex_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_len: 4096,
            max_depth: 64,
            max_regex_size: 1 << 20,
        }
    }
}

/// WAF score fields, filled by the WAF when it runs; `None` = field absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct WafScores {
    pub score: Option<i64>,
    pub score_sqli: Option<i64>,
    pub score_xss: Option<i64>,
    pub score_rce: Option<i64>,
}

/// A borrowed view of one HTTP request: what expressions are evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    /// `http.request.method`, e.g. `GET`.
    pub method: &'a str,
    /// `http.host`: the Host as received, without the port.
    pub host: &'a str,
    /// `http.request.uri.path`, raw (not decoded).
    pub path: &'a str,
    /// `http.request.uri.query`, without the `?`; `None` when the URI has no query.
    pub query: Option<&'a str>,
    /// `ssl`: the client connection uses TLS (also drives the scheme of `full_uri`).
    pub tls: bool,
    /// `http.request.version`, e.g. `HTTP/1.1`.
    pub version: &'a str,
    /// `ip.src`.
    pub src_ip: Option<IpAddr>,
    /// All request headers (source of header, cookie, user agent … fields).
    pub headers: &'a http::HeaderMap,
    /// `cf.waf.score*`.
    pub waf: WafScores,
}

/// A compile error: what is wrong and where (byte offset in the expression).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at {position}")]
pub struct RulesError {
    pub message: String,
    pub position: usize,
}

/// A compiled expression, shared by all worker threads.
#[derive(Debug, Clone)]
pub struct Filter {
    constant: bool,
}

impl Filter {
    /// Parses, type-checks and compiles `expression`.
    pub fn compile(expression: &str, limits: &Limits) -> Result<Filter, RulesError> {
        if expression.len() > limits.max_len {
            return Err(RulesError {
                message: format!("expression longer than {} bytes", limits.max_len),
                position: limits.max_len,
            });
        }
        match expression.trim() {
            "true" => Ok(Filter { constant: true }),
            "false" => Ok(Filter { constant: false }),
            _ => Err(RulesError {
                message: "unsupported expression".into(),
                position: 0,
            }),
        }
    }

    /// Evaluates the filter; absent fields compare false, never panics.
    pub fn matches(&self, _request: &RequestView<'_>) -> bool {
        self.constant
    }
}
