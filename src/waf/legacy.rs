//! The previous WAF's per-zone model: the on/off setting, package / group / rule modes, URI-based
//! overrides, and the firewall rules and page rules that interact with the WAF.
//!
//! Package, group and rule definitions live in the [catalog](super::catalog); a zone only stores
//! what it changed, so catalog updates reach every zone that kept the defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::catalog::catalog;

/// `on` / `off`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnOff {
    On,
    #[default]
    Off,
}

impl OnOff {
    pub fn is_on(self) -> bool {
        self == OnOff::On
    }
}

/// OWASP package sensitivity; `off` disables the package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sensitivity {
    High,
    Medium,
    Low,
    Off,
}

/// The sensitivity a zone has before anyone set it (the spec's "Default" row).
pub const DEFAULT_SENSITIVITY: Sensitivity = Sensitivity::High;

/// OWASP package action when the anomaly threshold is exceeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionMode {
    Simulate,
    Block,
    #[default]
    Challenge,
}

/// A URI-based WAF override (API-only in the previous WAF; blocks the migration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UriOverride {
    pub id: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub paused: bool,
    pub urls: Vec<String>,
    #[serde(default)]
    pub priority: i64,
    /// Group id → `on` / `off` / `default`.
    #[serde(default)]
    pub groups: BTreeMap<String, String>,
    /// Rule id → a mode the rule allows.
    #[serde(default)]
    pub rules: BTreeMap<String, String>,
    /// Action the override substitutes: `block` → `challenge`, … .
    #[serde(default)]
    pub rewrite_action: BTreeMap<String, String>,
}

/// Firewall rule actions of the previous firewall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirewallAction {
    Block,
    Challenge,
    JsChallenge,
    ManagedChallenge,
    Allow,
    Log,
    Bypass,
}

/// Products a `bypass` firewall rule can skip.
pub const BYPASS_PRODUCTS: [&str; 7] = [
    "zoneLockdown",
    "uaBlock",
    "bic",
    "hot",
    "securityLevel",
    "rateLimit",
    "waf",
];

/// The filter of a firewall rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirewallFilter {
    pub id: String,
    pub expression: String,
    #[serde(default)]
    pub paused: bool,
    #[serde(default)]
    pub description: String,
}

/// A firewall rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirewallRule {
    pub id: String,
    #[serde(default)]
    pub paused: bool,
    #[serde(default)]
    pub description: String,
    pub action: FirewallAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub products: Vec<String>,
    pub filter: FirewallFilter,
    pub created_on: String,
    pub modified_on: String,
}

impl FirewallRule {
    /// A rule the migration must translate: it bypasses the WAF.
    pub fn bypasses_waf(&self) -> bool {
        self.action == FirewallAction::Bypass && self.products.iter().any(|p| p == "waf")
    }
}

/// The URL pattern a page rule applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRuleConstraint {
    /// Always `matches`.
    pub operator: String,
    /// `*example.com/images/*`: `*` matches any run of characters.
    pub value: String,
}

/// `{"target": "url", "constraint": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRuleTarget {
    pub target: String,
    pub constraint: PageRuleConstraint,
}

/// The page rule actions that matter to the WAF (the only ones this service accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "id", rename_all = "snake_case")]
pub enum PageRuleAction {
    /// Turns off every security feature, the WAF included.
    DisableSecurity,
    /// Turns the WAF on or off for the matched URLs.
    Waf { value: OnOff },
}

/// `active` / `disabled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageRuleStatus {
    #[default]
    Active,
    Disabled,
}

/// A page rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRule {
    pub id: String,
    pub targets: Vec<PageRuleTarget>,
    pub actions: Vec<PageRuleAction>,
    pub priority: i64,
    pub status: PageRuleStatus,
    pub created_on: String,
    pub modified_on: String,
}

impl PageRule {
    /// The URL pattern (the first target; the API accepts exactly one).
    pub fn url_pattern(&self) -> &str {
        self.targets
            .first()
            .map(|t| t.constraint.value.as_str())
            .unwrap_or("*")
    }
}

/// The previous WAF of one zone: what the zone changed from the catalog defaults, plus its
/// overrides, firewall rules and page rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LegacyWaf {
    /// Zone setting `waf`.
    pub setting: OnOff,
    pub setting_modified_on: Option<String>,
    /// OWASP package sensitivity; `None` = never set (reported as [`DEFAULT_SENSITIVITY`]).
    pub sensitivity: Option<Sensitivity>,
    pub action_mode: ActionMode,
    /// Group id → `on` / `off`, for groups whose mode was set.
    pub group_modes: BTreeMap<String, String>,
    /// Rule id → mode, for rules whose mode was set.
    pub rule_modes: BTreeMap<String, String>,
    pub overrides: Vec<UriOverride>,
    pub firewall_rules: Vec<FirewallRule>,
    pub page_rules: Vec<PageRule>,
}

impl LegacyWaf {
    /// The OWASP package sensitivity in effect.
    pub fn effective_sensitivity(&self) -> Sensitivity {
        self.sensitivity.unwrap_or(DEFAULT_SENSITIVITY)
    }

    /// The mode of group `group_id` (its stored mode, else the catalog default).
    pub fn group_mode<'a>(&'a self, group_id: &str, default_mode: &'a str) -> &'a str {
        self.group_modes
            .get(group_id)
            .map(String::as_str)
            .unwrap_or(default_mode)
    }

    /// The mode of rule `rule_id` (its stored mode, else the catalog default).
    pub fn rule_mode<'a>(&'a self, rule_id: &str, default_mode: &'a str) -> &'a str {
        self.rule_modes
            .get(rule_id)
            .map(String::as_str)
            .unwrap_or(default_mode)
    }

    /// Group and rule ids of the OWASP package whose mode differs from the default: the
    /// migration drops them (spec 3.2).
    pub fn owasp_customizations(&self) -> (Vec<String>, Vec<String>) {
        let owasp = catalog().owasp_package();
        let mut groups = Vec::new();
        let mut rules = Vec::new();
        for group in &owasp.groups {
            if self.group_mode(&group.id, &group.default_mode) != group.default_mode {
                groups.push(group.id.clone());
            }
            for rule in &group.rules {
                if self.rule_mode(&rule.id, &rule.default_mode) != rule.default_mode {
                    rules.push(rule.id.clone());
                }
            }
        }
        (groups, rules)
    }

    /// Firewall rules that bypass the WAF, in evaluation order (priority, then creation order).
    pub fn waf_bypass_rules(&self) -> Vec<&FirewallRule> {
        let mut rules: Vec<&FirewallRule> = self
            .firewall_rules
            .iter()
            .filter(|r| r.bypasses_waf())
            .collect();
        rules.sort_by_key(|r| r.priority.unwrap_or(i64::MAX));
        rules
    }

    /// Page rules in evaluation order (priority descending: higher priority wins in page rules).
    pub fn page_rules_in_order(&self) -> Vec<&PageRule> {
        let mut rules: Vec<&PageRule> = self.page_rules.iter().collect();
        rules.sort_by_key(|r| std::cmp::Reverse(r.priority));
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_state_files_without_fields_load() {
        let waf: LegacyWaf = serde_json::from_str("{}").expect("empty object loads");
        assert_eq!(waf, LegacyWaf::default());
        assert_eq!(waf.effective_sensitivity(), Sensitivity::High);
    }

    #[test]
    fn page_rule_actions_use_the_cloudflare_shape() {
        let json = serde_json::to_value([
            PageRuleAction::DisableSecurity,
            PageRuleAction::Waf { value: OnOff::Off },
        ])
        .expect("serializes");
        assert_eq!(
            json,
            serde_json::json!([{"id": "disable_security"}, {"id": "waf", "value": "off"}])
        );
    }

    #[test]
    fn owasp_customizations_list_changed_modes_only() {
        let owasp = catalog().owasp_package();
        let vendor = catalog().vendor_package();
        let mut waf = LegacyWaf::default();
        waf.group_modes
            .insert(owasp.groups[0].id.clone(), "off".into());
        waf.group_modes
            .insert(owasp.groups[1].id.clone(), "on".into());
        waf.rule_modes
            .insert(owasp.groups[2].rules[0].id.clone(), "off".into());
        waf.group_modes
            .insert(vendor.groups[0].id.clone(), "off".into());
        let (groups, rules) = waf.owasp_customizations();
        assert_eq!(groups, vec![owasp.groups[0].id.clone()]);
        assert_eq!(rules, vec![owasp.groups[2].rules[0].id.clone()]);
    }
}
