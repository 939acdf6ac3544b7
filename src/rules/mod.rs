//! The Rules language (Cloudflare's Wireshark-style filter expressions).
//!
//! PUBLIC CONTRACT (other modules rely on it; keep these names and signatures):
//! - [`Limits`]: caps on untrusted input, `Limits::default()` is sane.
//! - [`Filter::compile`]: parse + type-check + compile once; `Filter` is `Send + Sync + Clone`-cheap
//!   (wrap internals in `Arc`) and `Debug`.
//! - [`Filter::matches`]: evaluate against a borrowed [`RequestView`]; never panics.
//! - [`RulesError`]: `Display` says what is wrong and at which character offset.
//!
//! Stages: lexer → [`parse`] (syntax tree in [`ast`], printed back by its `Display`) → type check and compile (plain-data nodes,
//! regexes and lists built once) → evaluation over a borrowed [`RequestView`]. The language is
//! described in `docs/rules.md`.

pub mod ast;
mod calls;
mod compile;
mod error;
mod eval;
mod fields;
mod functions;
mod ir;
mod lexer;
mod parser;
mod printer;
mod wildcard;

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

pub use calls::FUNCTIONS;
pub use error::RulesError;
pub use parser::parse;

use eval::Scope;
use ir::BoolNode;

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

/// A compiled expression, shared by all worker threads (cloning shares the compiled form).
#[derive(Clone)]
pub struct Filter {
    inner: Arc<CompiledFilter>,
}

struct CompiledFilter {
    source: Box<str>,
    root: BoolNode,
    fields: Box<[String]>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("source", &self.inner.source)
            .finish_non_exhaustive()
    }
}

impl Filter {
    /// Parses, type-checks and compiles `expression` under `limits`.
    ///
    /// Errors name what is wrong (unknown field or function, type mismatch, limit exceeded)
    /// and the byte offset where it is; untrusted input never panics.
    pub fn compile(expression: &str, limits: &Limits) -> Result<Filter, RulesError> {
        let ast = parse(expression, limits)?;
        let compiled = compile::compile(&ast, limits)?;
        Ok(Filter {
            inner: Arc::new(CompiledFilter {
                source: expression.into(),
                root: compiled.root,
                fields: compiled.fields.into_boxed_slice(),
            }),
        })
    }

    /// Evaluates the filter against `request`; absent values compare false, never panics.
    pub fn matches(&self, request: &RequestView<'_>) -> bool {
        self.inner.root.eval(Scope {
            req: request,
            element: b"",
        })
    }

    /// The expression text this filter was compiled from.
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// Names of the fields the expression reads, sorted (e.g. to skip computing WAF scores
    /// when no filter reads `cf.waf.score*`).
    pub fn fields(&self) -> &[String] {
        &self.inner.fields
    }
}

#[cfg(test)]
mod tests;
