//! The migration of a zone from the previous WAF to the new one (spec 3.2): eligibility, the
//! `start → validation → complete` state machine, and the status resource.
//!
//! Transitions, all triggered by a PUT of the entry point with `waf_migration`:
//! - `start --validation--> validation`: Enterprise only, zone eligible; both WAFs run, new first.
//! - `start --pending--> complete` and `validation --pending--> complete`: zone eligible.
//! - anything from `complete`, and `validation --validation-->`: refused (409). Irreversible.

pub mod config;
pub mod url_pattern;

use serde::{Deserialize, Serialize};

use crate::admin::envelope::{ApiError, ErrorItem};
use crate::config::Plan;
use crate::waf::errors::{
    ALREADY_MIGRATED, EXPRESSION_TOO_LONG, INCOMPATIBLE, INVALID_FLAG, INVALID_TRANSITION,
    OWASP_ENABLED, PLAN_NOT_ALLOWED, TOO_MANY_FIREWALL_RULES, URI_OVERRIDES_PRESENT,
    WAF_TOGGLING_RULES,
};
use crate::waf::legacy::{LegacyWaf, Sensitivity};

/// Most firewall rules the migration translates (spec 8).
pub const MAX_MIGRATED_FIREWALL_RULES: usize = 200;
/// Longest firewall rule expression the migration translates, in bytes (spec 8).
pub const MAX_MIGRATED_EXPRESSION_BYTES: usize = 4096;

/// `migration_state`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MigrationState {
    #[default]
    Start,
    Validation,
    Complete,
}

impl MigrationState {
    pub fn as_str(self) -> &'static str {
        match self {
            MigrationState::Start => "start",
            MigrationState::Validation => "validation",
            MigrationState::Complete => "complete",
        }
    }
}

/// The durable migration record of a zone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MigrationRecord {
    pub state: MigrationState,
    /// When the zone entered `state` (RFC 3339); `None` while in `start` and never written.
    pub changed_on: Option<String>,
}

/// Which eligibility rules apply: phase 1 (before 2022-09-19) or phase 2 (`phase_two=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    One,
    Two,
}

/// `waf_migration` query value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationFlag {
    /// `pending` / `1`: finish the migration.
    Pending,
    /// `validation` / `2`: enter validation mode.
    Validation,
}

/// Parses `waf_migration`; anything but `pending`, `1`, `validation`, `2` is a 400.
pub fn parse_flag(value: &str) -> Result<MigrationFlag, ApiError> {
    match value {
        "pending" | "1" => Ok(MigrationFlag::Pending),
        "validation" | "2" => Ok(MigrationFlag::Validation),
        other => Err(ApiError::bad_request(
            INVALID_FLAG,
            format!("invalid waf_migration value `{other}`: expected pending, 1, validation or 2"),
        )),
    }
}

/// Everything that keeps the zone from migrating under `phase`, each in words a user can act on.
/// Empty: the zone is compatible.
pub fn blockers(waf: &LegacyWaf, phase: Phase) -> Vec<ErrorItem> {
    let mut found = Vec::new();
    if !waf.overrides.is_empty() {
        let ids: Vec<&str> = waf.overrides.iter().map(|o| o.id.as_str()).collect();
        found.push(ErrorItem::new(
            URI_OVERRIDES_PRESENT,
            format!(
                "the zone has {} URI-based WAF override(s): delete them first with DELETE /zones/{{zone_id}}/firewall/waf/overrides/{{id}} (ids: {})",
                ids.len(),
                ids.join(", ")
            ),
        ));
    }
    let bypass = waf.waf_bypass_rules();
    if phase == Phase::One {
        if waf.setting.is_on() && waf.effective_sensitivity() != Sensitivity::Off {
            found.push(ErrorItem::new(
                OWASP_ENABLED,
                "phase 1 requires the WAF off, or only the Cloudflare package on: set the OWASP package sensitivity to off, or check with phase_two=1",
            ));
        }
        if !bypass.is_empty() {
            let ids: Vec<&str> = bypass.iter().map(|r| r.id.as_str()).collect();
            found.push(ErrorItem::new(
                WAF_TOGGLING_RULES,
                format!(
                    "phase 1 does not migrate firewall rules that bypass the WAF (ids: {}); check with phase_two=1",
                    ids.join(", ")
                ),
            ));
        }
        if !waf.page_rules.is_empty() {
            let ids: Vec<&str> = waf.page_rules.iter().map(|r| r.id.as_str()).collect();
            found.push(ErrorItem::new(
                WAF_TOGGLING_RULES,
                format!(
                    "phase 1 does not migrate page rules that disable security or turn the WAF on or off (ids: {}); check with phase_two=1",
                    ids.join(", ")
                ),
            ));
        }
    }
    if bypass.len() > MAX_MIGRATED_FIREWALL_RULES {
        found.push(ErrorItem::new(
            TOO_MANY_FIREWALL_RULES,
            format!(
                "{} firewall rules bypass the WAF and would be migrated; at most {MAX_MIGRATED_FIREWALL_RULES} can be: contact support, or remove {} of them",
                bypass.len(),
                bypass.len() - MAX_MIGRATED_FIREWALL_RULES
            ),
        ));
    }
    for rule in &bypass {
        let len = rule.filter.expression.len();
        if len > MAX_MIGRATED_EXPRESSION_BYTES {
            found.push(ErrorItem::new(
                EXPRESSION_TOO_LONG,
                format!(
                    "firewall rule {} has a {len}-byte expression; at most {MAX_MIGRATED_EXPRESSION_BYTES} bytes can be migrated: contact support, or shorten it",
                    rule.id
                ),
            ));
        }
    }
    found
}

/// The state a PUT with `flag` leads to, or why it is refused.
pub fn transition(
    plan: Plan,
    current: MigrationState,
    flag: MigrationFlag,
    blockers: Vec<ErrorItem>,
) -> Result<MigrationState, ApiError> {
    match (current, flag) {
        (MigrationState::Complete, _) => Err(already_migrated()),
        (MigrationState::Validation, MigrationFlag::Validation) => Err(ApiError::new(
            409,
            INVALID_TRANSITION,
            "the zone is already in validation mode: finish with waf_migration=pending (adjust the entry point with a PUT without waf_migration)",
        )),
        (MigrationState::Start, MigrationFlag::Validation) if plan != Plan::Enterprise => {
            Err(ApiError::new(
                403,
                PLAN_NOT_ALLOWED,
                format!(
                    "validation mode is for Enterprise zones only (this zone is on the {} plan): use waf_migration=pending",
                    plan.as_str()
                ),
            ))
        }
        (_, _) if !blockers.is_empty() => Err(ApiError::from_items(
            409,
            std::iter::once(ErrorItem::new(
                INCOMPATIBLE,
                "the zone is not compatible with the new WAF",
            ))
            .chain(blockers)
            .collect(),
        )),
        (MigrationState::Start, MigrationFlag::Validation) => Ok(MigrationState::Validation),
        (MigrationState::Start | MigrationState::Validation, MigrationFlag::Pending) => {
            Ok(MigrationState::Complete)
        }
    }
}

/// 409 for migration operations on a migrated zone.
pub fn already_migrated() -> ApiError {
    ApiError::new(
        409,
        ALREADY_MIGRATED,
        "the zone has already migrated to the new WAF; the migration is irreversible",
    )
}

/// `old_waf_status` / `new_waf_status` values.
fn enabled(on: bool) -> &'static str {
    if on {
        "enabled"
    } else {
        "disabled"
    }
}

/// The status resource: previous WAF as configured in `start` (new WAF enabled only if an entry
/// point with an enabled execute rule was deployed), both enabled in `validation`, only the new
/// one in `complete`.
pub fn status_json(
    waf: &LegacyWaf,
    record: &MigrationRecord,
    new_waf_deployed: bool,
    created: &str,
) -> serde_json::Value {
    let (old, new) = match record.state {
        MigrationState::Start => (waf.setting.is_on(), new_waf_deployed),
        MigrationState::Validation => (true, true),
        MigrationState::Complete => (false, true),
    };
    serde_json::json!({
        "old_waf_status": enabled(old),
        "new_waf_status": enabled(new),
        "migration_state": record.state.as_str(),
        "source": "zone",
        "created": record.changed_on.as_deref().unwrap_or(created),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waf::legacy::{
        FirewallAction, FirewallFilter, FirewallRule, OnOff, PageRule, PageRuleAction,
        PageRuleConstraint, PageRuleStatus, PageRuleTarget, UriOverride,
    };

    fn bypass_rule(id: usize, expression: String) -> FirewallRule {
        FirewallRule {
            id: format!("fw{id}"),
            paused: false,
            description: String::new(),
            action: FirewallAction::Bypass,
            priority: None,
            products: vec!["waf".into()],
            filter: FirewallFilter {
                id: format!("f{id}"),
                expression,
                paused: false,
                description: String::new(),
            },
            created_on: String::new(),
            modified_on: String::new(),
        }
    }

    fn codes(items: &[ErrorItem]) -> Vec<u32> {
        items.iter().map(|i| i.code).collect()
    }

    #[test]
    fn flags() {
        assert_eq!(parse_flag("pending").ok(), Some(MigrationFlag::Pending));
        assert_eq!(parse_flag("1").ok(), Some(MigrationFlag::Pending));
        assert_eq!(
            parse_flag("validation").ok(),
            Some(MigrationFlag::Validation)
        );
        assert_eq!(parse_flag("2").ok(), Some(MigrationFlag::Validation));
        for bad in ["", "3", "complete", "PENDING"] {
            assert_eq!(parse_flag(bad).expect_err(bad).status, 400);
        }
    }

    #[test]
    fn phase_one_versus_phase_two() {
        let waf_off = LegacyWaf::default();
        assert!(blockers(&waf_off, Phase::One).is_empty());

        let owasp_on = LegacyWaf {
            setting: OnOff::On,
            ..LegacyWaf::default()
        };
        assert_eq!(codes(&blockers(&owasp_on, Phase::One)), vec![OWASP_ENABLED]);
        assert!(blockers(&owasp_on, Phase::Two).is_empty());

        let vendor_only = LegacyWaf {
            sensitivity: Some(Sensitivity::Off),
            ..owasp_on.clone()
        };
        assert!(blockers(&vendor_only, Phase::One).is_empty());

        let mut with_rules = vendor_only.clone();
        with_rules
            .firewall_rules
            .push(bypass_rule(1, "true".into()));
        with_rules.page_rules.push(PageRule {
            id: "pr1".into(),
            targets: vec![PageRuleTarget {
                target: "url".into(),
                constraint: PageRuleConstraint {
                    operator: "matches".into(),
                    value: "*".into(),
                },
            }],
            actions: vec![PageRuleAction::Waf { value: OnOff::Off }],
            priority: 1,
            status: PageRuleStatus::Active,
            created_on: String::new(),
            modified_on: String::new(),
        });
        let found = blockers(&with_rules, Phase::One);
        assert_eq!(codes(&found), vec![WAF_TOGGLING_RULES, WAF_TOGGLING_RULES]);
        assert!(found[0].message.contains("fw1"));
        assert!(found[1].message.contains("pr1"));
        assert!(blockers(&with_rules, Phase::Two).is_empty());
    }

    #[test]
    fn uri_overrides_block_both_phases() {
        let mut waf = LegacyWaf::default();
        waf.overrides.push(UriOverride {
            id: "ov1".into(),
            description: String::new(),
            paused: false,
            urls: vec!["example.com/x".into()],
            priority: 1,
            groups: Default::default(),
            rules: Default::default(),
            rewrite_action: Default::default(),
        });
        for phase in [Phase::One, Phase::Two] {
            let found = blockers(&waf, phase);
            assert_eq!(codes(&found), vec![URI_OVERRIDES_PRESENT]);
            assert!(found[0].message.contains("ov1"));
            assert!(found[0].message.contains("DELETE"));
        }
    }

    #[test]
    fn two_hundred_rules_and_four_kilobytes() {
        let mut waf = LegacyWaf::default();
        for i in 0..MAX_MIGRATED_FIREWALL_RULES {
            waf.firewall_rules.push(bypass_rule(i, "true".into()));
        }
        assert!(blockers(&waf, Phase::Two).is_empty(), "200 is allowed");
        waf.firewall_rules.push(bypass_rule(999, "true".into()));
        let found = blockers(&waf, Phase::Two);
        assert_eq!(codes(&found), vec![TOO_MANY_FIREWALL_RULES]);
        assert!(found[0].message.contains("201"));

        let mut waf = LegacyWaf::default();
        waf.firewall_rules
            .push(bypass_rule(1, "x".repeat(MAX_MIGRATED_EXPRESSION_BYTES)));
        assert!(
            blockers(&waf, Phase::Two).is_empty(),
            "exactly 4 KB is allowed"
        );
        waf.firewall_rules.push(bypass_rule(
            2,
            "x".repeat(MAX_MIGRATED_EXPRESSION_BYTES + 1),
        ));
        let found = blockers(&waf, Phase::Two);
        assert_eq!(codes(&found), vec![EXPRESSION_TOO_LONG]);
        assert!(found[0].message.contains("fw2"));
    }

    #[test]
    fn state_machine() {
        use MigrationState::{Complete, Start};
        let (pending, validation) = (MigrationFlag::Pending, MigrationFlag::Validation);
        let in_validation = MigrationState::Validation;
        let ok = |plan, state, flag| transition(plan, state, flag, Vec::new());
        assert_eq!(
            ok(Plan::Enterprise, Start, validation).ok(),
            Some(in_validation)
        );
        assert_eq!(
            ok(Plan::Enterprise, in_validation, pending).ok(),
            Some(Complete)
        );
        for plan in [Plan::Free, Plan::Pro, Plan::Business, Plan::Enterprise] {
            assert_eq!(ok(plan, Start, pending).ok(), Some(Complete));
            assert_eq!(
                ok(plan, Complete, pending)
                    .expect_err("irreversible")
                    .status,
                409
            );
            assert_eq!(
                ok(plan, Complete, validation)
                    .expect_err("irreversible")
                    .status,
                409
            );
        }
        for plan in [Plan::Free, Plan::Pro, Plan::Business] {
            let error = ok(plan, Start, validation).expect_err("enterprise only");
            assert_eq!(
                (error.status, error.errors[0].code),
                (403, PLAN_NOT_ALLOWED)
            );
        }
        assert_eq!(
            ok(Plan::Enterprise, in_validation, validation)
                .expect_err("twice")
                .status,
            409
        );
        let blocked = transition(
            Plan::Enterprise,
            Start,
            pending,
            vec![ErrorItem::new(URI_OVERRIDES_PRESENT, "x")],
        )
        .expect_err("incompatible");
        assert_eq!(
            codes(&blocked.errors),
            vec![INCOMPATIBLE, URI_OVERRIDES_PRESENT]
        );
    }

    #[test]
    fn status_in_each_state() {
        let waf = LegacyWaf {
            setting: OnOff::On,
            ..LegacyWaf::default()
        };
        let mut record = MigrationRecord::default();
        let status = status_json(&waf, &record, false, "t0");
        assert_eq!(status["old_waf_status"], "enabled");
        assert_eq!(status["new_waf_status"], "disabled");
        assert_eq!(status["migration_state"], "start");
        assert_eq!(status["source"], "zone");
        assert_eq!(status["created"], "t0");
        record.state = MigrationState::Validation;
        record.changed_on = Some("t1".into());
        let status = status_json(&waf, &record, true, "t0");
        assert_eq!(
            (
                status["old_waf_status"].as_str(),
                status["new_waf_status"].as_str()
            ),
            (Some("enabled"), Some("enabled"))
        );
        assert_eq!(status["created"], "t1");
        record.state = MigrationState::Complete;
        let status = status_json(&waf, &record, true, "t0");
        assert_eq!(
            (
                status["old_waf_status"].as_str(),
                status["new_waf_status"].as_str()
            ),
            (Some("disabled"), Some("enabled"))
        );
        assert_eq!(status["migration_state"], "complete");
    }
}
