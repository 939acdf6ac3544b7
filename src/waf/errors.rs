//! Error codes of the WAF endpoints (local codes, listed in the README's API section) and the
//! constructors that build their [`ApiError`]s.

use crate::admin::envelope::{ApiError, ErrorItem};

/// Only the anomaly (OWASP) package takes `sensitivity` / `action_mode` (Cloudflare's code).
pub const ANOMALY_ONLY: u32 = 1027;
/// Unknown package, group, rule, override, firewall rule, page rule or ruleset id.
pub const NOT_FOUND: u32 = 1003;
/// A body field is missing or holds a value the endpoint does not accept.
pub const INVALID_FIELD: u32 = 1004;
/// A list endpoint's `page` / `per_page` is not a positive integer.
pub const INVALID_PAGINATION: u32 = 1005;
/// A per-zone capacity (overrides, firewall rules, page rules) is reached.
pub const LIMIT_REACHED: u32 = 1006;
/// The zone has migrated: the previous-WAF endpoints are gone.
pub const MIGRATED: u32 = 1410;
/// The zone cannot migrate now (URI-based overrides, phase-1 blockers, 200 rules, 4 KB).
pub const INCOMPATIBLE: u32 = 1420;
/// Validation mode is for Enterprise zones only.
pub const PLAN_NOT_ALLOWED: u32 = 1421;
/// The requested migration transition is not allowed from the current state.
pub const INVALID_TRANSITION: u32 = 1422;
/// `waf_migration` is not one of `pending`, `1`, `validation`, `2`.
pub const INVALID_FLAG: u32 = 1423;
/// More than 200 firewall rules to migrate.
pub const TOO_MANY_FIREWALL_RULES: u32 = 1424;
/// A firewall rule to migrate has an expression over 4 KB.
pub const EXPRESSION_TOO_LONG: u32 = 1425;
/// Before migration the entry point may only be deployed by Enterprise zones or fully disabled.
pub const ENTRYPOINT_NOT_ALLOWED: u32 = 1426;
/// A blocker reported by the check: URI-based WAF overrides exist.
pub const URI_OVERRIDES_PRESENT: u32 = 1427;
/// A phase-1 blocker: the OWASP package is enabled while the WAF is on.
pub const OWASP_ENABLED: u32 = 1428;
/// A phase-1 blocker: firewall rules or page rules bypass, enable or disable the WAF.
pub const WAF_TOGGLING_RULES: u32 = 1429;
/// The zone has already migrated (check, config).
pub const ALREADY_MIGRATED: u32 = 1430;
/// A filter expression does not compile.
pub const INVALID_EXPRESSION: u32 = 1431;
/// Cloudflare's "Malformed JSON in request body".
pub const MALFORMED_JSON: u32 = 6007;
/// Cloudflare's "Authentication error" (caller may read but not write).
pub const FORBIDDEN: u32 = 10000;
/// Local code: method not allowed on a known route.
pub const METHOD_NOT_ALLOWED: u32 = 10405;

/// 400 with one item pointing at `pointer` in the request body.
pub fn invalid_field(pointer: &str, message: impl Into<String>) -> ApiError {
    ApiError::from_items(
        400,
        vec![ErrorItem::new(INVALID_FIELD, message).at(pointer)],
    )
}

/// 404 for an unknown id.
pub fn not_found(what: &str, id: &str) -> ApiError {
    ApiError::new(404, NOT_FOUND, format!("{what} {id} not found"))
}

/// 400 6007.
pub fn malformed_json() -> ApiError {
    ApiError::bad_request(MALFORMED_JSON, "Malformed JSON in request body")
}

/// 405 10405.
pub fn method_not_allowed() -> ApiError {
    ApiError::new(405, METHOD_NOT_ALLOWED, "Method not allowed")
}

/// 403 10000 for a caller without write permission.
pub fn forbidden() -> ApiError {
    ApiError::new(403, FORBIDDEN, "Authentication error")
}

/// Cloudflare's answer for an unknown route under a zone (400, 7003 + 7000).
pub fn no_route(zone_id: &str, rest: &[&str]) -> ApiError {
    ApiError::from_items(
        400,
        vec![
            ErrorItem::new(
                7003,
                format!(
                    "Could not route to /client/v4/zones/{zone_id}/{}, perhaps your object identifier is invalid?",
                    rest.join("/")
                ),
            ),
            ErrorItem::new(7000, "No route for that URI"),
        ],
    )
}

/// 410 for a previous-WAF endpoint of a migrated zone.
pub fn migrated() -> ApiError {
    ApiError::new(
        410,
        MIGRATED,
        "This zone uses the new WAF (managed rulesets); the previous WAF API is no longer available. \
         Use /zones/{zone_id}/rulesets/phases/http_request_firewall_managed/entrypoint instead.",
    )
}
