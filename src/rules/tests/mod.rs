//! Unit tests of the Rules engine against sample requests.

mod documented;
mod errors;
mod functions;
mod operators;
mod properties;

use std::net::IpAddr;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::{Filter, Limits, RequestView, RulesError, WafScores};

/// An owned request from which [`RequestView`]s are borrowed.
pub(super) struct Sample {
    pub method: String,
    pub host: String,
    pub path: String,
    pub query: Option<String>,
    pub tls: bool,
    pub version: String,
    pub src_ip: Option<IpAddr>,
    pub headers: HeaderMap,
    pub waf: WafScores,
}

impl Sample {
    /// `GET https://example.com/api/v1/users?id=5&id=6&name=Bob` from 198.51.100.7 with a few
    /// headers (two `accept` lines, two cookies).
    pub fn new() -> Sample {
        let mut sample = Sample {
            method: "GET".into(),
            host: "example.com".into(),
            path: "/api/v1/users".into(),
            query: Some("id=5&id=6&name=Bob".into()),
            tls: true,
            version: "HTTP/1.1".into(),
            src_ip: Some("198.51.100.7".parse().unwrap()),
            headers: HeaderMap::new(),
            waf: WafScores::default(),
        };
        sample
            .header(
                "user-agent",
                "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
            )
            .header("accept", "text/html")
            .header("accept", "application/json")
            .header("cookie", "session=abc123; theme=dark")
            .header("x-forwarded-for", "203.0.113.1")
            .header("referer", "https://www.example.org/start")
            .header("x-api-key", "Secret-Key");
        sample
    }

    /// Appends one header line.
    pub fn header(&mut self, name: &str, value: &str) -> &mut Sample {
        self.headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
        self
    }

    pub fn view(&self) -> RequestView<'_> {
        RequestView {
            method: &self.method,
            host: &self.host,
            path: &self.path,
            query: self.query.as_deref(),
            tls: self.tls,
            version: &self.version,
            src_ip: self.src_ip,
            headers: &self.headers,
            waf: self.waf,
        }
    }
}

/// Compiles `expression` (failing the test with the error if it does not) and evaluates it.
pub(super) fn eval(expression: &str, sample: &Sample) -> bool {
    match Filter::compile(expression, &Limits::default()) {
        Ok(filter) => filter.matches(&sample.view()),
        Err(e) => panic!("{expression:?} failed to compile: {e}"),
    }
}

/// Evaluates against [`Sample::new`].
pub(super) fn matches(expression: &str) -> bool {
    eval(expression, &Sample::new())
}

/// The compile error of an expression expected to be rejected.
pub(super) fn error(expression: &str) -> RulesError {
    error_with(expression, &Limits::default())
}

pub(super) fn error_with(expression: &str, limits: &Limits) -> RulesError {
    match Filter::compile(expression, limits) {
        Ok(_) => panic!("{expression:?} compiled but should not"),
        Err(e) => e,
    }
}
