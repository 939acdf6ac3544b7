//! Extension point for the WAF API (`/zones/{id}/waf_migration/*`, `/zones/{id}/rulesets*`,
//! `/zones/{id}/firewall/*`, `/zones/{id}/settings/waf`, `/zones/{id}/pagerules*`).
//!
//! The router has already authenticated the caller, resolved the zone (unknown and out-of-scope
//! ids never get here), checked `waf:read` for GET/HEAD and `waf:edit` for other methods, and
//! moved the request to a blocking thread (so [`crate::state::Writer::apply_with`] may be called
//! directly). The WAF module plugs in by making [`route`] call its handler, e.g.
//! `crate::waf::api::handle(call)`.

use std::sync::Arc;

use super::auth::Caller;
use super::codes;
use super::envelope::ApiResult;
use super::request::AdminRequest;
use crate::config::ZoneConfig;
use crate::state::{Snapshot, Writer};

/// One call routed to the WAF API.
#[derive(Debug)]
pub struct WafCall<'a> {
    pub caller: &'a Caller,
    /// The snapshot the router resolved the zone in.
    pub snapshot: &'a Arc<Snapshot>,
    /// The tenant-state writer (`Change::SetWafZone` through `apply_with`).
    pub writer: &'a Writer,
    pub zone: &'a ZoneConfig,
    /// Path segments after `/zones/{id}/`, e.g. `["waf_migration", "check"]`.
    pub rest: &'a [&'a str],
    /// The whole request (method, query, headers, bounded body; `body_bytes()` gives the 413).
    pub request: &'a AdminRequest,
}

/// First path segments (after `/zones/{id}/`) that belong to the WAF API.
pub const WAF_SEGMENTS: [&str; 5] = [
    "waf_migration",
    "rulesets",
    "firewall",
    "settings",
    "pagerules",
];

/// Serves one WAF call. Until the WAF module is plugged in, every WAF route is unknown.
pub fn route(call: WafCall<'_>) -> ApiResult {
    let _ = call;
    Err(codes::no_route())
}
