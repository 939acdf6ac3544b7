//! The ESC decision for one request: applied, or disabled and why.
//!
//! SHARED CONTRACT: the proxy calls [`decide`] once per request in `request_filter` and keeps the
//! [`Decision`] in its context (logs, debug header); the admin-API owner implements it.

/// Why ESC is applied or disabled for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Applied,
    ZoneAlways,
    AccountAlways,
    ZoneSecret,
    AccountSecret,
}

impl Reason {
    /// `applied`, `zone_always`, `account_always`, `zone_secret`, `account_secret`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Applied => "applied",
            Reason::ZoneAlways => "zone_always",
            Reason::AccountAlways => "account_always",
            Reason::ZoneSecret => "zone_secret",
            Reason::AccountSecret => "account_secret",
        }
    }
}

/// The outcome of [`decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub reason: Reason,
}

impl Decision {
    /// ESC customizations run for this request.
    pub fn esc_applied(self) -> bool {
        self.reason == Reason::Applied
    }
}

/// Name of the per-request cookie that carries a disable-ESC secret.
pub const DISABLE_ESC_COOKIE: &str = "disable_esc";

/// Decides for a request to `zone_id` in `account_id`, given its request headers.
///
/// ESC is applied unless (first match wins, in this order) the zone's `always` flag, the
/// account's `always` flag, a `disable_esc` cookie equal to the zone's secret, or one equal to the
/// account's secret. Every `Cookie` header and every `disable_esc` cookie in them is considered;
/// secrets are compared in constant time (only the length of a candidate can be observed). No
/// allocation; the cookie headers are not scanned when neither scope has a secret.
pub fn decide(
    tenant: &crate::state::tenant::TenantState,
    zone_id: &str,
    account_id: &str,
    headers: &http::HeaderMap,
) -> Decision {
    let zone = tenant.zone_esc(zone_id);
    let account = tenant.account_esc(account_id);
    let reason = if zone.is_some_and(|z| z.always) {
        Reason::ZoneAlways
    } else if account.is_some_and(|a| a.always) {
        Reason::AccountAlways
    } else {
        secret_reason(
            zone.and_then(|z| z.with_secret.as_deref()),
            account.and_then(|a| a.with_secret.as_deref()),
            headers,
        )
    };
    Decision { reason }
}

fn secret_reason(
    zone_secret: Option<&str>,
    account_secret: Option<&str>,
    headers: &http::HeaderMap,
) -> Reason {
    use subtle::{Choice, ConstantTimeEq};
    if zone_secret.is_none() && account_secret.is_none() {
        return Reason::Applied;
    }
    let mut zone_match = Choice::from(0);
    let mut account_match = Choice::from(0);
    for header in headers.get_all(http::header::COOKIE) {
        for (name, value) in cookie_pairs(header.as_bytes()) {
            if name != DISABLE_ESC_COOKIE.as_bytes() {
                continue;
            }
            let value = unquote(value);
            if let Some(secret) = zone_secret {
                zone_match |= value.ct_eq(secret.as_bytes());
            }
            if let Some(secret) = account_secret {
                account_match |= value.ct_eq(secret.as_bytes());
            }
        }
    }
    if bool::from(zone_match) {
        Reason::ZoneSecret
    } else if bool::from(account_match) {
        Reason::AccountSecret
    } else {
        Reason::Applied
    }
}

/// `(name, value)` of each `name=value` pair of one `Cookie` header, whitespace-trimmed; a pair
/// without `=` yields an empty value.
fn cookie_pairs(header: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    header.split(|b| *b == b';').filter_map(|pair| {
        let pair = pair.trim_ascii();
        if pair.is_empty() {
            return None;
        }
        Some(match pair.iter().position(|b| *b == b'=') {
            Some(eq) => (pair[..eq].trim_ascii(), pair[eq + 1..].trim_ascii()),
            None => (pair, &pair[pair.len()..]),
        })
    })
}

/// RFC 6265 allows a cookie value wrapped in double quotes; secrets never contain one.
fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

/// The `Cookie` header value without its `disable_esc` cookies: `None` when it has none (leave
/// the header as it is), `Some(empty)` when nothing else is left (drop the header). The other
/// cookies keep their order and bytes, joined by `"; "`.
pub fn cookie_header_without_disable_esc(header: &[u8]) -> Option<Vec<u8>> {
    if !cookie_pairs(header).any(|(name, _)| name == DISABLE_ESC_COOKIE.as_bytes()) {
        return None;
    }
    let mut kept = Vec::with_capacity(header.len());
    for pair in header.split(|b| *b == b';') {
        let trimmed = pair.trim_ascii();
        if trimmed.is_empty()
            || cookie_pairs(trimmed).any(|(n, _)| n == DISABLE_ESC_COOKIE.as_bytes())
        {
            continue;
        }
        if !kept.is_empty() {
            kept.extend_from_slice(b"; ");
        }
        kept.extend_from_slice(trimmed);
    }
    Some(kept)
}

/// Removes every `disable_esc` cookie from the request sent upstream (all `Cookie` headers),
/// leaving other cookies untouched; a `Cookie` header left empty is removed. Allocates only when
/// a `disable_esc` cookie is present. Returns true when something was removed.
pub fn strip_disable_esc_cookies(request: &mut pingora::http::RequestHeader) -> bool {
    let rewritten: Vec<Option<Vec<u8>>> = request
        .headers
        .get_all(http::header::COOKIE)
        .iter()
        .map(|value| cookie_header_without_disable_esc(value.as_bytes()))
        .collect::<Vec<_>>();
    if rewritten.iter().all(Option::is_none) {
        return false;
    }
    let originals: Vec<http::HeaderValue> = request
        .headers
        .get_all(http::header::COOKIE)
        .iter()
        .cloned()
        .collect();
    request.remove_header(&http::header::COOKIE);
    for (original, rewritten) in originals.into_iter().zip(rewritten) {
        let value = match rewritten {
            None => original,
            Some(bytes) if bytes.is_empty() => continue,
            // The kept bytes come from a valid header value, so they are a valid value too.
            Some(bytes) => match http::HeaderValue::from_bytes(&bytes) {
                Ok(value) => value,
                Err(_) => continue,
            },
        };
        // Appending a valid name/value pair cannot fail.
        let _ = request.append_header(http::header::COOKIE, value);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::tenant::{EscSetting, TenantState};

    fn setting(always: bool, secret: Option<&str>) -> EscSetting {
        EscSetting {
            always,
            with_secret: secret.map(str::to_owned),
        }
    }

    fn headers(cookies: &[&str]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for c in cookies {
            map.append(http::header::COOKIE, c.parse().unwrap());
        }
        map
    }

    fn reason(tenant: &TenantState, cookies: &[&str]) -> Reason {
        decide(tenant, "z", "a", &headers(cookies)).reason
    }

    #[test]
    fn decision_table() {
        let none = TenantState::default();
        assert_eq!(reason(&none, &["disable_esc=x"]), Reason::Applied);

        let zone_always = none.with_zone_esc("z", setting(true, None));
        assert_eq!(reason(&zone_always, &[]), Reason::ZoneAlways);
        let account_always = none.with_account_esc("a", setting(true, None));
        assert_eq!(reason(&account_always, &[]), Reason::AccountAlways);
        let both_always = zone_always.with_account_esc("a", setting(true, None));
        assert_eq!(reason(&both_always, &[]), Reason::ZoneAlways);

        let secrets = none
            .with_zone_esc("z", setting(false, Some("zs")))
            .with_account_esc("a", setting(false, Some("as")));
        assert_eq!(reason(&secrets, &[]), Reason::Applied);
        assert_eq!(reason(&secrets, &["disable_esc=zs"]), Reason::ZoneSecret);
        assert_eq!(reason(&secrets, &["disable_esc=as"]), Reason::AccountSecret);
        assert_eq!(reason(&secrets, &["disable_esc=wrong"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["disable_esc=zs2"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["disable_esc="]), Reason::Applied);
        assert_eq!(reason(&secrets, &["Disable_Esc=zs"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["other=zs"]), Reason::Applied);
        // Several cookies, several headers: any matching disable_esc cookie counts.
        assert_eq!(
            reason(&secrets, &["a=1; disable_esc=wrong; disable_esc=as ; b=2"]),
            Reason::AccountSecret
        );
        assert_eq!(
            reason(&secrets, &["disable_esc=wrong", "x=y;disable_esc=zs"]),
            Reason::ZoneSecret
        );
        assert_eq!(
            reason(&secrets, &["disable_esc=\"zs\""]),
            Reason::ZoneSecret
        );
        // Another zone's secret does not count.
        let other = none.with_zone_esc("other", setting(false, Some("os")));
        assert_eq!(reason(&other, &["disable_esc=os"]), Reason::Applied);
    }

    #[test]
    fn rewrite_keeps_other_cookies() {
        assert_eq!(cookie_header_without_disable_esc(b"a=1; b=2"), None);
        assert_eq!(
            cookie_header_without_disable_esc(b"a=1; disable_esc=s; b=2; disable_esc=t").as_deref(),
            Some(&b"a=1; b=2"[..])
        );
        assert_eq!(
            cookie_header_without_disable_esc(b" disable_esc=s ").as_deref(),
            Some(&b""[..])
        );
        assert_eq!(
            cookie_header_without_disable_esc(b"xdisable_esc=s;disable_escx=t"),
            None
        );
    }

    #[test]
    fn strip_handles_several_headers() {
        let mut request = pingora::http::RequestHeader::build("GET", b"/", None).unwrap();
        request
            .append_header("Cookie", "a=1; disable_esc=s")
            .unwrap();
        request.append_header("Cookie", "disable_esc=t").unwrap();
        request.append_header("Cookie", "c=3").unwrap();
        assert!(strip_disable_esc_cookies(&mut request));
        let values: Vec<&[u8]> = request
            .headers
            .get_all("cookie")
            .iter()
            .map(|v| v.as_bytes())
            .collect();
        assert_eq!(values, vec![&b"a=1"[..], &b"c=3"[..]]);
        assert!(!strip_disable_esc_cookies(&mut request));
    }
}
