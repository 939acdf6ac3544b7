//! The Rules-language view of a pingora request, borrowed (no copies).

use http::Version;
use pingora::http::RequestHeader;

use crate::rules::{RequestView, WafScores};

/// The Host of the request: the `Host` header, else the URI authority (absolute form, HTTP/2).
pub fn request_host(request: &RequestHeader) -> &str {
    request
        .headers
        .get(http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| request.uri.authority().map(|a| a.as_str()))
        .unwrap_or("")
}

/// `HTTP/1.1` style name of `version`.
pub fn version_name(version: Version) -> &'static str {
    match version {
        Version::HTTP_09 => "HTTP/0.9",
        Version::HTTP_10 => "HTTP/1.0",
        Version::HTTP_2 => "HTTP/2",
        Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// The view expressions are evaluated against.
pub fn request_view<'a>(
    request: &'a RequestHeader,
    client_ip: Option<std::net::IpAddr>,
    tls: bool,
) -> RequestView<'a> {
    RequestView {
        method: request.method.as_str(),
        host: crate::zones::strip_port(request_host(request)),
        path: request.uri.path(),
        query: request.uri.query(),
        tls,
        version: version_name(request.version),
        src_ip: client_ip,
        headers: &request.headers,
        waf: WafScores::default(),
    }
}
