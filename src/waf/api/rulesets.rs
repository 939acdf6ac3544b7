//! The rulesets API of the new WAF: list, get, and the `http_request_firewall_managed` entry point
//! (whose PUT also drives the migration with `waf_migration`).

use serde_json::{json, Value};

use super::{read, write, Ctx, Handled};
use crate::admin::envelope::{ApiError, ApiSuccess};
use crate::config::Plan;
use crate::waf::catalog::{catalog, ManagedRuleset};
use crate::waf::errors::{self, ENTRYPOINT_NOT_ALLOWED};
use crate::waf::migration::{self, MigrationState, Phase};
use crate::waf::ruleset::validate::parse_entrypoint;
use crate::waf::ruleset::{EntryPoint, IdSource, PHASE};

fn managed_summary(ruleset: &ManagedRuleset) -> Value {
    json!({
        "id": ruleset.id,
        "name": ruleset.name,
        "description": ruleset.description,
        "kind": "managed",
        "phase": PHASE,
        "version": ruleset.version,
        "last_updated": ruleset.last_updated,
    })
}

fn managed_json(ruleset: &ManagedRuleset) -> Value {
    let mut value = managed_summary(ruleset);
    value["rules"] = ruleset
        .rules
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id,
                "version": ruleset.version,
                "action": rule.default_action,
                "categories": rule.categories,
                "description": rule.description,
                "enabled": rule.default_enabled,
                "last_updated": ruleset.last_updated,
                "ref": rule.id,
            })
        })
        .collect();
    value
}

/// `GET rulesets`: the zone's entry point (once deployed) and the managed rulesets.
pub(super) fn list(ctx: &Ctx<'_>) -> Handled {
    if !ctx.is_get() {
        return Err(errors::method_not_allowed());
    }
    let mut items: Vec<Value> = ctx
        .state()
        .entrypoint
        .iter()
        .map(EntryPoint::summary_json)
        .collect();
    items.extend(catalog().rulesets.iter().map(managed_summary));
    read(ApiSuccess::ok(Value::Array(items)))
}

/// `GET rulesets/{id}`: the entry point, or a managed ruleset with its rules and categories.
pub(super) fn get(ctx: &Ctx<'_>, id: &str) -> Handled {
    if !ctx.is_get() {
        return Err(errors::method_not_allowed());
    }
    if let Some(entrypoint) = ctx.state().entrypoint.as_ref().filter(|e| e.id == id) {
        return read(ApiSuccess::ok(entrypoint.to_json()));
    }
    match catalog().ruleset(id) {
        Some(ruleset) => read(ApiSuccess::ok(managed_json(ruleset))),
        None => Err(errors::not_found("ruleset", id)),
    }
}

/// `GET|PUT rulesets/phases/http_request_firewall_managed/entrypoint`.
pub(super) fn entrypoint(ctx: &Ctx<'_>) -> Handled {
    match ctx.method().as_str() {
        "GET" => match &ctx.state().entrypoint {
            Some(entrypoint) => read(ApiSuccess::ok(entrypoint.to_json())),
            None => Err(errors::not_found("entry point ruleset of phase", PHASE)),
        },
        "PUT" => put(ctx),
        _ => Err(errors::method_not_allowed()),
    }
}

fn put(ctx: &Ctx<'_>) -> Handled {
    ctx.require_write()?;
    let zone_state = ctx.state();
    let flag = ctx
        .query("waf_migration")
        .map(migration::parse_flag)
        .transpose()?;
    let next_migration_state = match flag {
        Some(flag) => {
            // A zone in validation mode was already admitted; only the blockers every phase
            // shares (URI overrides, 200 rules, 4 KB) can have appeared since.
            let blockers = match zone_state.migration.state {
                MigrationState::Complete => Vec::new(),
                MigrationState::Validation => migration::blockers(&zone_state.legacy, Phase::Two),
                MigrationState::Start => {
                    migration::blockers(&zone_state.legacy, super::migration::phase(ctx))
                }
            };
            Some(migration::transition(
                ctx.request.zone.plan,
                zone_state.migration.state,
                flag,
                blockers,
            )?)
        }
        None => None,
    };
    let body = parse_entrypoint(&ctx.json()?, zone_state.entrypoint.as_ref())?;
    if next_migration_state.is_none()
        && zone_state.migration.state == MigrationState::Start
        && ctx.request.zone.plan != Plan::Enterprise
        && !body.all_disabled()
    {
        return Err(ApiError::new(
            403,
            ENTRYPOINT_NOT_ALLOWED,
            "before migrating, only Enterprise zones may deploy enabled managed rules: disable every rule, or migrate with waf_migration=pending",
        ));
    }
    let now = ctx.now();
    let mut state = ctx.writable_state();
    let mut serial = state.next_serial;
    let mut ids = IdSource {
        zone_id: ctx.zone_id(),
        serial: &mut serial,
    };
    let updated = EntryPoint::replaced_by(state.entrypoint.as_ref(), body, &mut ids, &now);
    state.next_serial = serial;
    let result = updated.to_json();
    state.entrypoint = Some(updated);
    if let Some(next) = next_migration_state {
        state.migration.state = next;
        state.migration.changed_on = Some(now);
    }
    write(ApiSuccess::ok(result), state)
}
