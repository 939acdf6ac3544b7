//! What any well-behaved proxy does to a forwarded request: `X-Forwarded-*`, `Via`, and never
//! leaking the `disable_esc` secret to the origin.

use http::header::{COOKIE, VIA};
use http::HeaderValue;
use pingora::http::RequestHeader;

/// Cookie carrying the disable-ESC secret; stripped before the request reaches the origin.
pub const DISABLE_ESC_COOKIE: &str = "disable_esc";
const VIA_VALUE: &str = "1.1 escgate";

/// Appends the client to `X-Forwarded-For`, sets `X-Forwarded-Proto` (this listener's scheme,
/// replacing anything the client sent) and appends to `Via`.
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
    let proto = if tls { "https" } else { "http" };
    let _ = request.insert_header("x-forwarded-proto", proto);
    let via = match request.headers.get(VIA).map(|v| v.to_str()) {
        Some(Ok(previous)) if !previous.is_empty() => format!("{previous}, {VIA_VALUE}"),
        _ => VIA_VALUE.to_string(),
    };
    let _ = request.insert_header(VIA, via);
}

/// Removes the `disable_esc` cookie from every `Cookie` header, dropping headers left empty.
pub fn strip_disable_esc_cookie(request: &mut RequestHeader) {
    let carries_it = request
        .headers
        .get_all(COOKIE)
        .iter()
        .any(|value| contains(value.as_bytes(), DISABLE_ESC_COOKIE.as_bytes()));
    if !carries_it {
        return;
    }
    let kept: Vec<String> = request
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| {
            let text = String::from_utf8_lossy(value.as_bytes());
            let pairs: Vec<&str> = text
                .split(';')
                .map(str::trim)
                .filter(|pair| !pair.is_empty())
                .filter(|pair| pair.split('=').next().map(str::trim) != Some(DISABLE_ESC_COOKIE))
                .collect();
            (!pairs.is_empty()).then(|| pairs.join("; "))
        })
        .collect();
    request.remove_header(&COOKIE);
    for value in kept {
        if let Ok(value) = HeaderValue::from_str(&value) {
            let _ = request.append_header(COOKIE, value);
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_esc_cookie_is_removed_and_others_kept() {
        let mut request = RequestHeader::build("GET", b"/", None).unwrap();
        request
            .append_header("cookie", "a=1; disable_esc=s3cr3t; b=2")
            .unwrap();
        request.append_header("cookie", "disable_esc=x").unwrap();
        strip_disable_esc_cookie(&mut request);
        let values: Vec<_> = request.headers.get_all("cookie").iter().collect();
        assert_eq!(values, ["a=1; b=2"]);
    }

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
