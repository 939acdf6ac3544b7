//! Discovery endpoints that SDKs and scripts call before anything else: `/zones`,
//! `/zones/{id}`, `/accounts`, `/accounts/{id}`, `/user/tokens/verify`. Objects carry the fields
//! Cloudflare's SDKs decode; fields escgate has no value for (dates, name servers) are left out
//! rather than invented.

use serde_json::{json, Value};

use super::auth::{Caller, Permission};
use super::codes;
use super::envelope::{paginate, ApiError, ApiResult, ApiSuccess};
use super::request::AdminRequest;
use crate::config::{AccountConfig, Config, ZoneConfig};

/// Default `per_page` of list endpoints.
pub const DEFAULT_PER_PAGE: u64 = 20;
/// `per_page` is clamped into `MIN_PER_PAGE..=MAX_PER_PAGE`, as Cloudflare does.
pub const MIN_PER_PAGE: u64 = 5;
/// See [`MIN_PER_PAGE`].
pub const MAX_PER_PAGE: u64 = 50;

/// The zone object.
pub fn zone_json(zone: &ZoneConfig, config: &Config, caller: &Caller) -> Value {
    let account_name = config
        .account_by_id(&zone.account_id)
        .map(|a| a.name.as_str())
        .unwrap_or("");
    json!({
        "id": zone.id,
        "name": zone.name,
        "status": "active",
        "paused": false,
        "type": "full",
        "development_mode": 0,
        "name_servers": [],
        "original_name_servers": [],
        "original_registrar": null,
        "original_dnshost": null,
        "account": {"id": zone.account_id, "name": account_name},
        "owner": {"id": null, "type": "organization", "name": account_name},
        "permissions": caller.permission_names(),
        "plan": plan_json(zone),
        "meta": {"phishing_detected": false},
    })
}

fn plan_json(zone: &ZoneConfig) -> Value {
    let legacy_id = zone.plan.as_str();
    let name = match zone.plan {
        crate::config::Plan::Free => "Free Website",
        crate::config::Plan::Pro => "Pro Website",
        crate::config::Plan::Business => "Business Website",
        crate::config::Plan::Enterprise => "Enterprise Website",
    };
    json!({
        "id": legacy_id,
        "name": name,
        "price": 0,
        "currency": "USD",
        "frequency": "",
        "is_subscribed": true,
        "can_subscribe": false,
        "legacy_id": legacy_id,
        "legacy_discount": false,
        "externally_managed": false,
    })
}

/// The account object.
pub fn account_json(account: &AccountConfig) -> Value {
    json!({
        "id": account.id,
        "name": account.name,
        "type": "standard",
        "settings": {
            "enforce_twofactor": false,
            "use_account_custom_ns_by_default": false,
        },
    })
}

fn require(caller: &Caller, permission: Permission) -> Result<(), ApiError> {
    if caller.can(permission) {
        Ok(())
    } else {
        Err(codes::not_permitted(permission.as_str()))
    }
}

fn paging(req: &AdminRequest) -> Result<(u64, u64), ApiError> {
    let number = |name: &str, default: u64| -> Result<u64, ApiError> {
        match req.query_param(name) {
            None => Ok(default),
            Some(text) => text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::bad_request(
                    codes::INVALID_QUERY,
                    format!("{name} must be a positive integer, got {text:?}"),
                )
            }),
        }
    };
    let page = number("page", 1)?;
    let per_page = number("per_page", DEFAULT_PER_PAGE)?.clamp(MIN_PER_PAGE, MAX_PER_PAGE);
    Ok((page, per_page))
}

/// `name` filter: exact (case-insensitive), or `contains:`, `starts_with:`, `ends_with:`.
fn name_matches(filter: &str, name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let filter = filter.to_ascii_lowercase();
    if let Some(part) = filter.strip_prefix("contains:") {
        name.contains(part)
    } else if let Some(part) = filter.strip_prefix("starts_with:") {
        name.starts_with(part)
    } else if let Some(part) = filter.strip_prefix("ends_with:") {
        name.ends_with(part)
    } else {
        name == filter
    }
}

/// `GET /zones`: zones in the caller's scope, filtered by `name`, `account.id`, `account.name`,
/// `status`, paginated.
pub fn list_zones(config: &Config, caller: &Caller, req: &AdminRequest) -> ApiResult {
    require(caller, Permission::ZoneRead)?;
    let (page, per_page) = paging(req)?;
    let name = req.query_param("name");
    let account_id = req.query_param("account.id");
    let account_name = req.query_param("account.name");
    let status = req.query_param("status");
    let zones: Vec<Value> = config
        .zones
        .iter()
        .filter(|z| caller.covers_zone(z))
        .filter(|z| name.as_deref().is_none_or(|f| name_matches(f, &z.name)))
        .filter(|z| account_id.as_deref().is_none_or(|id| z.account_id == id))
        .filter(|z| {
            account_name.as_deref().is_none_or(|f| {
                config
                    .account_by_id(&z.account_id)
                    .is_some_and(|a| name_matches(f, &a.name))
            })
        })
        .filter(|_| status.as_deref().is_none_or(|s| s == "active"))
        .map(|z| zone_json(z, config, caller))
        .collect();
    Ok(paginate(&zones, page, per_page))
}

/// `GET /accounts`: accounts in the caller's scope, filtered by `name`, paginated.
pub fn list_accounts(config: &Config, caller: &Caller, req: &AdminRequest) -> ApiResult {
    require(caller, Permission::AccountRead)?;
    let (page, per_page) = paging(req)?;
    let name = req.query_param("name");
    let accounts: Vec<Value> = config
        .accounts
        .iter()
        .filter(|a| caller.covers_account(&a.id))
        .filter(|a| name.as_deref().is_none_or(|f| name_matches(f, &a.name)))
        .map(account_json)
        .collect();
    Ok(paginate(&accounts, page, per_page))
}

/// `GET /zones/{id}` (zone already resolved and in scope).
pub fn get_zone(config: &Config, caller: &Caller, zone: &ZoneConfig) -> ApiResult {
    require(caller, Permission::ZoneRead)?;
    Ok(ApiSuccess::ok(zone_json(zone, config, caller)))
}

/// `GET /accounts/{id}` (account already resolved and in scope).
pub fn get_account(caller: &Caller, account: &AccountConfig) -> ApiResult {
    require(caller, Permission::AccountRead)?;
    Ok(ApiSuccess::ok(account_json(account)))
}

/// `GET /user/tokens/verify`: only meaningful for a bearer token.
pub fn verify_token(caller: &Caller) -> ApiResult {
    if !caller.is_token {
        return Err(ApiError::bad_request(
            codes::MISSING_CREDENTIALS,
            "Missing Authorization header: /user/tokens/verify checks an API token, not a key",
        ));
    }
    Ok(ApiSuccess::ok(json!({"id": caller.id, "status": "active"})))
}
