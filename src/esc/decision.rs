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
    if zone_secret.is_none() && account_secret.is_none() {
        return Reason::Applied;
    }
    // Each comparison is constant-time; whether one matched is not secret (the request's outcome
    // shows it), so the results are gathered as plain booleans.
    let matches = |candidate: &[u8], secret: Option<&str>| {
        secret.is_some_and(|secret| secret_eq(candidate, secret.as_bytes()))
    };
    let (mut zone_match, mut account_match) = (false, false);
    for header in headers.get_all(http::header::COOKIE) {
        for value in disable_esc_values(header.as_bytes()) {
            let value = unquote(value);
            zone_match |= matches(value, zone_secret);
            account_match |= matches(value, account_secret);
        }
    }
    if zone_match {
        Reason::ZoneSecret
    } else if account_match {
        Reason::AccountSecret
    } else {
        Reason::Applied
    }
}

/// Constant-time equality of a cookie value and a secret: only whether the lengths are equal can
/// be observed. The bytes are XOR-accumulated eight at a time behind one optimization barrier
/// (subtle's `u64::ct_eq`); subtle's slice `ct_eq` puts a barrier on every byte (replacing it
/// took 30–41% off `decide/secrets_matching_cookie`).
fn secret_eq(candidate: &[u8], secret: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    if candidate.len() != secret.len() {
        return false;
    }
    let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().expect("8-byte chunk"));
    let (mut ours, mut theirs) = (candidate.chunks_exact(8), secret.chunks_exact(8));
    let mut difference = 0u64;
    for (a, b) in (&mut ours).zip(&mut theirs) {
        difference |= word(a) ^ word(b);
    }
    for (a, b) in ours.remainder().iter().zip(theirs.remainder()) {
        difference |= u64::from(a ^ b);
    }
    difference.ct_eq(&0).into()
}

static DISABLE_ESC_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(DISABLE_ESC_COOKIE));

/// The values of the `disable_esc` cookies of one `Cookie` header, in order: exactly the values
/// of the `;`-separated `name=value` pairs named `disable_esc` (name and value whitespace-trimmed,
/// a pair without `=` has an empty value), found from the name's occurrences (one
/// SIMD substring search) instead of parsing every pair, because the usual request carries
/// other cookies and none of ours.
fn disable_esc_values(header: &[u8]) -> impl Iterator<Item = &[u8]> {
    // `Finder::find_iter` copies the whole searcher per call; `find` from a moving offset does not.
    let finder = &*DISABLE_ESC_FINDER;
    let mut from = 0;
    std::iter::from_fn(move || {
        let start = from + finder.find(header.get(from..)?)?;
        from = start + DISABLE_ESC_COOKIE.len();
        Some(start)
    })
    .filter_map(move |start| {
        // A cookie name starts a pair: only whitespace since the header start or the last `;`.
        let before = header[..start].trim_ascii_end();
        if !before.is_empty() && !before.ends_with(b";") {
            return None;
        }
        let rest = &header[start + DISABLE_ESC_COOKIE.len()..];
        let rest = &rest[..rest.iter().position(|b| *b == b';').unwrap_or(rest.len())];
        match rest.trim_ascii_start() {
            [] => Some(&rest[rest.len()..]),
            [b'=', value @ ..] => Some(value.trim_ascii()),
            // A longer name that starts with ours.
            _ => None,
        }
    })
}

/// True when `header` (one `Cookie` value) holds a `disable_esc` cookie.
fn carries_disable_esc(header: &[u8]) -> bool {
    disable_esc_values(header).next().is_some()
}

/// RFC 6265 allows a cookie value wrapped in double quotes; secrets never contain one.
fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

/// True when one whitespace-trimmed cookie pair is named `disable_esc`: the name, then nothing
/// or (after optional whitespace) `=`. The same names as [`disable_esc_values`] finds.
fn is_disable_esc_pair(pair: &[u8]) -> bool {
    pair.strip_prefix(DISABLE_ESC_COOKIE.as_bytes())
        .is_some_and(|rest| matches!(rest.trim_ascii_start(), [] | [b'=', ..]))
}

/// The `Cookie` header value without its `disable_esc` cookies: `None` when it has none (leave
/// the header as it is), `Some(empty)` when nothing else is left (drop the header). The other
/// cookies keep their order and bytes, whitespace-trimmed and joined by `"; "`. One substring
/// search, then (only when it found one) one pass over the pairs.
pub fn cookie_header_without_disable_esc(header: &[u8]) -> Option<Vec<u8>> {
    if !carries_disable_esc(header) {
        return None;
    }
    let mut kept = Vec::with_capacity(header.len());
    let pairs = header.split(|b| *b == b';').map(<[u8]>::trim_ascii);
    for pair in pairs.filter(|pair| !pair.is_empty() && !is_disable_esc_pair(pair)) {
        if !kept.is_empty() {
            kept.extend_from_slice(b"; ");
        }
        kept.extend_from_slice(pair);
    }
    Some(kept)
}

/// What stripping does to one `Cookie` value: `None` when it carries no `disable_esc` cookie,
/// `Some(None)` when nothing else is left, else `Some(Some(the rest))`. The kept bytes come from a
/// valid header value, so they are a valid value too (were they not, dropping the header still
/// keeps the secret from the origin).
fn stripped(value: &http::HeaderValue) -> Option<Option<http::HeaderValue>> {
    let kept = cookie_header_without_disable_esc(value.as_bytes())?;
    Some(
        (!kept.is_empty())
            .then(|| http::HeaderValue::from_maybe_shared(bytes::Bytes::from(kept)).ok())
            .flatten(),
    )
}

/// Removes every `disable_esc` cookie from the request sent upstream (all `Cookie` headers),
/// leaving other cookies untouched; a `Cookie` header left empty is removed. Allocates only when
/// a `disable_esc` cookie is present. Returns true when something was removed.
pub fn strip_disable_esc_cookies(request: &mut pingora::http::RequestHeader) -> bool {
    use crate::esc::headers::COOKIE;
    let cookies = request.headers.get_all(http::header::COOKIE);
    let mut values = cookies.iter();
    if let (Some(only), None) = (values.next(), values.next()) {
        // One `Cookie` header, the usual case: replace it in place, no list of values.
        let Some(rewritten) = stripped(only) else {
            return false;
        };
        match rewritten {
            // Replacing a valid name/value pair cannot fail.
            Some(value) => drop(request.insert_header(COOKIE.to_bytes(), value)),
            None => drop(request.remove_header(&http::header::COOKIE)),
        }
        return true;
    }
    if !cookies
        .iter()
        .any(|value| carries_disable_esc(value.as_bytes()))
    {
        return false;
    }
    let kept: Vec<http::HeaderValue> = cookies
        .iter()
        .filter_map(|value| stripped(value).unwrap_or_else(|| Some(value.clone())))
        .collect();
    request.remove_header(&http::header::COOKIE);
    for value in kept {
        // Appending a valid name/value pair cannot fail.
        let _ = request.append_header(COOKIE.to_bytes(), value);
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
    fn secret_eq_sees_every_byte_of_every_length() {
        for len in 0..40usize {
            let secret: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(secret_eq(&secret, &secret), "len {len}");
            for at in 0..len {
                for flip in [1u8, 0x80] {
                    let mut other = secret.clone();
                    other[at] ^= flip;
                    assert!(!secret_eq(&other, &secret), "len {len} at {at}");
                }
            }
            let mut longer = secret.clone();
            longer.push(b'x');
            assert!(!secret_eq(&longer, &secret));
            assert!(!secret_eq(&secret, &longer));
        }
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
        // The name only counts as a cookie name, never inside another cookie's name or value.
        assert_eq!(reason(&secrets, &["a=disable_esc; b=zs"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["x=disable_esc=zs"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["my_disable_esc=zs"]), Reason::Applied);
        assert_eq!(reason(&secrets, &["disable_esc x=zs"]), Reason::Applied);
        assert_eq!(
            reason(&secrets, &[" disable_esc = zs ;"]),
            Reason::ZoneSecret
        );
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

    proptest::proptest! {
        #[test]
        fn value_scan_agrees_with_pair_parsing(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "disable_esc", "disable_esc=", "=", ";", " ", "\t", "x", "v\"", "\"", "_esc",
                ]),
                0..12,
            )
        ) {
            let header = parts.concat();
            let scanned: Vec<&[u8]> = disable_esc_values(header.as_bytes()).collect();
            let parsed: Vec<&[u8]> = cookie_pairs(header.as_bytes())
                .filter(|(name, _)| *name == DISABLE_ESC_COOKIE.as_bytes())
                .map(|(_, value)| value)
                .collect();
            proptest::prop_assert_eq!(scanned, parsed, "header {:?}", header);
        }

        #[test]
        fn rewrite_agrees_with_pair_parsing(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "disable_esc", "disable_esc=", "=", ";", " ", "\t", "x", "v\"", "_esc",
                ]),
                0..12,
            )
        ) {
            let header = parts.concat();
            let named_ours = |pair: &[u8]| {
                cookie_pairs(pair).any(|(name, _)| name == DISABLE_ESC_COOKIE.as_bytes())
            };
            let expected = named_ours(header.as_bytes()).then(|| {
                header
                    .as_bytes()
                    .split(|b| *b == b';')
                    .map(<[u8]>::trim_ascii)
                    .filter(|pair| !pair.is_empty() && !named_ours(pair))
                    .collect::<Vec<_>>()
                    .join(&b"; "[..])
            });
            proptest::prop_assert_eq!(
                cookie_header_without_disable_esc(header.as_bytes()),
                expected,
                "header {:?}",
                header
            );
        }
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
    fn strip_rewrites_or_drops_a_single_header() {
        let mut request = pingora::http::RequestHeader::build("GET", b"/", None).unwrap();
        request
            .append_header("Cookie", "a=1; disable_esc=s; b=2")
            .unwrap();
        assert!(strip_disable_esc_cookies(&mut request));
        assert_eq!(request.headers["cookie"], "a=1; b=2");
        assert!(!strip_disable_esc_cookies(&mut request));
        let mut request = pingora::http::RequestHeader::build("GET", b"/", None).unwrap();
        request.append_header("Cookie", " disable_esc=s ").unwrap();
        assert!(strip_disable_esc_cookies(&mut request));
        assert!(request.headers.get("cookie").is_none());
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
