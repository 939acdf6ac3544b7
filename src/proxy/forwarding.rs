//! What any well-behaved proxy does to a forwarded request: `X-Forwarded-*` and `Via`.

use http::header::VIA;
use http::HeaderValue;
use pingora::http::RequestHeader;
use pingora::proxy::Session;

/// The downstream client's IP address (none for a Unix-socket client).
pub fn client_ip(session: &Session) -> Option<std::net::IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

const VIA_VALUE: &str = "1.1 escgate";

/// Appends the client to `X-Forwarded-For`, sets `X-Forwarded-Proto` (this listener's scheme,
/// replacing anything the client sent) and appends to `Via`. Static values are used as they are
/// (no copy); only a value that depends on the request is formatted.
pub fn add_forwarding_headers(
    request: &mut RequestHeader,
    client_ip: Option<std::net::IpAddr>,
    tls: bool,
) {
    if let Some(ip) = client_ip {
        let forwarded_for = match request.headers.get("x-forwarded-for").map(|v| v.to_str()) {
            Some(Ok(previous)) if !previous.is_empty() => format!("{previous}, {ip}"),
            _ => ip.to_string(),
        };
        let _ = request.insert_header("x-forwarded-for", forwarded_for);
    }
    let proto = HeaderValue::from_static(if tls { "https" } else { "http" });
    let _ = request.insert_header("x-forwarded-proto", proto);
    let via = match request.headers.get(VIA).map(|v| v.to_str()) {
        Some(Ok(previous)) if !previous.is_empty() => {
            HeaderValue::try_from(format!("{previous}, {VIA_VALUE}"))
        }
        _ => Ok(HeaderValue::from_static(VIA_VALUE)),
    };
    if let Ok(via) = via {
        let _ = request.insert_header(crate::esc::headers::VIA.to_bytes(), via);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarding_headers_append() {
        let mut request = RequestHeader::build("GET", b"/", None).unwrap();
        request
            .insert_header("x-forwarded-for", "10.0.0.1")
            .unwrap();
        request.insert_header("x-forwarded-proto", "https").unwrap();
        add_forwarding_headers(&mut request, Some([127, 0, 0, 1].into()), false);
        assert_eq!(request.headers["x-forwarded-for"], "10.0.0.1, 127.0.0.1");
        assert_eq!(request.headers["x-forwarded-proto"], "http");
        assert_eq!(request.headers["via"], "1.1 escgate");
    }
}
