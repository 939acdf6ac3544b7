//! The customization data: one [`EscEntry`] per `[[zones.esc]]`, each a list of [`Action`]s.

use bytes::Bytes;
use http::{HeaderValue, StatusCode};

use super::headers::HeaderEdits;
use super::uri::UriRewrite;
use crate::rules::Filter;

/// One `[[zones.esc]]` entry, compiled.
#[derive(Debug, Clone)]
pub struct EscEntry {
    /// Free text from the config, used in logs.
    pub description: String,
    /// `None` matches every request.
    pub when: Option<Filter>,
    /// In the order the config lists the keys of the entry family (request side first).
    pub actions: Vec<Action>,
}

/// One customization action, ready to apply (names, values and bodies parsed at load).
#[derive(Debug, Clone)]
pub enum Action {
    /// `request_headers`: edits of the request sent to the origin.
    RequestHeaders(HeaderEdits),
    /// `host_header`: the Host sent to the origin.
    HostHeader(HeaderValue),
    /// `rewrite_uri`: path and/or query sent to the origin.
    RewriteUri(UriRewrite),
    /// `redirect`: answer at once with a redirect.
    Redirect(Redirect),
    /// `resolve_override`: index of the origin address in the zone's upstream table.
    ResolveOverride(u16),
    /// `sni`: index of the SNI in the zone's upstream table.
    Sni(u16),
    /// `feature_exceptions`: edge features switched off.
    FeatureExceptions(FeatureSet),
    /// `response_headers`: edits of the response sent to the client.
    ResponseHeaders(HeaderEdits),
    /// `add_cookies`: `Set-Cookie` values appended to the response.
    AddCookies(Vec<HeaderValue>),
    /// `custom_error`: replaces error responses (origin's or escgate's own).
    CustomError(CustomError),
    /// `status_redirect`: turns responses with these statuses into a redirect.
    StatusRedirect(StatusRedirect),
}

/// `redirect = { to, status, preserve_query }`.
#[derive(Debug, Clone)]
pub struct Redirect {
    pub status: StatusCode,
    /// `to`, as text (the query is appended to it when `preserve_query`).
    pub to: String,
    /// `to` as a ready header value, used when no query is appended.
    pub location: HeaderValue,
    pub preserve_query: bool,
}

impl Redirect {
    /// The `Location` for a request whose query is `query`.
    pub fn location_for(&self, query: Option<&str>) -> HeaderValue {
        match query {
            Some(query) if self.preserve_query && !query.is_empty() => {
                let separator = if self.to.contains('?') { '&' } else { '?' };
                let joined = format!("{}{separator}{query}", self.to);
                // The query came from a parsed URI, so it is valid header text.
                HeaderValue::from_str(&joined).unwrap_or_else(|_| self.location.clone())
            }
            _ => self.location.clone(),
        }
    }
}

/// `custom_error = { status, content_type, body }`.
#[derive(Debug, Clone)]
pub struct CustomError {
    pub statuses: Vec<u16>,
    pub content_type: HeaderValue,
    pub body: Bytes,
}

/// `status_redirect = { status, to, code }`.
#[derive(Debug, Clone)]
pub struct StatusRedirect {
    pub statuses: Vec<u16>,
    pub location: HeaderValue,
    pub code: StatusCode,
}

/// What replaces an origin (or escgate) response: status, headers and the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseReplacement {
    pub status: StatusCode,
    /// `(content-type or location header name, value)`.
    pub header: (http::HeaderName, HeaderValue),
    pub body: Bytes,
}

/// Edge features that `feature_exceptions` can switch off, as a bit set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeatureSet(u8);

impl FeatureSet {
    /// Response compression (zones with `compression = true`).
    pub const COMPRESSION: FeatureSet = FeatureSet(1);
    /// The WAF.
    pub const WAF: FeatureSet = FeatureSet(2);

    /// The feature named `name` in the config (`compression`, `waf`).
    pub fn from_name(name: &str) -> Option<FeatureSet> {
        match name {
            "compression" => Some(FeatureSet::COMPRESSION),
            "waf" => Some(FeatureSet::WAF),
            _ => None,
        }
    }

    /// Both sets together.
    pub fn union(self, other: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 | other.0)
    }

    /// Every feature of `other` is in `self`.
    pub fn contains(self, other: FeatureSet) -> bool {
        self.0 & other.0 == other.0
    }
}
