//! Previous WAF: the firewall rules and page rules that interact with the WAF.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{read, write, Ctx, Handled};
use crate::admin::envelope::{ApiError, ApiSuccess, ErrorItem};
use crate::rules::{Filter, Limits};
use crate::waf::errors::{self, invalid_field, INVALID_EXPRESSION, INVALID_FIELD, LIMIT_REACHED};
use crate::waf::ids::object_id;
use crate::waf::legacy::{
    FirewallAction, FirewallFilter, FirewallRule, PageRule, PageRuleAction, PageRuleConstraint,
    PageRuleStatus, PageRuleTarget, BYPASS_PRODUCTS,
};

/// Most firewall rules per zone.
pub const MAX_FIREWALL_RULES: usize = 1000;
/// Longest firewall rule expression accepted (the migration itself stops at 4 KB).
pub const MAX_FIREWALL_EXPRESSION_BYTES: usize = 16 * 1024;
/// Most page rules per zone.
pub const MAX_PAGE_RULES: usize = 125;
const MAX_PATTERN_LEN: usize = 2000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterBody {
    expression: String,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    description: String,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FirewallRuleBody {
    filter: FilterBody,
    action: Value,
    #[serde(default)]
    products: Vec<String>,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    description: String,
    #[serde(default)]
    priority: Option<i64>,
}

/// Checks one firewall rule of a POST array; problems are pointed at `/{index}/…`.
fn parse_firewall_rule(
    value: Value,
    index: usize,
    problems: &mut Vec<ErrorItem>,
) -> Option<FirewallRuleBody> {
    let at = |field: &str| format!("/{index}{field}");
    let body: FirewallRuleBody = match serde_json::from_value(value) {
        Ok(body) => body,
        Err(e) => {
            problems.push(
                ErrorItem::new(INVALID_FIELD, format!("invalid firewall rule: {e}")).at(at("")),
            );
            return None;
        }
    };
    let limits = Limits {
        max_len: MAX_FIREWALL_EXPRESSION_BYTES,
        ..Limits::default()
    };
    if let Err(e) = Filter::compile(&body.filter.expression, &limits) {
        problems.push(
            ErrorItem::new(INVALID_EXPRESSION, format!("invalid expression: {e}"))
                .at(at("/filter/expression")),
        );
    }
    let action = serde_json::from_value::<FirewallAction>(body.action.clone()).ok();
    match action {
        None => problems.push(
            ErrorItem::new(
                INVALID_FIELD,
                "`action` must be one of block, challenge, js_challenge, managed_challenge, allow, log, bypass",
            )
            .at(at("/action")),
        ),
        Some(FirewallAction::Bypass) => {
            if body.products.is_empty() {
                problems.push(
                    ErrorItem::new(INVALID_FIELD, "a bypass rule needs `products`, e.g. [\"waf\"]").at(at("/products")),
                );
            }
            for (p, product) in body.products.iter().enumerate() {
                if !BYPASS_PRODUCTS.contains(&product.as_str()) {
                    problems.push(
                        ErrorItem::new(INVALID_FIELD, format!("unknown product; expected {}", BYPASS_PRODUCTS.join(", ")))
                            .at(at(&format!("/products/{p}"))),
                    );
                }
            }
        }
        Some(_) if !body.products.is_empty() => problems.push(
            ErrorItem::new(INVALID_FIELD, "`products` is only for the bypass action").at(at("/products")),
        ),
        Some(_) => {}
    }
    Some(body)
}

/// `GET|POST firewall/rules` (POST takes an array, as Cloudflare's does).
pub(super) fn rules(ctx: &Ctx<'_>) -> Handled {
    match ctx.method().as_str() {
        "GET" => read(ctx.paginated(&ctx.state().legacy.firewall_rules, 25)?),
        "POST" => {
            ctx.require_write()?;
            let Value::Array(items) = ctx.json()? else {
                return Err(invalid_field(
                    "",
                    "the body must be an array of firewall rules",
                ));
            };
            let mut state = ctx.writable_state();
            if state.legacy.firewall_rules.len() + items.len() > MAX_FIREWALL_RULES {
                return Err(ApiError::bad_request(
                    LIMIT_REACHED,
                    format!("a zone holds at most {MAX_FIREWALL_RULES} firewall rules"),
                ));
            }
            let mut problems = Vec::new();
            let parsed: Vec<FirewallRuleBody> = items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| parse_firewall_rule(item, index, &mut problems))
                .collect();
            if !problems.is_empty() {
                return Err(ApiError::from_items(400, problems));
            }
            if parsed.is_empty() {
                return Err(invalid_field("", "at least one firewall rule expected"));
            }
            let now = ctx.now();
            let mut created = Vec::new();
            for body in parsed {
                let Ok(action) = serde_json::from_value(body.action) else {
                    continue;
                };
                state.next_serial += 1;
                let id = object_id(ctx.zone_id(), "firewall_rule", state.next_serial);
                let filter_id = body
                    .filter
                    .id
                    .filter(|i| !i.is_empty())
                    .unwrap_or_else(|| object_id(ctx.zone_id(), "filter", state.next_serial));
                created.push(FirewallRule {
                    id,
                    paused: body.paused,
                    description: body.description,
                    action,
                    priority: body.priority,
                    products: body.products,
                    filter: FirewallFilter {
                        id: filter_id,
                        expression: body.filter.expression,
                        paused: body.filter.paused,
                        description: body.filter.description,
                    },
                    created_on: now.clone(),
                    modified_on: now.clone(),
                });
            }
            state.legacy.firewall_rules.extend(created.iter().cloned());
            write(ApiSuccess::ok(json!(created)), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}

/// `GET|DELETE firewall/rules/{id}`.
pub(super) fn rule(ctx: &Ctx<'_>, id: &str) -> Handled {
    let rules = &ctx.state().legacy.firewall_rules;
    let position = rules
        .iter()
        .position(|r| r.id == id)
        .ok_or_else(|| errors::not_found("firewall rule", id))?;
    match ctx.method().as_str() {
        "GET" => read(ApiSuccess::ok(json!(rules[position]))),
        "DELETE" => {
            ctx.require_write()?;
            let mut state = ctx.writable_state();
            state.legacy.firewall_rules.remove(position);
            write(ApiSuccess::ok(json!({"id": id})), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PageRuleBody {
    targets: Vec<PageRuleTarget>,
    actions: Vec<Value>,
    #[serde(default)]
    priority: Option<i64>,
    #[serde(default)]
    status: PageRuleStatus,
}

fn parse_page_rule(value: Value) -> Result<(PageRuleBody, Vec<PageRuleAction>), ApiError> {
    let body: PageRuleBody = serde_json::from_value(value)
        .map_err(|e| invalid_field("", format!("invalid page rule: {e}")))?;
    let mut problems = Vec::new();
    match body.targets.as_slice() {
        [target] => {
            if target.target != "url" {
                problems.push(
                    ErrorItem::new(INVALID_FIELD, "`target` must be `url`").at("/targets/0/target"),
                );
            }
            if target.constraint.operator != "matches" {
                problems.push(
                    ErrorItem::new(INVALID_FIELD, "`operator` must be `matches`")
                        .at("/targets/0/constraint/operator"),
                );
            }
            let pattern = &target.constraint.value;
            if pattern.is_empty()
                || pattern.len() > MAX_PATTERN_LEN
                || pattern.chars().any(char::is_whitespace)
            {
                problems.push(
                    ErrorItem::new(
                        INVALID_FIELD,
                        format!(
                            "the URL pattern is 1 to {MAX_PATTERN_LEN} characters without spaces"
                        ),
                    )
                    .at("/targets/0/constraint/value"),
                );
            }
        }
        _ => problems
            .push(ErrorItem::new(INVALID_FIELD, "exactly one URL target expected").at("/targets")),
    }
    if body.actions.is_empty() {
        problems.push(ErrorItem::new(INVALID_FIELD, "at least one action expected").at("/actions"));
    }
    let mut actions = Vec::new();
    for (index, action) in body.actions.iter().enumerate() {
        match serde_json::from_value::<PageRuleAction>(action.clone()) {
            Ok(parsed) => actions.push(parsed),
            Err(_) => {
                let id = action.get("id").and_then(Value::as_str).unwrap_or("");
                let message = if id == "waf" {
                    "the `waf` action takes `value`: `on` or `off`".to_string()
                } else {
                    format!("page rule action `{id}` is not supported here: only `disable_security` and `waf` (on/off) are")
                };
                problems
                    .push(ErrorItem::new(INVALID_FIELD, message).at(format!("/actions/{index}")));
            }
        }
    }
    if problems.is_empty() {
        Ok((body, actions))
    } else {
        Err(ApiError::from_items(400, problems))
    }
}

/// `GET|POST pagerules`.
pub(super) fn page_rules(ctx: &Ctx<'_>) -> Handled {
    match ctx.method().as_str() {
        "GET" => read(ApiSuccess::ok(json!(ctx
            .state()
            .legacy
            .page_rules_in_order()))),
        "POST" => {
            ctx.require_write()?;
            let (body, actions) = parse_page_rule(ctx.json()?)?;
            let mut state = ctx.writable_state();
            if state.legacy.page_rules.len() >= MAX_PAGE_RULES {
                return Err(ApiError::bad_request(
                    LIMIT_REACHED,
                    format!("a zone holds at most {MAX_PAGE_RULES} page rules"),
                ));
            }
            state.next_serial += 1;
            let now = ctx.now();
            let target = &body.targets[0];
            let created = PageRule {
                id: object_id(ctx.zone_id(), "page_rule", state.next_serial),
                targets: vec![PageRuleTarget {
                    target: target.target.clone(),
                    constraint: PageRuleConstraint {
                        operator: target.constraint.operator.clone(),
                        value: target.constraint.value.clone(),
                    },
                }],
                actions,
                priority: body.priority.unwrap_or(1),
                status: body.status,
                created_on: now.clone(),
                modified_on: now,
            };
            state.legacy.page_rules.push(created.clone());
            write(ApiSuccess::ok(json!(created)), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}

/// `GET|DELETE pagerules/{id}`.
pub(super) fn page_rule(ctx: &Ctx<'_>, id: &str) -> Handled {
    let rules = &ctx.state().legacy.page_rules;
    let position = rules
        .iter()
        .position(|r| r.id == id)
        .ok_or_else(|| errors::not_found("page rule", id))?;
    match ctx.method().as_str() {
        "GET" => read(ApiSuccess::ok(json!(rules[position]))),
        "DELETE" => {
            ctx.require_write()?;
            let mut state = ctx.writable_state();
            state.legacy.page_rules.remove(position);
            write(ApiSuccess::ok(json!({"id": id})), state)
        }
        _ => Err(errors::method_not_allowed()),
    }
}
