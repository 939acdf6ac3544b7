//! The WAF endpoints under `/client/v4/zones/{zone_id}/`, independent of the HTTP server.
//!
//! The admin router authenticates the caller, resolves the zone, then — for every path whose
//! first segments satisfy [`handles`] — builds a [`WafRequest`] and calls [`handle`]:
//!
//! ```text
//! let outcome = waf::api::handle(WafRequest { zone, state, method, path, query, body, can_write, now });
//! if let (Ok(_), Some(state)) = (&outcome.result, outcome.new_state) { persist SetWafZone(zone, state) }
//! answer outcome.result (on a failed persist, answer an error instead)
//! ```
//!
//! `handle` never touches shared state: it reads the zone's current [`WafZoneState`] and returns
//! the new one to persist (`new_state` is `Some` only on a successful write). Routes:
//! - previous WAF (410 once migrated): `settings/waf`, `firewall/waf/packages[/{id}[/groups|rules[/{id}]]]`,
//!   `firewall/waf/overrides[/{id}]`, `firewall/rules[/{id}]`, `pagerules[/{id}]`;
//! - migration: `waf_migration/check|config|status`;
//! - new WAF: `rulesets`, `rulesets/{id}`, `rulesets/phases/http_request_firewall_managed/entrypoint`.
//!
//! Writes (any method but GET) need `can_write` (else 403 10000).

mod firewall;
mod migration;
mod overrides;
mod packages;
mod rulesets;

use std::time::SystemTime;

use serde_json::Value;

use super::clock::rfc3339;
use super::errors::{self, invalid_field, INVALID_FIELD, INVALID_PAGINATION};
use super::WafZoneState;
use crate::admin::envelope::{paginate, ApiError, ApiResult, ApiSuccess, ErrorItem};
use crate::config::ZoneConfig;
use serde_json::Map;

/// One WAF API call, as the admin router hands it over.
#[derive(Debug, Clone, Copy)]
pub struct WafRequest<'a> {
    /// The zone addressed (its id names created objects, its plan gates validation mode).
    pub zone: &'a ZoneConfig,
    /// The zone's current WAF state (default for a zone never written).
    pub state: &'a WafZoneState,
    pub method: &'a http::Method,
    /// Path segments after `/client/v4/zones/{zone_id}/`, e.g. `["waf_migration", "check"]`.
    pub path: &'a [&'a str],
    /// Decoded query string pairs, in order.
    pub query: &'a [(String, String)],
    /// Raw request body (JSON for writes).
    pub body: &'a [u8],
    /// Whether the caller may write (e.g. a token with `waf:edit`).
    pub can_write: bool,
    /// The time of the request (timestamps of created objects and state changes).
    pub now: SystemTime,
}

/// What the router answers and persists.
#[derive(Debug, Clone, PartialEq)]
pub struct WafOutcome {
    pub result: ApiResult,
    /// The zone's new WAF state, to persist before answering; `None` when nothing changed.
    pub new_state: Option<WafZoneState>,
}

/// Whether the path (segments after `/zones/{zone_id}/`) belongs to the WAF.
pub fn handles(path: &[&str]) -> bool {
    matches!(
        path,
        ["settings", "waf"]
            | ["waf_migration", ..]
            | ["rulesets", ..]
            | ["firewall", ..]
            | ["pagerules", ..]
    )
}

/// Serves one WAF call. Never panics on any input.
pub fn handle(request: WafRequest<'_>) -> WafOutcome {
    let ctx = Ctx { request };
    match route(&ctx) {
        Ok((success, new_state)) => WafOutcome {
            result: Ok(success),
            new_state,
        },
        Err(error) => WafOutcome {
            result: Err(error),
            new_state: None,
        },
    }
}

/// A handler's answer: the response, and the state to persist (writes only).
type Handled = Result<(ApiSuccess, Option<WafZoneState>), ApiError>;

fn route(ctx: &Ctx<'_>) -> Handled {
    let path = ctx.request.path;
    let legacy = matches!(
        path,
        ["settings", "waf"] | ["firewall", ..] | ["pagerules", ..]
    );
    if legacy && packages::known_legacy_route(path) && ctx.request.state.migrated() {
        return Err(errors::migrated());
    }
    match path {
        ["settings", "waf"] => packages::setting(ctx),
        ["firewall", "waf", "packages", rest @ ..] => packages::route(ctx, rest),
        ["firewall", "waf", "overrides"] => overrides::collection(ctx),
        ["firewall", "waf", "overrides", id] => overrides::item(ctx, id),
        ["firewall", "rules"] => firewall::rules(ctx),
        ["firewall", "rules", id] => firewall::rule(ctx, id),
        ["pagerules"] => firewall::page_rules(ctx),
        ["pagerules", id] => firewall::page_rule(ctx, id),
        ["waf_migration", "check"] => migration::check(ctx),
        ["waf_migration", "config"] => migration::config(ctx),
        ["waf_migration", "status"] => migration::status(ctx),
        ["rulesets"] => rulesets::list(ctx),
        ["rulesets", "phases", super::ruleset::PHASE, "entrypoint"] => rulesets::entrypoint(ctx),
        ["rulesets", id] => rulesets::get(ctx, id),
        _ => Err(ctx.no_route()),
    }
}

/// Request helpers shared by the handlers.
struct Ctx<'a> {
    request: WafRequest<'a>,
}

impl Ctx<'_> {
    fn state(&self) -> &WafZoneState {
        self.request.state
    }

    fn zone_id(&self) -> &str {
        &self.request.zone.id
    }

    fn is_get(&self) -> bool {
        self.request.method == http::Method::GET
    }

    fn method(&self) -> &http::Method {
        self.request.method
    }

    fn no_route(&self) -> ApiError {
        errors::no_route(self.zone_id(), self.request.path)
    }

    /// 403 10000 unless the caller may write.
    fn require_write(&self) -> Result<(), ApiError> {
        if self.request.can_write {
            Ok(())
        } else {
            Err(errors::forbidden())
        }
    }

    fn now(&self) -> String {
        rfc3339(self.request.now)
    }

    fn query(&self, key: &str) -> Option<&str> {
        self.request
            .query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (400 6007 when it is not).
    fn json(&self) -> Result<Value, ApiError> {
        serde_json::from_slice(self.request.body).map_err(|_| errors::malformed_json())
    }

    /// A copy of the state to modify (with `created_on` set on the first write).
    fn writable_state(&self) -> WafZoneState {
        let mut state = self.request.state.clone();
        if state.created_on.is_none() {
            state.created_on = Some(self.now());
        }
        state
    }

    /// A page of `items` per the `page` / `per_page` query (defaults 1 and `default_per_page`).
    fn paginated<T: serde::Serialize>(
        &self,
        items: &[T],
        default_per_page: u64,
    ) -> Result<ApiSuccess, ApiError> {
        let number = |key: &str, default: u64, max: u64| match self.query(key) {
            None => Ok(default),
            Some(raw) => match raw.parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(ApiError::bad_request(
                    INVALID_PAGINATION,
                    format!("`{key}` must be an integer from 1 to {max}"),
                )),
            },
        };
        let page = number("page", 1, u64::from(u32::MAX))?;
        let per_page = number("per_page", default_per_page, 1000)?;
        Ok(paginate(items, page, per_page))
    }
}

/// A read answer.
fn read(success: ApiSuccess) -> Handled {
    Ok((success, None))
}

/// A write answer with the state to persist.
fn write(success: ApiSuccess, state: WafZoneState) -> Handled {
    Ok((success, Some(state)))
}

/// The body as a JSON object (400 otherwise).
fn object(value: &Value) -> Result<&Map<String, Value>, ApiError> {
    value
        .as_object()
        .ok_or_else(|| invalid_field("", "the body must be a JSON object"))
}

/// 400 naming every key not in `known`.
fn reject_unknown(object: &Map<String, Value>, known: &[&str]) -> Result<(), ApiError> {
    let unknown: Vec<ErrorItem> = object
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .map(|k| {
            ErrorItem::new(
                INVALID_FIELD,
                format!("unknown field `{k}`; expected {}", known.join(", ")),
            )
            .at(format!("/{k}"))
        })
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(ApiError::from_items(400, unknown))
    }
}
