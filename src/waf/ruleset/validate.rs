//! Validation of an entry point PUT body against the catalog. Every problem found is reported (not
//! only the first), each with the JSON pointer of the offending value.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    ActionParameters, CategoryOverride, EntryPoint, EntryPointBody, OverrideAction, Overrides,
    Rule, RuleAction, RuleOverride, SkipTarget, PHASE,
};
use crate::admin::envelope::{ApiError, ErrorItem};
use crate::rules::{Filter, Limits};
use crate::waf::catalog::catalog;
use crate::waf::errors::{INVALID_EXPRESSION, INVALID_FIELD, NOT_FOUND};

/// Most rules an entry point may hold.
pub const MAX_RULES: usize = 1000;

/// Accumulates error items while walking the body.
#[derive(Default)]
struct Problems(Vec<ErrorItem>);

impl Problems {
    fn add(&mut self, code: u32, pointer: &str, message: impl Into<String>) {
        self.0.push(ErrorItem::new(code, message).at(pointer));
    }

    fn invalid(&mut self, pointer: &str, message: impl Into<String>) {
        self.add(INVALID_FIELD, pointer, message);
    }

    fn unknown_keys(&mut self, object: &Map<String, Value>, pointer: &str, known: &[&str]) {
        for key in object.keys() {
            if !known.contains(&key.as_str()) {
                self.invalid(
                    &format!("{pointer}/{}", escape_pointer(key)),
                    format!(
                        "unknown field `{key}`; expected one of {}",
                        known.join(", ")
                    ),
                );
            }
        }
    }

    fn string<'a>(
        &mut self,
        object: &'a Map<String, Value>,
        key: &str,
        pointer: &str,
    ) -> Option<&'a str> {
        match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.invalid(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` must be a string"),
                );
                None
            }
        }
    }

    fn boolean(&mut self, object: &Map<String, Value>, key: &str, pointer: &str) -> Option<bool> {
        match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                self.invalid(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` must be a boolean"),
                );
                None
            }
        }
    }

    fn override_action(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
    ) -> Option<OverrideAction> {
        let value = object.get("action")?;
        match serde_json::from_value::<OverrideAction>(value.clone()) {
            Ok(action) => Some(action),
            Err(_) => {
                self.invalid(
                    &format!("{pointer}/action"),
                    "`action` must be one of block, challenge, js_challenge, managed_challenge, log",
                );
                None
            }
        }
    }
}

/// RFC 6901 escaping of one pointer token.
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Parses and validates a PUT body of the entry point. Rules may omit `id`, `version`, `ref`
/// (or send them empty); a non-empty `id` must name a rule of `current`.
pub fn parse_entrypoint(
    body: &Value,
    current: Option<&EntryPoint>,
) -> Result<EntryPointBody, ApiError> {
    let mut problems = Problems::default();
    let Some(object) = body.as_object() else {
        return Err(ApiError::from_items(
            400,
            vec![ErrorItem::new(INVALID_FIELD, "the body must be a JSON object").at("")],
        ));
    };
    problems.unknown_keys(
        object,
        "",
        &[
            "id",
            "name",
            "description",
            "kind",
            "phase",
            "version",
            "last_updated",
            "rules",
        ],
    );
    let name = problems.string(object, "name", "").map(str::to_string);
    let description = problems
        .string(object, "description", "")
        .map(str::to_string);
    if let Some(kind) = problems.string(object, "kind", "") {
        if kind != "zone" {
            problems.invalid("/kind", "`kind` of a zone entry point must be `zone`");
        }
    }
    if let Some(phase) = problems.string(object, "phase", "") {
        if phase != PHASE {
            problems.invalid("/phase", format!("`phase` must be `{PHASE}`"));
        }
    }
    let mut rules = Vec::new();
    match object.get("rules") {
        Some(Value::Array(items)) => {
            if items.len() > MAX_RULES {
                problems.invalid("/rules", format!("at most {MAX_RULES} rules"));
            } else {
                for (index, item) in items.iter().enumerate() {
                    if let Some(rule) =
                        parse_rule(item, &format!("/rules/{index}"), current, &mut problems)
                    {
                        rules.push(rule);
                    }
                }
            }
        }
        None | Some(Value::Null) => problems.invalid("/rules", "`rules` is required (an array)"),
        Some(_) => problems.invalid("/rules", "`rules` must be an array"),
    }
    if problems.0.is_empty() {
        Ok(EntryPointBody {
            name,
            description,
            rules,
        })
    } else {
        Err(ApiError::from_items(400, problems.0))
    }
}

fn parse_rule(
    item: &Value,
    pointer: &str,
    current: Option<&EntryPoint>,
    problems: &mut Problems,
) -> Option<Rule> {
    let Some(object) = item.as_object() else {
        problems.invalid(pointer, "a rule must be an object");
        return None;
    };
    let before = problems.0.len();
    problems.unknown_keys(
        object,
        pointer,
        &[
            "id",
            "version",
            "action",
            "action_parameters",
            "expression",
            "description",
            "enabled",
            "ref",
            "last_updated",
        ],
    );
    let id = problems
        .string(object, "id", pointer)
        .unwrap_or("")
        .to_string();
    if !id.is_empty() && !current.is_some_and(|c| c.rules.iter().any(|r| r.id == id)) {
        problems.add(
            NOT_FOUND,
            &format!("{pointer}/id"),
            format!("rule id {id} is not in this ruleset; omit `id` to create a rule"),
        );
    }
    problems.string(object, "version", pointer);
    problems.string(object, "last_updated", pointer);
    let reference = problems
        .string(object, "ref", pointer)
        .unwrap_or("")
        .to_string();
    let description = problems
        .string(object, "description", pointer)
        .unwrap_or("")
        .to_string();
    let enabled = problems.boolean(object, "enabled", pointer).unwrap_or(true);
    let action = match object.get("action") {
        None => {
            problems.invalid(&format!("{pointer}/action"), "`action` is required");
            None
        }
        Some(value) => match serde_json::from_value::<RuleAction>(value.clone()) {
            Ok(action) => Some(action),
            Err(_) => {
                problems.invalid(
                    &format!("{pointer}/action"),
                    "`action` must be one of execute, skip, log in phase http_request_firewall_managed",
                );
                None
            }
        },
    };
    let expression = match object.get("expression") {
        Some(Value::String(expression)) => {
            if let Err(error) = Filter::compile(expression, &Limits::default()) {
                problems.add(
                    INVALID_EXPRESSION,
                    &format!("{pointer}/expression"),
                    format!("invalid expression: {error}"),
                );
            }
            expression.clone()
        }
        None | Some(Value::Null) => {
            problems.invalid(&format!("{pointer}/expression"), "`expression` is required");
            String::new()
        }
        Some(_) => {
            problems.invalid(
                &format!("{pointer}/expression"),
                "`expression` must be a string",
            );
            String::new()
        }
    };
    let parameters_pointer = format!("{pointer}/action_parameters");
    let parameters = object.get("action_parameters").filter(|v| !v.is_null());
    let action_parameters = match (action, parameters) {
        (Some(RuleAction::Execute), Some(value)) => {
            parse_execute(value, &parameters_pointer, problems)
        }
        (Some(RuleAction::Skip), Some(value)) => parse_skip(value, &parameters_pointer, problems),
        (Some(RuleAction::Execute | RuleAction::Skip), None) => {
            problems.invalid(
                &parameters_pointer,
                "`action_parameters` is required for execute and skip",
            );
            None
        }
        (Some(RuleAction::Log), Some(value))
            if value.as_object().is_some_and(|o| !o.is_empty()) =>
        {
            problems.invalid(
                &parameters_pointer,
                "a log rule takes no `action_parameters`",
            );
            None
        }
        _ => None,
    };
    if problems.0.len() != before {
        return None;
    }
    Some(Rule {
        id,
        version: String::new(),
        action: action?,
        action_parameters,
        expression,
        description,
        enabled,
        reference,
        last_updated: String::new(),
    })
}

fn parse_execute(
    value: &Value,
    pointer: &str,
    problems: &mut Problems,
) -> Option<ActionParameters> {
    let Some(object) = value.as_object() else {
        problems.invalid(pointer, "`action_parameters` must be an object");
        return None;
    };
    problems.unknown_keys(object, pointer, &["id", "version", "overrides"]);
    if let Some(version) = problems.string(object, "version", pointer) {
        if version != "latest" {
            problems.invalid(&format!("{pointer}/version"), "`version` must be `latest`");
        }
    }
    let Some(ruleset_id) = problems.string(object, "id", pointer) else {
        problems.invalid(
            &format!("{pointer}/id"),
            "`id` (the managed ruleset to execute) is required",
        );
        return None;
    };
    if catalog().ruleset(ruleset_id).is_none() {
        problems.add(
            NOT_FOUND,
            &format!("{pointer}/id"),
            format!("managed ruleset {ruleset_id} does not exist; GET /zones/{{zone_id}}/rulesets lists them"),
        );
        return None;
    }
    let overrides = match object.get("overrides") {
        None | Some(Value::Null) => Overrides::default(),
        Some(value) => {
            parse_overrides(value, ruleset_id, &format!("{pointer}/overrides"), problems)?
        }
    };
    Some(ActionParameters::Execute {
        id: ruleset_id.to_string(),
        overrides,
    })
}

fn parse_overrides(
    value: &Value,
    ruleset_id: &str,
    pointer: &str,
    problems: &mut Problems,
) -> Option<Overrides> {
    let Some(object) = value.as_object() else {
        problems.invalid(pointer, "`overrides` must be an object");
        return None;
    };
    problems.unknown_keys(
        object,
        pointer,
        &["action", "enabled", "categories", "rules"],
    );
    let mut overrides = Overrides {
        action: problems.override_action(object, pointer),
        enabled: problems.boolean(object, "enabled", pointer),
        ..Overrides::default()
    };
    for (index, item) in array(object, "categories", pointer, problems)
        .iter()
        .enumerate()
    {
        let item_pointer = format!("{pointer}/categories/{index}");
        let Some(entry) = item.as_object() else {
            problems.invalid(&item_pointer, "a category override must be an object");
            continue;
        };
        problems.unknown_keys(entry, &item_pointer, &["category", "action", "enabled"]);
        let action = problems.override_action(entry, &item_pointer);
        let enabled = problems.boolean(entry, "enabled", &item_pointer);
        match problems.string(entry, "category", &item_pointer) {
            Some(category) if catalog().has_category(ruleset_id, category) => {
                overrides.categories.push(CategoryOverride {
                    category: category.to_string(),
                    action,
                    enabled,
                })
            }
            Some(category) => problems.add(
                NOT_FOUND,
                &format!("{item_pointer}/category"),
                format!("no rule of managed ruleset {ruleset_id} has category `{category}`"),
            ),
            None => problems.invalid(
                &format!("{item_pointer}/category"),
                "`category` is required",
            ),
        }
    }
    for (index, item) in array(object, "rules", pointer, problems).iter().enumerate() {
        let item_pointer = format!("{pointer}/rules/{index}");
        let Some(entry) = item.as_object() else {
            problems.invalid(&item_pointer, "a rule override must be an object");
            continue;
        };
        problems.unknown_keys(
            entry,
            &item_pointer,
            &["id", "action", "enabled", "score_threshold"],
        );
        let action = problems.override_action(entry, &item_pointer);
        let enabled = problems.boolean(entry, "enabled", &item_pointer);
        let Some(rule_id) = problems.string(entry, "id", &item_pointer) else {
            problems.invalid(&format!("{item_pointer}/id"), "`id` is required");
            continue;
        };
        let Some(rule) = catalog().managed_rule(ruleset_id, rule_id) else {
            problems.add(
                NOT_FOUND,
                &format!("{item_pointer}/id"),
                format!("rule {rule_id} is not in managed ruleset {ruleset_id}"),
            );
            continue;
        };
        let score_threshold = match entry.get("score_threshold") {
            None | Some(Value::Null) => None,
            Some(value) => match value.as_u64() {
                Some(n) if rule.score_threshold && (1..=1000).contains(&n) => Some(n as u32),
                Some(_) if rule.score_threshold => {
                    problems.invalid(
                        &format!("{item_pointer}/score_threshold"),
                        "`score_threshold` must be 1 to 1000",
                    );
                    None
                }
                _ if !rule.score_threshold => {
                    problems.invalid(
                        &format!("{item_pointer}/score_threshold"),
                        format!("rule {rule_id} takes no `score_threshold`"),
                    );
                    None
                }
                _ => {
                    problems.invalid(
                        &format!("{item_pointer}/score_threshold"),
                        "`score_threshold` must be an integer",
                    );
                    None
                }
            },
        };
        overrides.rules.push(RuleOverride {
            id: rule_id.to_string(),
            action,
            enabled,
            score_threshold,
        });
    }
    Some(overrides)
}

fn array<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    pointer: &str,
    problems: &mut Problems,
) -> &'a [Value] {
    match object.get(key) {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(_) => {
            problems.invalid(
                &format!("{pointer}/{key}"),
                format!("`{key}` must be an array"),
            );
            &[]
        }
    }
}

fn parse_skip(value: &Value, pointer: &str, problems: &mut Problems) -> Option<ActionParameters> {
    let Some(object) = value.as_object() else {
        problems.invalid(pointer, "`action_parameters` must be an object");
        return None;
    };
    problems.unknown_keys(object, pointer, &["ruleset", "rulesets", "rules"]);
    if object.len() != 1 {
        problems.invalid(
            pointer,
            "a skip rule takes exactly one of `ruleset`, `rulesets`, `rules`",
        );
        return None;
    }
    if let Some(ruleset) = problems.string(object, "ruleset", pointer) {
        if ruleset != "current" {
            problems.invalid(&format!("{pointer}/ruleset"), "`ruleset` must be `current`");
            return None;
        }
        return Some(ActionParameters::Skip(SkipTarget::Current {
            ruleset: "current".into(),
        }));
    }
    if object.contains_key("rulesets") {
        let mut rulesets = Vec::new();
        for (index, item) in array(object, "rulesets", pointer, problems)
            .iter()
            .enumerate()
        {
            match item.as_str() {
                Some(id) if catalog().ruleset(id).is_some() => rulesets.push(id.to_string()),
                _ => problems.add(
                    NOT_FOUND,
                    &format!("{pointer}/rulesets/{index}"),
                    "not the id of a managed ruleset",
                ),
            }
        }
        return Some(ActionParameters::Skip(SkipTarget::Rulesets { rulesets }));
    }
    let Some(Value::Object(by_ruleset)) = object.get("rules") else {
        problems.invalid(
            &format!("{pointer}/rules"),
            "`rules` must map managed ruleset ids to rule id arrays",
        );
        return None;
    };
    let mut rules = BTreeMap::new();
    for (ruleset_id, ids) in by_ruleset {
        let ruleset_pointer = format!("{pointer}/rules/{}", escape_pointer(ruleset_id));
        if catalog().ruleset(ruleset_id).is_none() {
            problems.add(
                NOT_FOUND,
                &ruleset_pointer,
                format!("managed ruleset {ruleset_id} does not exist"),
            );
            continue;
        }
        let Some(ids) = ids.as_array() else {
            problems.invalid(&ruleset_pointer, "must be an array of rule ids");
            continue;
        };
        let mut kept = Vec::new();
        for (index, id) in ids.iter().enumerate() {
            match id.as_str() {
                Some(rule_id) if catalog().managed_rule(ruleset_id, rule_id).is_some() => {
                    kept.push(rule_id.to_string())
                }
                _ => problems.add(
                    NOT_FOUND,
                    &format!("{ruleset_pointer}/{index}"),
                    format!("not a rule of managed ruleset {ruleset_id}"),
                ),
            }
        }
        rules.insert(ruleset_id.clone(), kept);
    }
    Some(ActionParameters::Skip(SkipTarget::Rules { rules }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waf::catalog::{MANAGED_RULESET_ID, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID};
    use serde_json::json;

    fn pointers(error: &ApiError) -> Vec<String> {
        error
            .errors
            .iter()
            .map(|e| {
                e.source
                    .as_ref()
                    .map(|s| s.pointer.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    #[test]
    fn accepts_a_migration_config_with_empty_ids() {
        let body = json!({"name": "zone", "rules": [
            {"id": "", "version": "", "ref": "", "action": "execute", "expression": "true",
             "description": "", "enabled": true,
             "action_parameters": {"id": OWASP_RULESET_ID, "overrides": {
                "categories": [{"category": "paranoia-level-3", "enabled": false}],
                "rules": [{"id": OWASP_ANOMALY_RULE_ID, "score_threshold": 40, "action": "log"}]}}},
            {"action": "skip", "expression": "true", "action_parameters": {"ruleset": "current"}},
            {"action": "skip", "expression": "false", "action_parameters": {"rulesets": [MANAGED_RULESET_ID]}}
        ]});
        let parsed = parse_entrypoint(&body, None).expect("valid");
        assert_eq!(parsed.rules.len(), 3);
        assert!(parsed.rules[1].enabled, "enabled defaults to true");
    }

    #[test]
    fn reports_every_problem_with_its_pointer() {
        let body = json!({"rules": [
            {"action": "deny", "expression": "true"},
            {"action": "execute", "expression": "nonsense(", "action_parameters": {"id": "0000"}},
            {"action": "execute", "expression": "true", "action_parameters": {"id": MANAGED_RULESET_ID,
                "overrides": {"rules": [{"id": "nope"}, {"id": OWASP_ANOMALY_RULE_ID}],
                              "categories": [{"category": "paranoia-level-9"}]}}},
            {"action": "execute", "expression": "true", "action_parameters": {"id": OWASP_RULESET_ID,
                "overrides": {"rules": [{"id": OWASP_ANOMALY_RULE_ID, "score_threshold": 0, "action": "explode"}]}}},
            {"id": "abc", "action": "skip", "expression": "true", "extra": 1,
             "action_parameters": {"ruleset": "other"}}
        ]});
        let error = parse_entrypoint(&body, None).expect_err("invalid");
        assert_eq!(error.status, 400);
        let pointers = pointers(&error);
        for expected in [
            "/rules/0/action",
            "/rules/1/expression",
            "/rules/1/action_parameters/id",
            "/rules/2/action_parameters/overrides/categories/0/category",
            "/rules/2/action_parameters/overrides/rules/0/id",
            "/rules/2/action_parameters/overrides/rules/1/id",
            "/rules/3/action_parameters/overrides/rules/0/action",
            "/rules/3/action_parameters/overrides/rules/0/score_threshold",
            "/rules/4/id",
            "/rules/4/extra",
            "/rules/4/action_parameters/ruleset",
        ] {
            assert!(
                pointers.contains(&expected.to_string()),
                "missing {expected} in {pointers:?}"
            );
        }
    }

    #[test]
    fn rejects_non_objects_and_missing_rules() {
        assert!(parse_entrypoint(&json!([]), None).is_err());
        let error = parse_entrypoint(&json!({"name": "x"}), None).expect_err("no rules");
        assert_eq!(pointers(&error), vec!["/rules".to_string()]);
        let error = parse_entrypoint(
            &json!({"rules": [], "phase": "http_request_firewall_custom"}),
            None,
        )
        .expect_err("wrong phase");
        assert_eq!(pointers(&error), vec!["/phase".to_string()]);
    }

    #[test]
    fn skip_by_rule_ids_checks_the_catalog() {
        let ok = json!({"rules": [{"action": "skip", "expression": "true",
            "action_parameters": {"rules": {OWASP_RULESET_ID: [OWASP_ANOMALY_RULE_ID]}}}]});
        assert!(parse_entrypoint(&ok, None).is_ok());
        let bad = json!({"rules": [{"action": "skip", "expression": "true",
            "action_parameters": {"rules": {MANAGED_RULESET_ID: [OWASP_ANOMALY_RULE_ID]}}}]});
        let error = parse_entrypoint(&bad, None).expect_err("wrong ruleset");
        assert_eq!(
            pointers(&error),
            vec![format!(
                "/rules/0/action_parameters/rules/{MANAGED_RULESET_ID}/0"
            )]
        );
    }
}
