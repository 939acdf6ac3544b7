//! Previous WAF: URI-based overrides (`firewall/waf/overrides`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{read, write, Ctx, Handled};
use crate::admin::envelope::{ApiError, ApiSuccess, ErrorItem};
use crate::waf::catalog::catalog;
use crate::waf::errors::{self, invalid_field, INVALID_FIELD, LIMIT_REACHED};
use crate::waf::ids::object_id;
use crate::waf::legacy::UriOverride;

/// Most URI-based overrides per zone.
pub const MAX_OVERRIDES: usize = 100;
/// Longest URL pattern of an override.
const MAX_URL_LEN: usize = 1000;
const REWRITABLE_ACTIONS: [&str; 5] = ["block", "challenge", "simulate", "disable", "default"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideBody {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    paused: bool,
    urls: Vec<String>,
    #[serde(default)]
    priority: i64,
    #[serde(default)]
    groups: BTreeMap<String, String>,
    #[serde(default)]
    rules: BTreeMap<String, String>,
    #[serde(default)]
    rewrite_action: BTreeMap<String, String>,
}

/// Parses and checks an override body against the catalog.
fn parse(value: Value, id: String) -> Result<UriOverride, ApiError> {
    let body: OverrideBody = serde_json::from_value(value)
        .map_err(|e| invalid_field("", format!("invalid override: {e}")))?;
    // A client may send back the object it read; the path names the override, not the body.
    let _ = body.id;
    let mut problems = Vec::new();
    if body.urls.is_empty() {
        problems.push(
            ErrorItem::new(INVALID_FIELD, "`urls` needs at least one URL pattern").at("/urls"),
        );
    }
    for (index, url) in body.urls.iter().enumerate() {
        if url.is_empty() || url.len() > MAX_URL_LEN || url.chars().any(char::is_whitespace) {
            problems.push(
                ErrorItem::new(
                    INVALID_FIELD,
                    format!("a URL pattern is 1 to {MAX_URL_LEN} characters without spaces"),
                )
                .at(format!("/urls/{index}")),
            );
        }
    }
    for (group_id, mode) in &body.groups {
        let known = catalog()
            .packages
            .iter()
            .any(|p| catalog().group(&p.id, group_id).is_some());
        if !known || !["on", "off", "default"].contains(&mode.as_str()) {
            problems.push(
                ErrorItem::new(
                    INVALID_FIELD,
                    format!("group {group_id}: unknown group, or mode not on/off/default"),
                )
                .at(format!("/groups/{group_id}")),
            );
        }
    }
    for (rule_id, mode) in &body.rules {
        let allowed = catalog()
            .legacy_rule(rule_id)
            .is_some_and(|(_, rule)| mode == "default" || rule.allowed_modes.contains(mode));
        if !allowed {
            problems.push(
                ErrorItem::new(
                    INVALID_FIELD,
                    format!("rule {rule_id}: unknown rule, or a mode it does not allow"),
                )
                .at(format!("/rules/{rule_id}")),
            );
        }
    }
    for (from, to) in &body.rewrite_action {
        if !REWRITABLE_ACTIONS.contains(&from.as_str())
            || !REWRITABLE_ACTIONS.contains(&to.as_str())
        {
            problems.push(
                ErrorItem::new(
                    INVALID_FIELD,
                    format!("rewrite_action uses {}", REWRITABLE_ACTIONS.join(", ")),
                )
                .at(format!("/rewrite_action/{from}")),
            );
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::from_items(400, problems));
    }
    Ok(UriOverride {
        id,
        description: body.description,
        paused: body.paused,
        urls: body.urls,
        priority: body.priority,
        groups: body.groups,
        rules: body.rules,
        rewrite_action: body.rewrite_action,
    })
}

/// `GET|POST firewall/waf/overrides`.
pub(super) fn collection(ctx: &Ctx<'_>) -> Handled {
    match ctx.method().as_str() {
        "GET" => {
            let mut items: Vec<&UriOverride> = ctx.state().legacy.overrides.iter().collect();
            items.sort_by_key(|o| o.priority);
            read(ctx.paginated(&items, 50)?)
        }
        "POST" => {
            ctx.require_write()?;
            let body = ctx.json()?;
            let mut state = ctx.writable_state();
            if state.legacy.overrides.len() >= MAX_OVERRIDES {
                return Err(ApiError::bad_request(
                    LIMIT_REACHED,
                    format!("a zone holds at most {MAX_OVERRIDES} URI-based overrides"),
                ));
            }
            state.next_serial += 1;
            let id = object_id(ctx.zone_id(), "override", state.next_serial);
            let created = parse(body, id)?;
            state.legacy.overrides.push(created.clone());
            write(ApiSuccess::ok(json!(created)), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}

/// `GET|PUT|DELETE firewall/waf/overrides/{id}`.
pub(super) fn item(ctx: &Ctx<'_>, id: &str) -> Handled {
    let position = ctx
        .state()
        .legacy
        .overrides
        .iter()
        .position(|o| o.id == id)
        .ok_or_else(|| errors::not_found("override", id))?;
    match ctx.method().as_str() {
        "GET" => read(ApiSuccess::ok(json!(
            ctx.state().legacy.overrides[position]
        ))),
        "PUT" => {
            ctx.require_write()?;
            let updated = parse(ctx.json()?, id.to_string())?;
            let mut state = ctx.writable_state();
            state.legacy.overrides[position] = updated.clone();
            write(ApiSuccess::ok(json!(updated)), state)
        }
        "DELETE" => {
            ctx.require_write()?;
            let mut state = ctx.writable_state();
            state.legacy.overrides.remove(position);
            write(ApiSuccess::ok(json!({"id": id})), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}
