//! Previous WAF: the zone setting `waf`, packages, groups and rules.

use serde_json::{json, Value};

use super::{object, read, reject_unknown, write, Ctx, Handled};
use crate::admin::envelope::{ApiError, ApiSuccess};
use crate::waf::catalog::{catalog, DetectionMode, LegacyGroup, LegacyPackage, LegacyRule};
use crate::waf::errors::{self, invalid_field, ANOMALY_ONLY};
use crate::waf::legacy::{ActionMode, LegacyWaf, OnOff, Sensitivity};

/// Whether `path` is a previous-WAF route (those answer 410 after migration; others stay 400).
pub(super) fn known_legacy_route(path: &[&str]) -> bool {
    matches!(
        path,
        ["settings", "waf"]
            | ["firewall", "waf", "packages", ..]
            | ["firewall", "waf", "overrides"]
            | ["firewall", "waf", "overrides", _]
            | ["firewall", "rules"]
            | ["firewall", "rules", _]
            | ["pagerules"]
            | ["pagerules", _]
    )
}

fn setting_json(waf: &LegacyWaf) -> Value {
    json!({
        "id": "waf",
        "value": waf.setting,
        "editable": true,
        "modified_on": waf.setting_modified_on,
    })
}

/// `GET|PATCH /settings/waf`.
pub(super) fn setting(ctx: &Ctx<'_>) -> Handled {
    match ctx.method().as_str() {
        "GET" => read(ApiSuccess::ok(setting_json(&ctx.state().legacy))),
        "PATCH" => {
            ctx.require_write()?;
            let body = ctx.json()?;
            let fields = object(&body)?;
            reject_unknown(fields, &["value"])?;
            let value: OnOff = fields
                .get("value")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .ok_or_else(|| invalid_field("/value", "`value` must be `on` or `off`"))?;
            let mut state = ctx.writable_state();
            state.legacy.setting = value;
            state.legacy.setting_modified_on = Some(ctx.now());
            write(ApiSuccess::ok(setting_json(&state.legacy)), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}

fn package_json(package: &LegacyPackage, ctx: &Ctx<'_>, waf: &LegacyWaf) -> Value {
    let mut value = json!({
        "id": package.id,
        "name": package.name,
        "description": package.description,
        "detection_mode": package.detection_mode,
        "zone_id": ctx.zone_id(),
        "status": "active",
    });
    if package.detection_mode == DetectionMode::Anomaly {
        value["sensitivity"] = json!(waf.effective_sensitivity());
        value["action_mode"] = json!(waf.action_mode);
    }
    value
}

fn group_json(package: &LegacyPackage, group: &LegacyGroup, waf: &LegacyWaf) -> Value {
    let modified = group
        .rules
        .iter()
        .filter(|r| waf.rule_mode(&r.id, &r.default_mode) != r.default_mode)
        .count();
    json!({
        "id": group.id,
        "name": group.name,
        "description": group.description,
        "mode": waf.group_mode(&group.id, &group.default_mode),
        "rules_count": group.rules.len(),
        "modified_rules_count": modified,
        "package_id": package.id,
        "allowed_modes": ["on", "off"],
    })
}

fn rule_json(
    package: &LegacyPackage,
    group: &LegacyGroup,
    rule: &LegacyRule,
    waf: &LegacyWaf,
) -> Value {
    json!({
        "id": rule.id,
        "description": rule.description,
        "priority": rule.priority,
        "group": {"id": group.id, "name": group.name},
        "package_id": package.id,
        "allowed_modes": rule.allowed_modes,
        "mode": waf.rule_mode(&rule.id, &rule.default_mode),
    })
}

/// `firewall/waf/packages…`; `rest` is what follows `packages`.
pub(super) fn route(ctx: &Ctx<'_>, rest: &[&str]) -> Handled {
    let waf = &ctx.state().legacy;
    let find = |id: &str| {
        catalog()
            .package(id)
            .ok_or_else(|| errors::not_found("package", id))
    };
    match rest {
        [] => {
            only_get(ctx)?;
            let items: Vec<Value> = catalog()
                .packages
                .iter()
                .map(|p| package_json(p, ctx, waf))
                .collect();
            read(ctx.paginated(&items, 50)?)
        }
        [package_id] => {
            let package = find(package_id)?;
            match ctx.method().as_str() {
                "GET" => read(ApiSuccess::ok(package_json(package, ctx, waf))),
                "PATCH" => patch_package(ctx, package),
                _ => Err(errors::method_not_allowed()),
            }
        }
        [package_id, "groups"] => {
            only_get(ctx)?;
            let package = find(package_id)?;
            let items: Vec<Value> = package
                .groups
                .iter()
                .map(|g| group_json(package, g, waf))
                .collect();
            read(ctx.paginated(&items, 50)?)
        }
        [package_id, "groups", group_id] => {
            let package = find(package_id)?;
            let group = catalog()
                .group(package_id, group_id)
                .ok_or_else(|| errors::not_found("group", group_id))?;
            match ctx.method().as_str() {
                "GET" => read(ApiSuccess::ok(group_json(package, group, waf))),
                "PATCH" => {
                    let mode = patch_mode(ctx, &["on", "off"])?;
                    let mut state = ctx.writable_state();
                    set_mode(
                        &mut state.legacy.group_modes,
                        &group.id,
                        mode,
                        &group.default_mode,
                    );
                    write(
                        ApiSuccess::ok(group_json(package, group, &state.legacy)),
                        state,
                    )
                }
                _ => Err(errors::method_not_allowed()),
            }
        }
        [package_id, "rules"] => {
            only_get(ctx)?;
            let package = find(package_id)?;
            let group_filter = ctx.query("group_id");
            let items: Vec<Value> = package
                .groups
                .iter()
                .filter(|g| group_filter.is_none_or(|id| id == g.id))
                .flat_map(|g| g.rules.iter().map(move |r| (g, r)))
                .map(|(g, r)| rule_json(package, g, r, waf))
                .collect();
            read(ctx.paginated(&items, 50)?)
        }
        [package_id, "rules", rule_id] => {
            let package = find(package_id)?;
            let (group, rule) = catalog()
                .rule(package_id, rule_id)
                .ok_or_else(|| errors::not_found("rule", rule_id))?;
            match ctx.method().as_str() {
                "GET" => read(ApiSuccess::ok(rule_json(package, group, rule, waf))),
                "PATCH" => {
                    let allowed: Vec<&str> =
                        rule.allowed_modes.iter().map(String::as_str).collect();
                    let mode = patch_mode(ctx, &allowed)?;
                    let mut state = ctx.writable_state();
                    set_mode(
                        &mut state.legacy.rule_modes,
                        &rule.id,
                        mode,
                        &rule.default_mode,
                    );
                    write(
                        ApiSuccess::ok(rule_json(package, group, rule, &state.legacy)),
                        state,
                    )
                }
                _ => Err(errors::method_not_allowed()),
            }
        }
        _ => Err(ctx.no_route()),
    }
}

fn only_get(ctx: &Ctx<'_>) -> Result<(), ApiError> {
    if ctx.is_get() {
        Ok(())
    } else {
        Err(errors::method_not_allowed())
    }
}

/// Stores a mode, forgetting it when it equals the catalog default (zones keep only changes).
fn set_mode(
    modes: &mut std::collections::BTreeMap<String, String>,
    id: &str,
    mode: String,
    default_mode: &str,
) {
    if mode == default_mode {
        modes.remove(id);
    } else {
        modes.insert(id.to_string(), mode);
    }
}

/// Reads `{"mode": …}` and checks it against `allowed`.
fn patch_mode(ctx: &Ctx<'_>, allowed: &[&str]) -> Result<String, ApiError> {
    ctx.require_write()?;
    let body = ctx.json()?;
    let fields = object(&body)?;
    reject_unknown(fields, &["mode"])?;
    match fields.get("mode").and_then(Value::as_str) {
        Some(mode) if allowed.contains(&mode) => Ok(mode.to_string()),
        _ => Err(invalid_field(
            "/mode",
            format!("`mode` must be one of {}", allowed.join(", ")),
        )),
    }
}

fn patch_package(ctx: &Ctx<'_>, package: &LegacyPackage) -> Handled {
    ctx.require_write()?;
    let body = ctx.json()?;
    let fields = object(&body)?;
    reject_unknown(fields, &["sensitivity", "action_mode"])?;
    if package.detection_mode != DetectionMode::Anomaly {
        return Err(ApiError::bad_request(
            ANOMALY_ONLY,
            "Only anomaly WAF packages can have their package attributes updated",
        ));
    }
    let mut state = ctx.writable_state();
    if let Some(value) = fields.get("sensitivity") {
        let sensitivity: Sensitivity = serde_json::from_value(value.clone()).map_err(|_| {
            invalid_field(
                "/sensitivity",
                "`sensitivity` must be one of high, medium, low, off",
            )
        })?;
        state.legacy.sensitivity = Some(sensitivity);
    }
    if let Some(value) = fields.get("action_mode") {
        let mode: ActionMode = serde_json::from_value(value.clone()).map_err(|_| {
            invalid_field(
                "/action_mode",
                "`action_mode` must be one of simulate, block, challenge",
            )
        })?;
        state.legacy.action_mode = mode;
    }
    write(
        ApiSuccess::ok(package_json(package, ctx, &state.legacy)),
        state,
    )
}
