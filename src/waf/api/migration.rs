//! `waf_migration/check`, `waf_migration/config`, `waf_migration/status`.

use serde_json::json;

use super::{read, Ctx, Handled};
use crate::admin::envelope::{ApiSuccess, ErrorItem};
use crate::waf::errors::{self, ALREADY_MIGRATED};
use crate::waf::migration::{self, config::generate, Phase};

/// `phase_two=1` selects phase 2 eligibility; anything else, phase 1.
pub(super) fn phase(ctx: &Ctx<'_>) -> Phase {
    if ctx.query("phase_two") == Some("1") {
        Phase::Two
    } else {
        Phase::One
    }
}

fn only_get(ctx: &Ctx<'_>) -> Result<(), crate::admin::envelope::ApiError> {
    if ctx.is_get() {
        Ok(())
    } else {
        Err(errors::method_not_allowed())
    }
}

/// `GET waf_migration/check`: `{compatible, migration_state}`; `messages` say what blocks.
pub(super) fn check(ctx: &Ctx<'_>) -> Handled {
    only_get(ctx)?;
    let state = ctx.state();
    let migration_state = state.migration.state.as_str();
    if state.migrated() {
        return read(
            ApiSuccess::ok(json!({"compatible": false, "migration_state": migration_state}))
                .with_messages(vec![ErrorItem::new(
                    ALREADY_MIGRATED,
                    "the zone has already migrated to the new WAF",
                )]),
        );
    }
    let blockers = migration::blockers(&state.legacy, phase(ctx));
    read(
        ApiSuccess::ok(
            json!({"compatible": blockers.is_empty(), "migration_state": migration_state}),
        )
        .with_messages(blockers),
    )
}

/// `GET waf_migration/config`: the entry point equivalent to the zone's previous WAF.
pub(super) fn config(ctx: &Ctx<'_>) -> Handled {
    only_get(ctx)?;
    if ctx.state().migrated() {
        return Err(migration::already_migrated());
    }
    let generated = generate(&ctx.state().legacy);
    read(
        ApiSuccess::ok(json!({
            "name": "default",
            "description": "",
            "kind": "zone",
            "phase": crate::waf::ruleset::PHASE,
            "rules": generated.rules,
        }))
        .with_messages(generated.messages),
    )
}

/// `GET waf_migration/status`.
pub(super) fn status(ctx: &Ctx<'_>) -> Handled {
    only_get(ctx)?;
    let state = ctx.state();
    let deployed = state
        .entrypoint
        .as_ref()
        .is_some_and(|e| e.has_enabled_execute_rule());
    let created = state.created_on.clone().unwrap_or_else(|| ctx.now());
    read(ApiSuccess::ok(migration::status_json(
        &state.legacy,
        &state.migration,
        deployed,
        &created,
    )))
}
