//! The fields an expression can read, and how each is drawn from a [`RequestView`].
//!
//! Everything here reads the borrowed view lazily: scalar fields borrow when they can (one
//! header line, no query) and only joined or composed values allocate; arrays are visited in
//! place, never collected.

use std::borrow::Cow;
use std::ops::ControlFlow;

use http::header::{self, HeaderName};

use super::RequestView;

// A constant so the name is validated once at compile time, not on every read.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// A string-typed field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BytesField {
    Host,
    Method,
    Uri,
    Path,
    Query,
    FullUri,
    Version,
    Cookie,
    UserAgent,
    Referer,
    XForwardedFor,
}

/// An integer field filled by the WAF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WafField {
    Score,
    Sqli,
    Xss,
    Rce,
}

/// A map field: name → array of string values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapField {
    Headers,
    Args,
    Cookies,
}

/// An array of strings drawn from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArraySource {
    /// Values of one header; `None` when the key can never match (not a lowercase header name).
    HeaderValues(Option<HeaderName>),
    HeaderNames,
    HeaderAllValues,
    ArgValues(Box<[u8]>),
    ArgNames,
    ArgAllValues,
    CookieValues(Box<[u8]>),
}

/// What a field name denotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldKind {
    Bytes(BytesField),
    Int(WafField),
    SrcIp,
    Ssl,
    Array(ArraySource),
    Map(MapField),
}

/// Every known field name and what it denotes; also the list printed in the language reference.
pub(crate) fn lookup(name: &str) -> Option<FieldKind> {
    use BytesField as B;
    Some(match name {
        "http.host" => FieldKind::Bytes(B::Host),
        "http.request.method" => FieldKind::Bytes(B::Method),
        "http.request.uri" => FieldKind::Bytes(B::Uri),
        "http.request.uri.path" => FieldKind::Bytes(B::Path),
        "http.request.uri.query" => FieldKind::Bytes(B::Query),
        "http.request.full_uri" => FieldKind::Bytes(B::FullUri),
        "http.request.version" => FieldKind::Bytes(B::Version),
        "http.cookie" => FieldKind::Bytes(B::Cookie),
        "http.user_agent" => FieldKind::Bytes(B::UserAgent),
        "http.referer" => FieldKind::Bytes(B::Referer),
        "http.x_forwarded_for" => FieldKind::Bytes(B::XForwardedFor),
        "ip.src" => FieldKind::SrcIp,
        "ssl" => FieldKind::Ssl,
        "cf.waf.score" => FieldKind::Int(WafField::Score),
        "cf.waf.score.sqli" => FieldKind::Int(WafField::Sqli),
        "cf.waf.score.xss" => FieldKind::Int(WafField::Xss),
        "cf.waf.score.rce" => FieldKind::Int(WafField::Rce),
        "http.request.headers" => FieldKind::Map(MapField::Headers),
        "http.request.headers.names" => FieldKind::Array(ArraySource::HeaderNames),
        "http.request.headers.values" => FieldKind::Array(ArraySource::HeaderAllValues),
        "http.request.uri.args" => FieldKind::Map(MapField::Args),
        "http.request.uri.args.names" => FieldKind::Array(ArraySource::ArgNames),
        "http.request.uri.args.values" => FieldKind::Array(ArraySource::ArgAllValues),
        "http.request.cookies" => FieldKind::Map(MapField::Cookies),
        _ => return None,
    })
}

impl MapField {
    /// The array of values stored under `key`.
    pub(crate) fn values(self, key: &[u8]) -> ArraySource {
        match self {
            // Header map keys are lowercase names: any other key never matches.
            MapField::Headers => ArraySource::HeaderValues(
                HeaderName::from_lowercase(key)
                    .ok()
                    .filter(|name| name.as_str().as_bytes() == key),
            ),
            MapField::Args => ArraySource::ArgValues(key.into()),
            MapField::Cookies => ArraySource::CookieValues(key.into()),
        }
    }
}

/// All lines of one header joined with `separator`; borrowed when there are fewer than two.
fn joined<'r>(req: &RequestView<'r>, name: &HeaderName, separator: &[u8]) -> Cow<'r, [u8]> {
    let mut values = req.headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Cow::Borrowed(b"");
    };
    let Some(second) = values.next() else {
        return Cow::Borrowed(first.as_bytes());
    };
    let mut out = first.as_bytes().to_vec();
    for value in std::iter::once(second).chain(values) {
        out.extend_from_slice(separator);
        out.extend_from_slice(value.as_bytes());
    }
    Cow::Owned(out)
}

fn first_line<'r>(req: &RequestView<'r>, name: &HeaderName) -> &'r [u8] {
    req.headers.get(name).map_or(b"", |v| v.as_bytes())
}

/// `path` plus `?query` when the request has a query.
fn uri<'r>(req: &RequestView<'r>) -> Cow<'r, [u8]> {
    match req.query {
        None => Cow::Borrowed(req.path.as_bytes()),
        Some(query) => {
            let mut out = Vec::with_capacity(req.path.len() + 1 + query.len());
            out.extend_from_slice(req.path.as_bytes());
            out.push(b'?');
            out.extend_from_slice(query.as_bytes());
            Cow::Owned(out)
        }
    }
}

impl BytesField {
    /// Whether [`Self::read_in_place`] can read this field (it is not joined or composed).
    pub(crate) fn borrows(self) -> bool {
        matches!(
            self,
            BytesField::Host
                | BytesField::Method
                | BytesField::Path
                | BytesField::Query
                | BytesField::Version
                | BytesField::UserAgent
                | BytesField::Referer
        )
    }

    /// The field's bytes in place; `None` only for fields that [`Self::borrows`] rejects.
    #[inline]
    pub(crate) fn read_in_place<'r>(self, req: &RequestView<'r>) -> Option<&'r [u8]> {
        Some(match self {
            BytesField::Host => req.host.as_bytes(),
            BytesField::Method => req.method.as_bytes(),
            BytesField::Path => req.path.as_bytes(),
            BytesField::Query => req.query.unwrap_or("").as_bytes(),
            BytesField::Version => req.version.as_bytes(),
            BytesField::UserAgent => first_line(req, &header::USER_AGENT),
            BytesField::Referer => first_line(req, &header::REFERER),
            _ => return None,
        })
    }

    /// The field's value; string fields are never missing (absent headers read as `""`).
    pub(crate) fn read<'r>(self, req: &RequestView<'r>) -> Cow<'r, [u8]> {
        match self {
            BytesField::Host => Cow::Borrowed(req.host.as_bytes()),
            BytesField::Method => Cow::Borrowed(req.method.as_bytes()),
            BytesField::Path => Cow::Borrowed(req.path.as_bytes()),
            BytesField::Query => Cow::Borrowed(req.query.unwrap_or("").as_bytes()),
            BytesField::Version => Cow::Borrowed(req.version.as_bytes()),
            BytesField::Uri => uri(req),
            BytesField::FullUri => {
                let scheme: &[u8] = if req.tls { b"https://" } else { b"http://" };
                let rest = uri(req);
                let mut out = Vec::with_capacity(scheme.len() + req.host.len() + rest.len());
                out.extend_from_slice(scheme);
                out.extend_from_slice(req.host.as_bytes());
                out.extend_from_slice(&rest);
                Cow::Owned(out)
            }
            BytesField::Cookie => joined(req, &header::COOKIE, b"; "),
            BytesField::UserAgent => Cow::Borrowed(first_line(req, &header::USER_AGENT)),
            BytesField::Referer => Cow::Borrowed(first_line(req, &header::REFERER)),
            BytesField::XForwardedFor => joined(req, &X_FORWARDED_FOR, b", "),
        }
    }
}

impl WafField {
    pub(crate) fn read(self, req: &RequestView<'_>) -> Option<i64> {
        match self {
            WafField::Score => req.waf.score,
            WafField::Sqli => req.waf.score_sqli,
            WafField::Xss => req.waf.score_xss,
            WafField::Rce => req.waf.score_rce,
        }
    }
}

/// `name=value` pairs of the query string, split on `&`; a pair without `=` has value `""`.
fn query_pairs<'r>(req: &RequestView<'r>) -> impl Iterator<Item = (&'r [u8], &'r [u8])> {
    req.query
        .unwrap_or("")
        .as_bytes()
        .split(|b| *b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(split_pair)
}

/// `name=value` pairs of every `Cookie` header line, split on `;` and trimmed.
fn cookie_pairs<'r>(req: &RequestView<'r>) -> impl Iterator<Item = (&'r [u8], &'r [u8])> {
    req.headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|line| line.as_bytes().split(|b| *b == b';'))
        .map(|pair| pair.trim_ascii())
        .filter(|pair| !pair.is_empty())
        .map(split_pair)
}

fn split_pair(pair: &[u8]) -> (&[u8], &[u8]) {
    match pair.iter().position(|b| *b == b'=') {
        Some(i) => (&pair[..i], &pair[i + 1..]),
        None => (pair, b""),
    }
}

fn visit_all<'r>(
    items: impl Iterator<Item = &'r [u8]>,
    f: &mut dyn FnMut(&'r [u8]) -> ControlFlow<()>,
) {
    for item in items {
        if f(item).is_break() {
            return;
        }
    }
}

impl ArraySource {
    /// Calls `f` on each element in request order until it breaks.
    pub(crate) fn visit<'r>(
        &self,
        req: &RequestView<'r>,
        f: &mut dyn FnMut(&'r [u8]) -> ControlFlow<()>,
    ) {
        let headers: &'r http::HeaderMap = req.headers;
        match self {
            ArraySource::HeaderValues(None) => {}
            ArraySource::HeaderValues(Some(name)) => {
                visit_all(headers.get_all(name).iter().map(|v| v.as_bytes()), f)
            }
            ArraySource::HeaderNames => {
                visit_all(headers.iter().map(|(k, _)| k.as_str().as_bytes()), f)
            }
            ArraySource::HeaderAllValues => visit_all(headers.values().map(|v| v.as_bytes()), f),
            ArraySource::ArgValues(key) => visit_all(
                query_pairs(req)
                    .filter(|(k, _)| *k == &key[..])
                    .map(|(_, v)| v),
                f,
            ),
            ArraySource::ArgNames => visit_all(query_pairs(req).map(|(k, _)| k), f),
            ArraySource::ArgAllValues => visit_all(query_pairs(req).map(|(_, v)| v), f),
            ArraySource::CookieValues(key) => visit_all(
                cookie_pairs(req)
                    .filter(|(k, _)| *k == &key[..])
                    .map(|(_, v)| v),
                f,
            ),
        }
    }

    /// The element at `index`, if the array is that long.
    pub(crate) fn item<'r>(&self, req: &RequestView<'r>, index: u32) -> Option<&'r [u8]> {
        let mut seen = 0;
        let mut found = None;
        self.visit(req, &mut |item| {
            if seen == index {
                found = Some(item);
                return ControlFlow::Break(());
            }
            seen += 1;
            ControlFlow::Continue(())
        });
        found
    }

    /// Number of elements; `None` (missing) for a map key that is absent.
    pub(crate) fn len(&self, req: &RequestView<'_>) -> Option<i64> {
        let mut count = 0i64;
        self.visit(req, &mut |_| {
            count += 1;
            ControlFlow::Continue(())
        });
        let keyed = matches!(
            self,
            ArraySource::HeaderValues(_) | ArraySource::ArgValues(_) | ArraySource::CookieValues(_)
        );
        if keyed && count == 0 {
            None
        } else {
            Some(count)
        }
    }
}
