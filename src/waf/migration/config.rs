//! The new entry point ruleset equivalent to a zone's previous WAF (spec 3.2 mapping table).
//!
//! Rule order: skip rules (firewall rules bypassing the WAF, then page rules disabling security or
//! turning the WAF off) come first, so they win over the executes that follow; then scoped
//! execute rules for page rules turning the WAF on in a zone where it is off; then the two
//! zone-wide execute rules.

use super::url_pattern::pattern_expression;
use crate::admin::envelope::ErrorItem;
use crate::waf::catalog::{catalog, MANAGED_RULESET_ID, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID};
use crate::waf::legacy::{
    ActionMode, LegacyWaf, OnOff, PageRuleAction, PageRuleStatus, Sensitivity,
};
use crate::waf::ruleset::{
    ActionParameters, CategoryOverride, OverrideAction, Overrides, Rule, RuleAction, RuleOverride,
    SkipTarget,
};

/// Message code: OWASP group and rule overrides were not migrated.
pub const NOT_MIGRATED: u32 = 1440;

/// Paranoia level and anomaly score threshold the new OWASP ruleset gets for a sensitivity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwaspTuning {
    pub paranoia_level: u8,
    pub score_threshold: u32,
}

/// Spec 3.2: High → PL2/Medium(40), Medium → PL1/High(25), Low → PL1/Medium(40),
/// Default → PL2/Medium(40). `off` keeps the default tuning (its execute rule is disabled).
pub fn owasp_tuning(sensitivity: Sensitivity) -> OwaspTuning {
    let (paranoia_level, score_threshold) = match sensitivity {
        Sensitivity::High | Sensitivity::Off => (2, 40),
        Sensitivity::Medium => (1, 25),
        Sensitivity::Low => (1, 40),
    };
    OwaspTuning {
        paranoia_level,
        score_threshold,
    }
}

/// Simulate → log; the other action modes map directly.
pub fn owasp_action(mode: ActionMode) -> OverrideAction {
    match mode {
        ActionMode::Simulate => OverrideAction::Log,
        ActionMode::Block => OverrideAction::Block,
        ActionMode::Challenge => OverrideAction::Challenge,
    }
}

/// The generated entry point rules and the messages explaining what was not carried over.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedConfig {
    pub rules: Vec<Rule>,
    pub messages: Vec<ErrorItem>,
}

fn draft(
    action: RuleAction,
    parameters: ActionParameters,
    expression: String,
    description: String,
    enabled: bool,
) -> Rule {
    Rule {
        id: String::new(),
        version: String::new(),
        action,
        action_parameters: Some(parameters),
        expression,
        description,
        enabled,
        reference: String::new(),
        last_updated: String::new(),
    }
}

fn skip_current() -> ActionParameters {
    ActionParameters::Skip(SkipTarget::Current {
        ruleset: "current".into(),
    })
}

/// Overrides of the Cloudflare Managed Ruleset from the vendor package: a group turned off
/// disables every rule it held; a rule's own mode becomes an action or `enabled: false`.
fn managed_overrides(waf: &LegacyWaf) -> Overrides {
    let vendor = catalog().vendor_package();
    let mut rules = Vec::new();
    for group in &vendor.groups {
        let group_off = waf.group_mode(&group.id, &group.default_mode) == "off";
        for rule in &group.rules {
            let mode = waf.rule_mode(&rule.id, &rule.default_mode);
            let (action, enabled) = if group_off {
                (None, Some(false))
            } else {
                match mode {
                    "disable" => (None, Some(false)),
                    "simulate" => (Some(OverrideAction::Log), None),
                    "block" => (Some(OverrideAction::Block), None),
                    "challenge" => (Some(OverrideAction::Challenge), None),
                    _ => continue,
                }
            };
            rules.push(RuleOverride {
                id: rule.new_rule_id.clone(),
                action,
                enabled,
                score_threshold: None,
            });
        }
    }
    Overrides {
        rules,
        ..Overrides::default()
    }
}

/// Overrides of the OWASP Core Ruleset: paranoia levels above the tuning disabled by category,
/// threshold and action on the anomaly score rule.
fn owasp_overrides(waf: &LegacyWaf) -> Overrides {
    let tuning = owasp_tuning(waf.effective_sensitivity());
    let categories = (tuning.paranoia_level + 1..=4)
        .map(|level| CategoryOverride {
            category: format!("paranoia-level-{level}"),
            action: None,
            enabled: Some(false),
        })
        .collect();
    Overrides {
        categories,
        rules: vec![RuleOverride {
            id: OWASP_ANOMALY_RULE_ID.into(),
            action: Some(owasp_action(waf.action_mode)),
            enabled: None,
            score_threshold: Some(tuning.score_threshold),
        }],
        ..Overrides::default()
    }
}

/// The two execute rules (Managed, then OWASP) for `expression`, enabled per the zone's setup.
fn execute_rules(waf: &LegacyWaf, expression: &str, waf_on: bool, scope: &str) -> [Rule; 2] {
    let owasp_on = waf.effective_sensitivity() != Sensitivity::Off;
    [
        draft(
            RuleAction::Execute,
            ActionParameters::Execute {
                id: MANAGED_RULESET_ID.into(),
                overrides: managed_overrides(waf),
            },
            expression.into(),
            format!("Execute Cloudflare Managed Ruleset {scope}"),
            waf_on,
        ),
        draft(
            RuleAction::Execute,
            ActionParameters::Execute {
                id: OWASP_RULESET_ID.into(),
                overrides: owasp_overrides(waf),
            },
            expression.into(),
            format!("Execute Cloudflare OWASP Core Ruleset {scope}"),
            waf_on && owasp_on,
        ),
    ]
}

/// Computes the new entry point from the previous WAF of a zone.
pub fn generate(waf: &LegacyWaf) -> GeneratedConfig {
    let zone_waf_on = waf.setting.is_on();
    let mut rules = Vec::new();
    for firewall_rule in waf.waf_bypass_rules() {
        rules.push(draft(
            RuleAction::Skip,
            skip_current(),
            firewall_rule.filter.expression.clone(),
            format!(
                "Migrated from firewall rule {} (bypass WAF){}",
                firewall_rule.id,
                suffix(&firewall_rule.description)
            ),
            !firewall_rule.paused && !firewall_rule.filter.paused,
        ));
    }
    let page_rules = waf.page_rules_in_order();
    for page_rule in &page_rules {
        let active = page_rule.status == PageRuleStatus::Active;
        let expression = pattern_expression(page_rule.url_pattern());
        for action in &page_rule.actions {
            let reason = match action {
                PageRuleAction::DisableSecurity => "Disable Security",
                PageRuleAction::Waf { value: OnOff::Off } if zone_waf_on => {
                    "Web Application Firewall: Off"
                }
                PageRuleAction::Waf { .. } => continue,
            };
            rules.push(draft(
                RuleAction::Skip,
                skip_current(),
                expression.clone(),
                format!("Migrated from page rule {} ({reason})", page_rule.id),
                active,
            ));
        }
    }
    if !zone_waf_on {
        for page_rule in &page_rules {
            let turns_on = page_rule
                .actions
                .contains(&PageRuleAction::Waf { value: OnOff::On });
            if turns_on {
                let expression = pattern_expression(page_rule.url_pattern());
                let scope = format!("where page rule {} turned the WAF on", page_rule.id);
                let active = page_rule.status == PageRuleStatus::Active;
                rules.extend(execute_rules(waf, &expression, active, &scope));
            }
        }
    }
    rules.extend(execute_rules(
        waf,
        "true",
        zone_waf_on,
        "on my zone-level phase entry point ruleset",
    ));

    let mut messages = Vec::new();
    let (groups, owasp_rules) = waf.owasp_customizations();
    let detail = if groups.is_empty() && owasp_rules.is_empty() {
        "this zone has none".to_string()
    } else {
        format!(
            "dropped: groups [{}], rules [{}]",
            groups.join(", "),
            owasp_rules.join(", ")
        )
    };
    messages.push(ErrorItem::new(
        NOT_MIGRATED,
        format!("OWASP package group and rule overrides are not migrated ({detail}); review the OWASP Core Ruleset overrides after migrating"),
    ));
    GeneratedConfig { rules, messages }
}

fn suffix(description: &str) -> String {
    if description.is_empty() {
        String::new()
    } else {
        format!(": {description}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waf::legacy::{
        FirewallAction, FirewallFilter, FirewallRule, PageRule, PageRuleConstraint, PageRuleTarget,
    };

    fn waf_on() -> LegacyWaf {
        LegacyWaf {
            setting: OnOff::On,
            ..LegacyWaf::default()
        }
    }

    fn owasp_rule(rules: &[Rule]) -> &Rule {
        rules
            .iter()
            .find(|r| matches!(&r.action_parameters, Some(ActionParameters::Execute { id, .. }) if id == OWASP_RULESET_ID) && r.expression == "true")
            .expect("owasp execute rule")
    }

    fn managed_rule(rules: &[Rule]) -> &Rule {
        rules
            .iter()
            .find(|r| matches!(&r.action_parameters, Some(ActionParameters::Execute { id, .. }) if id == MANAGED_RULESET_ID) && r.expression == "true")
            .expect("managed execute rule")
    }

    fn overrides(rule: &Rule) -> &Overrides {
        match &rule.action_parameters {
            Some(ActionParameters::Execute { overrides, .. }) => overrides,
            other => panic!("not an execute rule: {other:?}"),
        }
    }

    fn disabled_levels(rule: &Rule) -> Vec<String> {
        overrides(rule)
            .categories
            .iter()
            .filter(|c| c.enabled == Some(false))
            .map(|c| c.category.clone())
            .collect()
    }

    #[test]
    fn sensitivity_rows() {
        let rows = [
            (Some(Sensitivity::High), 2, 40),
            (Some(Sensitivity::Medium), 1, 25),
            (Some(Sensitivity::Low), 1, 40),
            (None, 2, 40),
        ];
        for (sensitivity, level, threshold) in rows {
            let waf = LegacyWaf {
                sensitivity,
                ..waf_on()
            };
            let generated = generate(&waf);
            let rule = owasp_rule(&generated.rules);
            assert!(rule.enabled);
            let expected: Vec<String> = (level + 1..=4)
                .map(|l| format!("paranoia-level-{l}"))
                .collect();
            assert_eq!(disabled_levels(rule), expected, "{sensitivity:?}");
            let anomaly = &overrides(rule).rules[0];
            assert_eq!(anomaly.id, OWASP_ANOMALY_RULE_ID);
            assert_eq!(anomaly.score_threshold, Some(threshold));
            assert_eq!(anomaly.action, Some(OverrideAction::Challenge));
        }
    }

    #[test]
    fn sensitivity_off_disables_only_the_owasp_execute() {
        let waf = LegacyWaf {
            sensitivity: Some(Sensitivity::Off),
            ..waf_on()
        };
        let generated = generate(&waf);
        assert!(!owasp_rule(&generated.rules).enabled);
        assert!(managed_rule(&generated.rules).enabled);
    }

    #[test]
    fn action_modes() {
        for (mode, action) in [
            (ActionMode::Simulate, OverrideAction::Log),
            (ActionMode::Block, OverrideAction::Block),
            (ActionMode::Challenge, OverrideAction::Challenge),
        ] {
            let waf = LegacyWaf {
                action_mode: mode,
                ..waf_on()
            };
            let generated = generate(&waf);
            assert_eq!(
                overrides(owasp_rule(&generated.rules)).rules[0].action,
                Some(action)
            );
        }
    }

    #[test]
    fn zone_waf_off_disables_both_executes() {
        let generated = generate(&LegacyWaf::default());
        assert_eq!(generated.rules.len(), 2);
        assert!(generated.rules.iter().all(|r| !r.enabled
            && r.id.is_empty()
            && r.version.is_empty()
            && r.reference.is_empty()));
    }

    #[test]
    fn vendor_group_and_rule_modes_become_rule_overrides() {
        let vendor = catalog().vendor_package();
        let mut waf = waf_on();
        let off_group = &vendor.groups[1];
        waf.group_modes.insert(off_group.id.clone(), "off".into());
        let specials = &vendor.groups[0];
        waf.rule_modes
            .insert(specials.rules[0].id.clone(), "disable".into());
        waf.rule_modes
            .insert(specials.rules[1].id.clone(), "simulate".into());
        waf.rule_modes
            .insert(specials.rules[2].id.clone(), "block".into());
        waf.rule_modes
            .insert(specials.rules[3].id.clone(), "challenge".into());
        waf.rule_modes
            .insert(specials.rules[4].id.clone(), "default".into());
        let generated = generate(&waf);
        let rules = &overrides(managed_rule(&generated.rules)).rules;
        let find = |id: &str| rules.iter().find(|o| o.id == id).cloned();
        assert_eq!(
            find(&specials.rules[0].new_rule_id).and_then(|o| o.enabled),
            Some(false)
        );
        assert_eq!(
            find(&specials.rules[1].new_rule_id).and_then(|o| o.action),
            Some(OverrideAction::Log)
        );
        assert_eq!(
            find(&specials.rules[2].new_rule_id).and_then(|o| o.action),
            Some(OverrideAction::Block)
        );
        assert_eq!(
            find(&specials.rules[3].new_rule_id).and_then(|o| o.action),
            Some(OverrideAction::Challenge)
        );
        assert!(find(&specials.rules[4].new_rule_id).is_none());
        for rule in &off_group.rules {
            assert_eq!(find(&rule.new_rule_id).and_then(|o| o.enabled), Some(false));
        }
        assert_eq!(rules.len(), 4 + off_group.rules.len());
    }

    fn firewall_rule(
        id: &str,
        action: FirewallAction,
        products: &[&str],
        paused: bool,
    ) -> FirewallRule {
        FirewallRule {
            id: id.into(),
            paused,
            description: "office".into(),
            action,
            priority: None,
            products: products.iter().map(|p| p.to_string()).collect(),
            filter: FirewallFilter {
                id: format!("f{id}"),
                expression: "true".into(),
                paused: false,
                description: String::new(),
            },
            created_on: String::new(),
            modified_on: String::new(),
        }
    }

    fn page_rule(id: &str, pattern: &str, action: PageRuleAction) -> PageRule {
        PageRule {
            id: id.into(),
            targets: vec![PageRuleTarget {
                target: "url".into(),
                constraint: PageRuleConstraint {
                    operator: "matches".into(),
                    value: pattern.into(),
                },
            }],
            actions: vec![action],
            priority: 1,
            status: PageRuleStatus::Active,
            created_on: String::new(),
            modified_on: String::new(),
        }
    }

    #[test]
    fn bypass_firewall_rules_become_skip_rules_first() {
        let mut waf = waf_on();
        waf.firewall_rules
            .push(firewall_rule("a", FirewallAction::Bypass, &["waf"], false));
        waf.firewall_rules.push(firewall_rule(
            "b",
            FirewallAction::Bypass,
            &["uaBlock"],
            false,
        ));
        waf.firewall_rules
            .push(firewall_rule("c", FirewallAction::Block, &[], false));
        waf.firewall_rules.push(firewall_rule(
            "d",
            FirewallAction::Bypass,
            &["waf", "hot"],
            true,
        ));
        let generated = generate(&waf);
        assert_eq!(generated.rules.len(), 4);
        let skip = &generated.rules[0];
        assert_eq!(skip.action, RuleAction::Skip);
        assert_eq!(skip.action_parameters, Some(skip_current()));
        assert_eq!(skip.expression, "true");
        assert!(skip.enabled);
        assert!(skip.description.contains("firewall rule a"));
        assert!(!generated.rules[1].enabled, "paused rule migrates disabled");
    }

    #[test]
    fn page_rules_map_to_skip_or_scoped_execute_rules() {
        let mut waf = waf_on();
        waf.page_rules.push(page_rule(
            "p1",
            "example.com/admin/*",
            PageRuleAction::DisableSecurity,
        ));
        waf.page_rules.push(page_rule(
            "p2",
            "example.com/api/*",
            PageRuleAction::Waf { value: OnOff::Off },
        ));
        waf.page_rules.push(page_rule(
            "p3",
            "example.com/x/*",
            PageRuleAction::Waf { value: OnOff::On },
        ));
        let generated = generate(&waf);
        assert_eq!(generated.rules.len(), 4, "WAF on: p3 is a no-op");
        assert_eq!(
            generated.rules[0].expression,
            pattern_expression("example.com/admin/*")
        );
        assert_eq!(
            generated.rules[1].expression,
            pattern_expression("example.com/api/*")
        );
        assert!(generated.rules[..2]
            .iter()
            .all(|r| r.action == RuleAction::Skip && r.enabled));

        waf.setting = OnOff::Off;
        let generated = generate(&waf);
        assert_eq!(
            generated.rules.len(),
            5,
            "WAF off: p1 skip, p3 two scoped executes, two zone executes"
        );
        assert_eq!(generated.rules[0].action, RuleAction::Skip);
        let scoped = &generated.rules[1..3];
        assert!(scoped.iter().all(|r| r.action == RuleAction::Execute
            && r.enabled
            && r.expression == pattern_expression("example.com/x/*")));
        assert!(generated.rules[3..]
            .iter()
            .all(|r| !r.enabled && r.expression == "true"));
    }

    #[test]
    fn owasp_customizations_are_reported_not_migrated() {
        let owasp = catalog().owasp_package();
        let mut waf = waf_on();
        waf.group_modes
            .insert(owasp.groups[0].id.clone(), "off".into());
        let generated = generate(&waf);
        assert_eq!(generated.messages.len(), 1);
        assert_eq!(generated.messages[0].code, NOT_MIGRATED);
        assert!(generated.messages[0].message.contains(&owasp.groups[0].id));
        assert!(overrides(owasp_rule(&generated.rules))
            .rules
            .iter()
            .all(|o| o.id == OWASP_ANOMALY_RULE_ID));
    }
}
