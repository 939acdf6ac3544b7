//! The new WAF: a zone's entry point ruleset of phase `http_request_firewall_managed`.
//!
//! Rules execute managed rulesets of the [catalog](super::catalog) (with overrides) or skip them.
//! A PUT body is validated by [`validate::parse_entrypoint`] (every error carries a JSON pointer),
//! then [`EntryPoint::replaced_by`] assigns ids, versions and `last_updated`.

pub mod validate;

use serde::{Deserialize, Serialize};

use super::ids::object_id;

/// The only phase this service manages.
pub const PHASE: &str = "http_request_firewall_managed";

/// What a rule does when its expression matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleAction {
    /// Run a managed ruleset.
    Execute,
    /// Skip the rest of this ruleset, or some managed rulesets / rules.
    Skip,
    /// Record the match only.
    Log,
}

/// Actions a managed rule (or a category, or a whole ruleset) can be overridden to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverrideAction {
    Block,
    Challenge,
    JsChallenge,
    ManagedChallenge,
    Log,
}

/// Override of one managed rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleOverride {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<OverrideAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Anomaly score threshold (OWASP anomaly rule only): 25 high, 40 medium, 60 low.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_threshold: Option<u32>,
}

/// Override of every rule carrying a category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryOverride {
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<OverrideAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Overrides applied when executing a managed ruleset: rule overrides win over category
/// overrides, which win over the ruleset-wide ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<OverrideAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<CategoryOverride>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleOverride>,
}

impl Overrides {
    fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }
}

/// What a skip rule skips.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkipTarget {
    /// `{"ruleset": "current"}`: the remaining rules of the entry point.
    Current { ruleset: String },
    /// `{"rulesets": [ids]}`: these managed rulesets.
    Rulesets { rulesets: Vec<String> },
    /// `{"rules": {ruleset id: [rule ids]}}`: these managed rules.
    Rules {
        rules: std::collections::BTreeMap<String, Vec<String>>,
    },
}

/// `action_parameters` of a rule, by action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ActionParameters {
    Execute {
        /// Managed ruleset id.
        id: String,
        #[serde(default, skip_serializing_if = "Overrides::is_empty")]
        overrides: Overrides,
    },
    Skip(SkipTarget),
}

/// One rule of the entry point. `id`, `version` and `ref` are empty strings in drafts (the
/// migration `config` output) and assigned when the ruleset is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub id: String,
    pub version: String,
    pub action: RuleAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_parameters: Option<ActionParameters>,
    pub expression: String,
    #[serde(default)]
    pub description: String,
    pub enabled: bool,
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_updated: String,
}

impl Rule {
    /// Compares what the user controls (not id, version, ref, timestamps).
    fn same_content(&self, other: &Rule) -> bool {
        self.action == other.action
            && self.action_parameters == other.action_parameters
            && self.expression == other.expression
            && self.description == other.description
            && self.enabled == other.enabled
    }
}

/// A zone's stored entry point ruleset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryPoint {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Incremented on each PUT; a string in the API, as Cloudflare returns it.
    pub version: u64,
    pub last_updated: String,
    pub rules: Vec<Rule>,
}

/// A validated PUT body: the ruleset the caller wants (rule ids may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPointBody {
    pub name: Option<String>,
    pub description: Option<String>,
    pub rules: Vec<Rule>,
}

impl EntryPointBody {
    /// Whether every rule is disabled (what a non-Enterprise zone may deploy before migrating).
    pub fn all_disabled(&self) -> bool {
        self.rules.iter().all(|r| !r.enabled)
    }
}

/// Where ids come from when a ruleset is stored.
pub struct IdSource<'a> {
    pub zone_id: &'a str,
    /// The zone's id serial; advanced for every id handed out.
    pub serial: &'a mut u64,
}

impl IdSource<'_> {
    fn next(&mut self, kind: &str) -> String {
        *self.serial += 1;
        object_id(self.zone_id, kind, *self.serial)
    }
}

impl EntryPoint {
    /// The ruleset after a PUT of `body` at `now` onto `current` (None: first PUT). Rules that
    /// keep an existing id keep their version when unchanged and get version + 1 otherwise; rules
    /// without id get a new id, version 1. The ruleset version increments on every PUT.
    /// Unknown non-empty rule ids are rejected earlier by [`validate::parse_entrypoint`].
    pub fn replaced_by(
        current: Option<&EntryPoint>,
        body: EntryPointBody,
        ids: &mut IdSource<'_>,
        now: &str,
    ) -> EntryPoint {
        let id = current
            .map(|c| c.id.clone())
            .unwrap_or_else(|| ids.next("ruleset"));
        let rules = body
            .rules
            .into_iter()
            .map(|mut rule| {
                let previous = current.and_then(|c| {
                    c.rules
                        .iter()
                        .find(|r| !rule.id.is_empty() && r.id == rule.id)
                });
                match previous {
                    Some(previous) if previous.same_content(&rule) => previous.clone(),
                    Some(previous) => {
                        let version = previous.version.parse::<u64>().unwrap_or(0) + 1;
                        rule.version = version.to_string();
                        rule.reference = previous.reference.clone();
                        rule.last_updated = now.to_string();
                        rule
                    }
                    None => {
                        rule.id = ids.next("rule");
                        rule.version = "1".into();
                        if rule.reference.is_empty() {
                            rule.reference = rule.id.clone();
                        }
                        rule.last_updated = now.to_string();
                        rule
                    }
                }
            })
            .collect();
        EntryPoint {
            id,
            name: body
                .name
                .or_else(|| current.map(|c| c.name.clone()))
                .unwrap_or_else(|| "zone".into()),
            description: body
                .description
                .or_else(|| current.map(|c| c.description.clone()))
                .unwrap_or_default(),
            version: current.map(|c| c.version).unwrap_or(0) + 1,
            last_updated: now.to_string(),
            rules,
        }
    }

    /// Whether some rule executes a managed ruleset.
    pub fn has_enabled_execute_rule(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.enabled && r.action == RuleAction::Execute)
    }

    /// The API representation: the summary plus the rules.
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = self.summary_json();
        json["rules"] = serde_json::to_value(&self.rules).unwrap_or_default();
        json
    }

    /// The summary shown in `GET /zones/{id}/rulesets`.
    pub fn summary_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "kind": "zone",
            "phase": PHASE,
            "version": self.version.to_string(),
            "last_updated": self.last_updated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, expression: &str) -> Rule {
        Rule {
            id: id.into(),
            version: String::new(),
            action: RuleAction::Execute,
            action_parameters: Some(ActionParameters::Execute {
                id: super::super::catalog::MANAGED_RULESET_ID.into(),
                overrides: Overrides::default(),
            }),
            expression: expression.into(),
            description: String::new(),
            enabled: true,
            reference: String::new(),
            last_updated: String::new(),
        }
    }

    #[test]
    fn versions_and_ids_follow_puts() {
        let mut serial = 0;
        let mut ids = IdSource {
            zone_id: "z",
            serial: &mut serial,
        };
        let body = EntryPointBody {
            name: None,
            description: None,
            rules: vec![rule("", "true"), rule("", "false")],
        };
        let first = EntryPoint::replaced_by(None, body, &mut ids, "t1");
        assert_eq!(first.version, 1);
        assert_eq!(first.rules[0].version, "1");
        assert_eq!(first.rules[0].reference, first.rules[0].id);
        assert_ne!(first.rules[0].id, first.rules[1].id);

        let kept = first.rules[0].clone();
        let mut changed = first.rules[1].clone();
        changed.expression = "true".into();
        let body = EntryPointBody {
            name: Some("renamed".into()),
            description: None,
            rules: vec![kept.clone(), changed, rule("", "true")],
        };
        let second = EntryPoint::replaced_by(Some(&first), body, &mut ids, "t2");
        assert_eq!(second.id, first.id);
        assert_eq!(second.version, 2);
        assert_eq!(second.name, "renamed");
        assert_eq!(second.rules[0], kept);
        assert_eq!(second.rules[1].id, first.rules[1].id);
        assert_eq!(second.rules[1].version, "2");
        assert_eq!(second.rules[1].last_updated, "t2");
        assert_eq!(second.rules[2].version, "1");
        let json = second.to_json();
        assert_eq!(json["version"], "2");
        assert_eq!(json["phase"], PHASE);
        assert_eq!(json["rules"][1]["ref"], first.rules[1].id.as_str());
    }
}
