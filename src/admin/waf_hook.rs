//! The WAF API (`/zones/{id}/waf_migration/*`, `/zones/{id}/rulesets*`, `/zones/{id}/firewall/*`,
//! `/zones/{id}/settings/waf`, `/zones/{id}/pagerules*`), plugged into the admin router.
//!
//! The router has already authenticated the caller, resolved the zone (unknown and out-of-scope
//! ids never get here) and checked `waf:read`; `waf:edit` becomes `can_write`. Writes run
//! [`crate::waf::api::handle`] under the writer's lock on the zone's current state, so two
//! concurrent WAF writes to a zone cannot lose each other, and the new state is persisted before
//! the answer.

use std::sync::Arc;
use std::time::SystemTime;

use super::auth::{Caller, Permission};
use super::codes;
use super::envelope::ApiResult;
use super::request::AdminRequest;
use crate::config::ZoneConfig;
use crate::state::{Change, Snapshot, WriteError, Writer};
use crate::waf::api::{handle, WafRequest};
use crate::waf::WafZoneState;

/// One call routed to the WAF API.
#[derive(Debug)]
pub struct WafCall<'a> {
    pub caller: &'a Caller,
    /// The snapshot the router resolved the zone in.
    pub snapshot: &'a Arc<Snapshot>,
    pub writer: &'a Writer,
    pub zone: &'a ZoneConfig,
    /// Path segments after `/zones/{id}/`, e.g. `["waf_migration", "check"]`.
    pub rest: &'a [&'a str],
    pub request: &'a AdminRequest,
}

/// Whether the path (segments after `/zones/{id}/`) belongs to the WAF API.
pub fn is_waf_path(rest: &[&str]) -> bool {
    crate::waf::api::handles(rest)
}

/// A handler answer that must not be persisted (read, or refused write).
#[derive(Debug)]
struct NotPersisted(Box<ApiResult>);

impl std::fmt::Display for NotPersisted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WAF call changed nothing")
    }
}

impl std::error::Error for NotPersisted {}

/// Serves one WAF call.
pub fn route(call: WafCall<'_>) -> ApiResult {
    let request = call.request;
    let body = request.body_bytes()?;
    if !body.is_empty() && request.method != http::Method::GET {
        request.require_json()?;
    }
    let query = request.query_pairs();
    let can_write = call.caller.can(Permission::WafEdit);
    let run = |state: &WafZoneState| {
        handle(WafRequest {
            zone: call.zone,
            state,
            method: &request.method,
            path: call.rest,
            query: &query,
            body,
            can_write,
            now: SystemTime::now(),
        })
    };
    if request.method == http::Method::GET {
        let tenant = &call.snapshot.tenant;
        let default = WafZoneState::default();
        return run(tenant.waf_zone(&call.zone.id).map_or(&default, |s| &**s)).result;
    }
    let zone_id = call.zone.id.clone();
    let mut answer = None;
    let written = call.writer.apply_with(|current| {
        let default = WafZoneState::default();
        let state = current.tenant.waf_zone(&zone_id).map_or(&default, |s| &**s);
        let outcome = run(state);
        match (outcome.result.is_ok(), outcome.new_state) {
            (true, Some(new_state)) => {
                answer = Some(outcome.result);
                Ok(Change::SetWafZone {
                    zone_id: zone_id.clone(),
                    state: Box::new(new_state),
                })
            }
            _ => Err(NotPersisted(Box::new(outcome.result))),
        }
    });
    match written {
        Ok(_) => answer.unwrap_or_else(|| Err(codes::state_not_saved())),
        Err(WriteError::Rejected(NotPersisted(result))) => *result,
        Err(WriteError::Store(e)) => {
            tracing::error!(error = %e, "WAF write not persisted");
            Err(codes::state_not_saved())
        }
    }
}
