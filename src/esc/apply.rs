//! Applying the matched entries of a zone, one small function per request/response step.

use http::header::{CONTENT_TYPE, HOST, LOCATION, SET_COOKIE};
use pingora::http::{RequestHeader, ResponseHeader};

use super::actions::{Action, EscEntry, FeatureSet, Redirect, ResponseReplacement};
use crate::rules::RequestView;

/// The entries of `entries` whose bit is set in `matched`, in config order.
pub fn matched_entries(entries: &[EscEntry], matched: u64) -> impl Iterator<Item = &EscEntry> {
    entries
        .iter()
        .enumerate()
        .filter(move |(index, _)| matched >> index & 1 == 1)
        .map(|(_, entry)| entry)
}

/// The bitmask of entries whose `when` matches the request. The view is built only when an
/// entry has a `when` (entries without one, the common case, match every request).
pub fn match_entries<'r>(entries: &[EscEntry], request: impl FnOnce() -> RequestView<'r>) -> u64 {
    let request = std::cell::LazyCell::new(request);
    entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| {
            entry
                .when
                .as_ref()
                .is_none_or(|when| when.matches(&request))
        })
        .fold(0, |mask, (index, _)| mask | 1 << index)
}

/// What the request phase decides from the matched entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestPlan<'a> {
    /// The first matching `redirect`: answer with it, do not contact the origin.
    pub redirect: Option<&'a Redirect>,
    /// Index of the origin address in the zone's upstream table (0 = the zone's origin).
    pub address: u16,
    /// Index of the SNI in the zone's upstream table (0 = the zone's SNI).
    pub sni: u16,
    /// Edge features switched off for this request.
    pub features_off: FeatureSet,
}

/// Folds the matched entries into a [`RequestPlan`] (a later override wins).
pub fn plan_request(entries: &[EscEntry], matched: u64) -> RequestPlan<'_> {
    let mut plan = RequestPlan::default();
    for action in matched_entries(entries, matched).flat_map(|e| &e.actions) {
        match action {
            Action::Redirect(redirect) if plan.redirect.is_none() => {
                plan.redirect = Some(redirect);
            }
            Action::ResolveOverride(address) => plan.address = *address,
            Action::Sni(sni) => plan.sni = *sni,
            Action::FeatureExceptions(set) => plan.features_off = plan.features_off.union(*set),
            _ => {}
        }
    }
    plan
}

/// Applies header edits, Host switching and URI rewrites to the request sent to the origin.
pub fn apply_upstream_request(entries: &[EscEntry], matched: u64, request: &mut RequestHeader) {
    for action in matched_entries(entries, matched).flat_map(|e| &e.actions) {
        match action {
            Action::RequestHeaders(edits) => edits.apply(request),
            Action::HostHeader(host) => {
                let _ = request.insert_header(HOST, host.clone());
            }
            Action::RewriteUri(rewrite) => {
                if let Some(uri) = rewrite.rewrite(&request.uri) {
                    request.set_uri(uri);
                }
            }
            _ => {}
        }
    }
}

/// The replacement for a response with `status`: the first matching `custom_error` or
/// `status_redirect`, in entry order.
pub fn response_replacement(
    entries: &[EscEntry],
    matched: u64,
    status: u16,
) -> Option<ResponseReplacement> {
    matched_entries(entries, matched)
        .flat_map(|e| &e.actions)
        .find_map(|action| match action {
            Action::CustomError(custom) if custom.statuses.contains(&status) => {
                Some(ResponseReplacement {
                    status: http::StatusCode::from_u16(status).ok()?,
                    header: (CONTENT_TYPE, custom.content_type.clone()),
                    body: custom.body.clone(),
                })
            }
            Action::StatusRedirect(redirect) if redirect.statuses.contains(&status) => {
                Some(ResponseReplacement {
                    status: redirect.code,
                    header: (LOCATION, redirect.location.clone()),
                    body: bytes::Bytes::new(),
                })
            }
            _ => None,
        })
}

/// Applies response header edits and added cookies to the response sent to the client.
pub fn apply_response_headers(entries: &[EscEntry], matched: u64, response: &mut ResponseHeader) {
    for action in matched_entries(entries, matched).flat_map(|e| &e.actions) {
        match action {
            Action::ResponseHeaders(edits) => edits.apply(response),
            Action::AddCookies(cookies) => {
                for cookie in cookies {
                    let _ = response.append_header(SET_COOKIE, cookie.clone());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::esc::headers::WireName;
    use crate::esc::HeaderEdits;
    use http::HeaderValue;

    fn entry(actions: Vec<Action>) -> EscEntry {
        EscEntry {
            description: String::new(),
            when: None,
            actions,
        }
    }

    fn set(name: &'static str, value: &'static str) -> Action {
        Action::RequestHeaders(HeaderEdits {
            set: vec![(WireName::from_static(name), HeaderValue::from_static(value))],
            ..HeaderEdits::default()
        })
    }

    #[test]
    fn later_set_wins_and_unmatched_entries_are_skipped() {
        let entries = vec![entry(vec![set("x-a", "1")]), entry(vec![set("x-a", "2")])];
        let mut request = RequestHeader::build("GET", b"/", None).unwrap();
        apply_upstream_request(&entries, 0b11, &mut request);
        assert_eq!(request.headers["x-a"], "2");
        let mut request = RequestHeader::build("GET", b"/", None).unwrap();
        apply_upstream_request(&entries, 0b01, &mut request);
        assert_eq!(request.headers["x-a"], "1");
    }

    #[test]
    fn the_view_is_built_only_for_conditions() {
        let unconditional = vec![entry(vec![set("x-a", "1")]), entry(vec![set("x-b", "2")])];
        let no_view = || -> RequestView<'static> { panic!("view built without a condition") };
        assert_eq!(match_entries(&unconditional, no_view), 0b11);

        let mut conditional = unconditional;
        conditional[1].when = Some(
            crate::rules::Filter::compile(
                r#"http.request.uri.path eq "/a""#,
                &crate::rules::Limits::default(),
            )
            .unwrap(),
        );
        let request = RequestHeader::build("GET", b"/b", None).unwrap();
        let mut built = 0;
        let view = || {
            built += 1;
            crate::proxy::view::request_view(&request, None, false)
        };
        assert_eq!(match_entries(&conditional, view), 0b01);
        assert_eq!(built, 1);
    }

    #[test]
    fn first_redirect_wins_and_overrides_fold() {
        let redirect = |to: &str| {
            Action::Redirect(Redirect {
                status: http::StatusCode::FOUND,
                to: to.into(),
                location: HeaderValue::from_str(to).unwrap(),
                preserve_query: true,
            })
        };
        let entries = vec![
            entry(vec![Action::ResolveOverride(1), redirect("/a")]),
            entry(vec![Action::ResolveOverride(2), redirect("/b?x=1")]),
        ];
        let plan = plan_request(&entries, 0b11);
        assert_eq!(plan.address, 2);
        assert_eq!(plan.redirect.unwrap().to, "/a");
        let plan = plan_request(&entries, 0b10);
        assert_eq!(
            plan.redirect.unwrap().location_for(Some("q=2")),
            "/b?x=1&q=2"
        );
    }
}
