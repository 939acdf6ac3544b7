//! The WAF API driven through its public entry point `waf::api::handle`, the way the admin router
//! calls it: each call's returned state is what gets persisted, and a "restart" reloads the state
//! from its JSON serialization (the form the state store writes).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use escgate::admin::envelope::ApiResult;
use escgate::config::{Plan, ZoneConfig};
use escgate::waf::api::{handle, handles, WafRequest};
use escgate::waf::catalog::{
    catalog, DetectionMode, MANAGED_RULESET_ID, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID,
};
use escgate::waf::WafZoneState;
use serde_json::{json, Value};

const ENTRYPOINT: &str = "rulesets/phases/http_request_firewall_managed/entrypoint";

struct Zone {
    config: ZoneConfig,
    state: WafZoneState,
    clock: u64,
}

impl Zone {
    fn new(plan: Plan) -> Zone {
        Zone {
            config: ZoneConfig {
                id: "023e105f4ecef8ad9ca31a8372d0c353".into(),
                name: "example.com".into(),
                plan,
                ..ZoneConfig::default()
            },
            state: WafZoneState::default(),
            clock: 1_700_000_000,
        }
    }

    /// One call; `target` is `path?query`. Returns (HTTP status, envelope body).
    fn call_as(
        &mut self,
        can_write: bool,
        method: &str,
        target: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let segments: Vec<&str> = path.split('/').collect();
        assert!(handles(&segments), "{path} is a WAF route");
        let query: Vec<(String, String)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_string(), v.to_string())
            })
            .collect();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let method = http::Method::from_bytes(method.as_bytes()).expect("method");
        self.clock += 1;
        let outcome = handle(WafRequest {
            zone: &self.config,
            state: &self.state,
            method: &method,
            path: &segments,
            query: &query,
            body: body.as_bytes(),
            can_write,
            now: UNIX_EPOCH + Duration::from_secs(self.clock),
        });
        if let Some(new_state) = outcome.new_state {
            assert!(outcome.result.is_ok(), "state only changes on success");
            self.state = new_state;
        }
        envelope(outcome.result)
    }

    fn call(&mut self, method: &str, target: &str, body: Option<Value>) -> (u16, Value) {
        self.call_as(true, method, target, body)
    }

    fn ok(&mut self, method: &str, target: &str, body: Option<Value>) -> Value {
        let (status, envelope) = self.call(method, target, body);
        assert_eq!(status, 200, "{method} {target}: {envelope}");
        assert_eq!(envelope["success"], true);
        envelope
    }

    /// Reloads the state the way the store does after a restart.
    fn restart(&mut self) {
        let saved = serde_json::to_string(&self.state).expect("serializes");
        self.state = serde_json::from_str(&saved).expect("loads");
    }
}

fn envelope(result: ApiResult) -> (u16, Value) {
    match result {
        Ok(success) => (success.status, success.body()),
        Err(error) => (error.status, error.body()),
    }
}

fn codes(body: &Value) -> Vec<u64> {
    body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["code"].as_u64().expect("code"))
        .collect()
}

fn vendor_id() -> String {
    catalog()
        .package_by_mode(DetectionMode::Traditional)
        .id
        .clone()
}

fn owasp_id() -> String {
    catalog().package_by_mode(DetectionMode::Anomaly).id.clone()
}

fn waf_on(zone: &mut Zone) {
    zone.ok("PATCH", "settings/waf", Some(json!({"value": "on"})));
}

fn execute_rule<'a>(config: &'a Value, ruleset: &str, expression: &str) -> &'a Value {
    config["result"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| {
            r["action"] == "execute"
                && r["action_parameters"]["id"] == ruleset
                && r["expression"] == expression
        })
        .unwrap_or_else(|| panic!("no execute rule for {ruleset} on {expression}: {config}"))
}

fn bypass_waf_rule(expression: &str) -> Value {
    json!({"filter": {"expression": expression}, "action": "bypass", "products": ["waf"], "description": "office"})
}

#[test]
fn previous_waf_packages_groups_rules() {
    let mut zone = Zone::new(Plan::Pro);
    let list = zone.ok("GET", "firewall/waf/packages?per_page=1&page=2", None);
    assert_eq!(list["result_info"]["total_count"], 2);
    assert_eq!(list["result"].as_array().map(Vec::len), Some(1));

    let owasp = zone.ok(
        "GET",
        &format!("firewall/waf/packages/{}", owasp_id()),
        None,
    );
    assert_eq!(owasp["result"]["detection_mode"], "anomaly");
    assert_eq!(owasp["result"]["sensitivity"], "high");
    assert_eq!(owasp["result"]["action_mode"], "challenge");

    let (status, body) = zone.call(
        "PATCH",
        &format!("firewall/waf/packages/{}", vendor_id()),
        Some(json!({"sensitivity": "low"})),
    );
    assert_eq!((status, codes(&body)), (400, vec![1027]));

    let patched = zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "low", "action_mode": "simulate"})),
    );
    assert_eq!(patched["result"]["sensitivity"], "low");
    let (status, body) = zone.call(
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "extreme"})),
    );
    assert_eq!(status, 400);
    assert_eq!(body["errors"][0]["source"]["pointer"], "/sensitivity");

    let vendor = catalog().package_by_mode(DetectionMode::Traditional);
    let group = &vendor.groups[0];
    let rule = &group.rules[0];
    let groups = zone.ok(
        "GET",
        &format!("firewall/waf/packages/{}/groups", vendor.id),
        None,
    );
    assert_eq!(
        groups["result_info"]["total_count"],
        vendor.groups.len() as u64
    );
    let patched = zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}/groups/{}", vendor.id, group.id),
        Some(json!({"mode": "off"})),
    );
    assert_eq!(patched["result"]["mode"], "off");
    let (status, _) = zone.call(
        "PATCH",
        &format!("firewall/waf/packages/{}/groups/{}", vendor.id, group.id),
        Some(json!({"mode": "simulate"})),
    );
    assert_eq!(status, 400);

    let fetched = zone.ok(
        "GET",
        &format!("firewall/waf/packages/{}/rules/{}", vendor.id, rule.id),
        None,
    );
    assert_eq!(fetched["result"]["priority"], rule.priority.as_str());
    assert!(fetched["result"]["priority"].is_string());
    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}/rules/{}", vendor.id, rule.id),
        Some(json!({"mode": "simulate"})),
    );
    let owasp_rule = &catalog().package_by_mode(DetectionMode::Anomaly).groups[0].rules[0];
    let (status, body) = zone.call(
        "PATCH",
        &format!(
            "firewall/waf/packages/{}/rules/{}",
            owasp_id(),
            owasp_rule.id
        ),
        Some(json!({"mode": "simulate"})),
    );
    assert_eq!(status, 400, "OWASP rules only allow on/off: {body}");
    let (status, _) = zone.call(
        "GET",
        &format!("firewall/waf/packages/{}/rules/nope", vendor.id),
        None,
    );
    assert_eq!(status, 404);

    let (status, body) = zone.call_as(false, "PATCH", "settings/waf", Some(json!({"value": "on"})));
    assert_eq!((status, codes(&body)), (403, vec![10000]));
    let (status, body) = zone.call("PATCH", "settings/waf", Some(json!({"value": "maybe"})));
    assert_eq!(
        (status, body["errors"][0]["source"]["pointer"].as_str()),
        (400, Some("/value"))
    );
    let (status, body) = zone.call("DELETE", "settings/waf", None);
    assert_eq!((status, codes(&body)), (405, vec![10405]));

    zone.restart();
    let rules = zone.ok(
        "GET",
        &format!(
            "firewall/waf/packages/{}/rules?group_id={}",
            vendor.id, group.id
        ),
        None,
    );
    assert_eq!(rules["result"][0]["mode"], "simulate");
    let owasp = zone.ok(
        "GET",
        &format!("firewall/waf/packages/{}", owasp_id()),
        None,
    );
    assert_eq!(owasp["result"]["action_mode"], "simulate");
}

#[test]
fn firewall_and_page_rules_are_validated() {
    let mut zone = Zone::new(Plan::Business);
    let (status, body) = zone.call(
        "POST",
        "firewall/rules",
        Some(json!([
            {"filter": {"expression": "true"}, "action": "bypass"},
            {"filter": {"expression": "true"}, "action": "smite"},
            {"filter": {"expression": "nonsense("}, "action": "block"},
            {"filter": {"expression": "true"}, "action": "block", "products": ["waf"]}
        ])),
    );
    assert_eq!(status, 400);
    let pointers: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["source"]["pointer"].as_str())
        .collect();
    assert_eq!(
        pointers,
        vec![
            "/0/products",
            "/1/action",
            "/2/filter/expression",
            "/3/products"
        ]
    );

    let created = zone.ok(
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf_rule("true")])),
    );
    let id = created["result"][0]["id"].as_str().expect("id").to_string();
    assert_eq!(created["result"][0]["products"], json!(["waf"]));
    zone.ok("GET", &format!("firewall/rules/{id}"), None);

    let (status, body) = zone.call(
        "POST",
        "pagerules",
        Some(json!({"targets": [{"target": "url", "constraint": {"operator": "matches", "value": "example.com/*"}}],
                    "actions": [{"id": "always_use_https"}]})),
    );
    assert_eq!(status, 400);
    assert_eq!(body["errors"][0]["source"]["pointer"], "/actions/0");
    assert!(body["errors"][0]["message"]
        .as_str()
        .expect("message")
        .contains("always_use_https"));
    let page_rule = zone.ok(
        "POST",
        "pagerules",
        Some(json!({"targets": [{"target": "url", "constraint": {"operator": "matches", "value": "example.com/*"}}],
                    "actions": [{"id": "waf", "value": "off"}]})),
    );
    assert_eq!(
        page_rule["result"]["actions"],
        json!([{"id": "waf", "value": "off"}])
    );
    let page_rule_id = page_rule["result"]["id"].as_str().expect("id").to_string();

    zone.restart();
    assert_eq!(
        zone.ok("GET", "firewall/rules", None)["result"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let deleted = zone.ok("DELETE", &format!("pagerules/{page_rule_id}"), None);
    assert_eq!(deleted["result"], json!({"id": page_rule_id}));
    let deleted = zone.ok("DELETE", &format!("firewall/rules/{id}"), None);
    assert_eq!(deleted["result"]["id"], id.as_str());
    assert_eq!(
        zone.call("DELETE", &format!("firewall/rules/{id}"), None).0,
        404
    );
}

#[test]
fn config_rows_of_the_mapping_table() {
    // (sensitivity to PATCH or None for Default, disabled paranoia levels, threshold)
    let rows: [(Option<&str>, &[u8], u64); 4] = [
        (Some("high"), &[3, 4], 40),
        (Some("medium"), &[2, 3, 4], 25),
        (Some("low"), &[2, 3, 4], 40),
        (None, &[3, 4], 40),
    ];
    for (sensitivity, disabled_levels, threshold) in rows {
        let mut zone = Zone::new(Plan::Pro);
        waf_on(&mut zone);
        if let Some(sensitivity) = sensitivity {
            zone.ok(
                "PATCH",
                &format!("firewall/waf/packages/{}", owasp_id()),
                Some(json!({"sensitivity": sensitivity})),
            );
        }
        let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
        let owasp = execute_rule(&config, OWASP_RULESET_ID, "true");
        assert_eq!(owasp["enabled"], true);
        assert_eq!(owasp["id"], "");
        assert_eq!(owasp["version"], "");
        assert_eq!(owasp["ref"], "");
        let categories: Vec<Value> = disabled_levels
            .iter()
            .map(|l| json!({"category": format!("paranoia-level-{l}"), "enabled": false}))
            .collect();
        assert_eq!(
            owasp["action_parameters"]["overrides"]["categories"],
            json!(categories),
            "{sensitivity:?}"
        );
        assert_eq!(
            owasp["action_parameters"]["overrides"]["rules"],
            json!([{"id": OWASP_ANOMALY_RULE_ID, "action": "challenge", "score_threshold": threshold}])
        );
        assert_eq!(
            execute_rule(&config, MANAGED_RULESET_ID, "true")["enabled"],
            true
        );
        assert_eq!(
            config["messages"][0]["code"], 1440,
            "OWASP overrides are not migrated"
        );
    }
}

#[test]
fn config_action_mode_owasp_off_and_zone_off() {
    let mut zone = Zone::new(Plan::Pro);
    waf_on(&mut zone);
    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"action_mode": "simulate"})),
    );
    let config = zone.ok("GET", "waf_migration/config", None);
    let owasp = execute_rule(&config, OWASP_RULESET_ID, "true");
    assert_eq!(
        owasp["action_parameters"]["overrides"]["rules"][0]["action"],
        "log"
    );

    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "off"})),
    );
    let config = zone.ok("GET", "waf_migration/config", None);
    assert_eq!(
        execute_rule(&config, OWASP_RULESET_ID, "true")["enabled"],
        false
    );
    assert_eq!(
        execute_rule(&config, MANAGED_RULESET_ID, "true")["enabled"],
        true
    );

    zone.ok("PATCH", "settings/waf", Some(json!({"value": "off"})));
    let config = zone.ok("GET", "waf_migration/config", None);
    assert_eq!(config["result"]["rules"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        execute_rule(&config, MANAGED_RULESET_ID, "true")["enabled"],
        false
    );
    assert_eq!(
        execute_rule(&config, OWASP_RULESET_ID, "true")["enabled"],
        false
    );
}

#[test]
fn config_vendor_groups_and_rules_become_overrides() {
    let mut zone = Zone::new(Plan::Pro);
    waf_on(&mut zone);
    let vendor = catalog().package_by_mode(DetectionMode::Traditional);
    let group = &vendor.groups[2];
    let rule = &vendor.groups[0].rules[3];
    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}/groups/{}", vendor.id, group.id),
        Some(json!({"mode": "off"})),
    );
    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}/rules/{}", vendor.id, rule.id),
        Some(json!({"mode": "disable"})),
    );
    let config = zone.ok("GET", "waf_migration/config", None);
    let overrides = &execute_rule(&config, MANAGED_RULESET_ID, "true")["action_parameters"]
        ["overrides"]["rules"];
    let mut expected = vec![json!({"id": rule.new_rule_id, "enabled": false})];
    expected.extend(
        group
            .rules
            .iter()
            .map(|r| json!({"id": r.new_rule_id, "enabled": false})),
    );
    assert_eq!(overrides, &json!(expected));
}

#[test]
fn config_firewall_bypass_and_page_rules() {
    let mut zone = Zone::new(Plan::Business);
    waf_on(&mut zone);
    zone.ok(
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf_rule("true")])),
    );
    for (pattern, action) in [
        ("example.com/admin/*", json!({"id": "disable_security"})),
        ("example.com/api/*", json!({"id": "waf", "value": "off"})),
    ] {
        zone.ok(
            "POST",
            "pagerules",
            Some(json!({"targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
                        "actions": [action]})),
        );
    }
    let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
    let rules = config["result"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 5);
    for rule in &rules[..3] {
        assert_eq!(rule["action"], "skip");
        assert_eq!(rule["action_parameters"], json!({"ruleset": "current"}));
        assert_eq!(rule["enabled"], true);
    }
    assert_eq!(rules[0]["expression"], "true");
    assert_eq!(
        rules[1]["expression"],
        r#"(http.host eq "example.com" and http.request.uri.path matches "^/admin/.*$")"#
    );
    assert!(rules[2]["description"]
        .as_str()
        .expect("description")
        .contains("Web Application Firewall: Off"));

    let mut zone = Zone::new(Plan::Business);
    zone.ok(
        "POST",
        "pagerules",
        Some(json!({"targets": [{"target": "url", "constraint": {"operator": "matches", "value": "example.com/shop/*"}}],
                    "actions": [{"id": "waf", "value": "on"}]})),
    );
    let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
    let scoped = r#"(http.host eq "example.com" and http.request.uri.path matches "^/shop/.*$")"#;
    assert_eq!(
        execute_rule(&config, MANAGED_RULESET_ID, scoped)["enabled"],
        true
    );
    assert_eq!(
        execute_rule(&config, OWASP_RULESET_ID, scoped)["enabled"],
        true
    );
    assert_eq!(
        execute_rule(&config, MANAGED_RULESET_ID, "true")["enabled"],
        false
    );
}

#[test]
fn phase_one_versus_phase_two_eligibility() {
    let mut zone = Zone::new(Plan::Pro);
    let check = zone.ok("GET", "waf_migration/check", None);
    assert_eq!(
        check["result"],
        json!({"compatible": true, "migration_state": "start"})
    );

    waf_on(&mut zone);
    let check = zone.ok("GET", "waf_migration/check", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1428);
    let check = zone.ok("GET", "waf_migration/check?phase_two=1", None);
    assert_eq!(check["result"]["compatible"], true);

    zone.ok(
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "off"})),
    );
    assert_eq!(
        zone.ok("GET", "waf_migration/check", None)["result"]["compatible"],
        true
    );
    zone.ok(
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf_rule("true")])),
    );
    let check = zone.ok("GET", "waf_migration/check", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1429);
    assert_eq!(
        zone.ok("GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true
    );

    let (status, body) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending"),
        Some(json!({"rules": []})),
    );
    assert_eq!(status, 409, "phase 1 refuses: {body}");
    assert_eq!(codes(&body), vec![1420, 1429]);
}

#[test]
fn uri_override_blocks_until_deleted_then_migration_succeeds() {
    let mut zone = Zone::new(Plan::Business);
    let group = &catalog().package_by_mode(DetectionMode::Traditional).groups[0];
    let created = zone.ok(
        "POST",
        "firewall/waf/overrides",
        Some(
            json!({"urls": ["example.com/legacy/*"], "description": "old app", "priority": 1,
                    "groups": {group.id.clone(): "off"}, "rewrite_action": {"block": "challenge"}}),
        ),
    );
    let override_id = created["result"]["id"].as_str().expect("id").to_string();
    assert_eq!(created["result"]["urls"], json!(["example.com/legacy/*"]));
    let (status, _) = zone.call(
        "POST",
        "firewall/waf/overrides",
        Some(json!({"urls": ["a"], "groups": {"nope": "off"}})),
    );
    assert_eq!(status, 400);
    zone.ok(
        "PUT",
        &format!("firewall/waf/overrides/{override_id}"),
        Some(json!({"urls": ["example.com/legacy2/*"]})),
    );
    assert_eq!(
        zone.ok("GET", "firewall/waf/overrides", None)["result"][0]["urls"][0],
        "example.com/legacy2/*"
    );

    for target in ["waf_migration/check", "waf_migration/check?phase_two=1"] {
        let check = zone.ok("GET", target, None);
        assert_eq!(check["result"]["compatible"], false);
        let message = check["messages"][0]["message"].as_str().expect("message");
        assert!(message.contains(&override_id), "{message}");
    }
    let (status, body) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=1&phase_two=1"),
        Some(json!({"rules": []})),
    );
    assert_eq!((status, codes(&body)), (409, vec![1420, 1427]));

    let deleted = zone.ok(
        "DELETE",
        &format!("firewall/waf/overrides/{override_id}"),
        None,
    );
    assert_eq!(deleted["result"], json!({"id": override_id}));
    assert_eq!(
        zone.ok("GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true
    );
    let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
    zone.ok(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(
        zone.ok("GET", "waf_migration/status", None)["result"]["migration_state"],
        "complete"
    );
}

#[test]
fn two_hundred_rules_and_four_kilobyte_expression() {
    let mut zone = Zone::new(Plan::Enterprise);
    let rules: Vec<Value> = (0..201).map(|_| bypass_waf_rule("true")).collect();
    zone.ok("POST", "firewall/rules", Some(Value::Array(rules)));
    let check = zone.ok("GET", "waf_migration/check?phase_two=1", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1424);
    assert!(check["messages"][0]["message"]
        .as_str()
        .expect("message")
        .contains("201"));
    let (status, body) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=2&phase_two=1"),
        Some(json!({"rules": []})),
    );
    assert_eq!((status, codes(&body)), (409, vec![1420, 1424]));

    let mut zone = Zone::new(Plan::Enterprise);
    // Whitespace keeps the expression valid whatever the Rules engine supports; only its length matters.
    let long = format!("true{}", " ".repeat(4096));
    let created = zone.ok(
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf_rule(&long)])),
    );
    let id = created["result"][0]["id"].as_str().expect("id").to_string();
    let check = zone.ok("GET", "waf_migration/check?phase_two=1", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1425);
    assert!(check["messages"][0]["message"]
        .as_str()
        .expect("message")
        .contains(&id));
}

#[test]
fn validation_mode_is_enterprise_only() {
    for plan in [Plan::Free, Plan::Pro, Plan::Business] {
        let mut zone = Zone::new(plan);
        let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
        let (status, body) = zone.call(
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
            Some(config["result"].clone()),
        );
        assert_eq!((status, codes(&body)), (403, vec![1421]), "{plan:?}");
        assert_eq!(
            zone.state,
            WafZoneState::default(),
            "refused calls change nothing"
        );
        // Their path: straight to pending.
        zone.ok(
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
            Some(config["result"].clone()),
        );
        let status = zone.ok("GET", "waf_migration/status", None);
        assert_eq!(status["result"]["old_waf_status"], "disabled");
        assert_eq!(status["result"]["new_waf_status"], "enabled");
    }
}

#[test]
fn enterprise_start_validation_complete_survives_restart_and_refuses_the_rest() {
    let mut zone = Zone::new(Plan::Enterprise);
    waf_on(&mut zone);
    let status = zone.ok("GET", "waf_migration/status", None);
    assert_eq!(status["result"]["old_waf_status"], "enabled");
    assert_eq!(status["result"]["new_waf_status"], "disabled");
    assert_eq!(status["result"]["migration_state"], "start");
    assert_eq!(status["result"]["source"], "zone");

    let (status, body) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=finish"),
        Some(json!({"rules": []})),
    );
    assert_eq!((status, codes(&body)), (400, vec![1423]));

    let config = zone.ok("GET", "waf_migration/config?phase_two=1", None);
    let mut body = config["result"].clone();
    body["rules"][0]["action"] = json!("explode");
    let (status, error) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
        Some(body),
    );
    assert_eq!(status, 400);
    assert_eq!(error["errors"][0]["source"]["pointer"], "/rules/0/action");
    assert_eq!(
        zone.ok("GET", "waf_migration/status", None)["result"]["migration_state"],
        "start"
    );

    let validated = zone.ok(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(validated["result"]["version"], "1");
    let rule_id = validated["result"]["rules"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(rule_id.len(), 32);
    zone.restart();
    let status = zone.ok("GET", "waf_migration/status", None);
    assert_eq!(status["result"]["migration_state"], "validation");
    assert_eq!(status["result"]["old_waf_status"], "enabled");
    assert_eq!(status["result"]["new_waf_status"], "enabled");
    let (status, body) = zone.call(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation"),
        Some(config["result"].clone()),
    );
    assert_eq!((status, codes(&body)), (409, vec![1422]));

    // Adjust in validation mode (no flag), keeping rule ids: the ruleset version increments.
    let mut adjusted = zone.ok("GET", ENTRYPOINT, None)["result"].clone();
    adjusted["rules"][1]["enabled"] = json!(false);
    let adjusted = zone.ok("PUT", ENTRYPOINT, Some(adjusted));
    assert_eq!(adjusted["result"]["version"], "2");
    assert_eq!(adjusted["result"]["rules"][0]["id"], rule_id.as_str());
    assert_eq!(adjusted["result"]["rules"][0]["version"], "1");
    assert_eq!(adjusted["result"]["rules"][1]["version"], "2");

    let current = adjusted["result"].clone();
    let done = zone.ok(
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending"),
        Some(current.clone()),
    );
    assert_eq!(done["result"]["version"], "3");
    zone.restart();
    let status = zone.ok("GET", "waf_migration/status", None);
    assert_eq!(status["result"]["migration_state"], "complete");
    assert_eq!(status["result"]["old_waf_status"], "disabled");

    for flag in ["pending", "1", "validation", "2"] {
        let (status, body) = zone.call(
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration={flag}"),
            Some(current.clone()),
        );
        assert_eq!(
            (status, codes(&body)),
            (409, vec![1430]),
            "irreversible ({flag})"
        );
    }
    for (method, target) in [
        ("GET", "settings/waf".to_string()),
        ("PATCH", "settings/waf".to_string()),
        ("GET", "firewall/waf/packages".to_string()),
        (
            "GET",
            format!("firewall/waf/packages/{}/rules", vendor_id()),
        ),
        ("POST", "firewall/waf/overrides".to_string()),
        ("GET", "firewall/rules".to_string()),
        ("DELETE", "pagerules/abc".to_string()),
    ] {
        let (status, body) = zone.call(method, &target, Some(json!({})));
        assert_eq!(
            (status, codes(&body)),
            (410, vec![1410]),
            "{method} {target}"
        );
    }
    assert_eq!(zone.call("GET", "waf_migration/config", None).0, 409);
    let check = zone.ok("GET", "waf_migration/check", None);
    assert_eq!(
        check["result"],
        json!({"compatible": false, "migration_state": "complete"})
    );

    // The rulesets API keeps working after migration.
    let list = zone.ok("GET", "rulesets", None);
    assert_eq!(list["result"].as_array().map(Vec::len), Some(3));
    let entry_id = list["result"][0]["id"].as_str().expect("id").to_string();
    assert_eq!(
        zone.ok("GET", &format!("rulesets/{entry_id}"), None)["result"]["version"],
        "3"
    );
    let managed = zone.ok("GET", &format!("rulesets/{OWASP_RULESET_ID}"), None);
    assert!(managed["result"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .any(|r| r["id"] == OWASP_ANOMALY_RULE_ID));
    let new = zone.ok(
        "PUT",
        ENTRYPOINT,
        Some(json!({"rules": [{"action": "execute", "expression": "true",
                               "action_parameters": {"id": MANAGED_RULESET_ID}}]})),
    );
    assert_eq!(new["result"]["version"], "4");
    assert_eq!(
        zone.call("GET", "rulesets/ffffffffffffffffffffffffffffffff", None)
            .0,
        404
    );
}

#[test]
fn entrypoint_before_migration_only_as_the_docs_allow() {
    let mut zone = Zone::new(Plan::Pro);
    assert_eq!(zone.call("GET", ENTRYPOINT, None).0, 404);
    let enabled = json!({"rules": [{"action": "execute", "expression": "true", "action_parameters": {"id": MANAGED_RULESET_ID}}]});
    let (status, body) = zone.call("PUT", ENTRYPOINT, Some(enabled.clone()));
    assert_eq!((status, codes(&body)), (403, vec![1426]));
    let mut disabled = enabled.clone();
    disabled["rules"][0]["enabled"] = json!(false);
    zone.ok("PUT", ENTRYPOINT, Some(disabled));
    assert_eq!(
        zone.ok("GET", "waf_migration/status", None)["result"]["new_waf_status"],
        "disabled"
    );

    let mut zone = Zone::new(Plan::Enterprise);
    let put = zone.ok("PUT", ENTRYPOINT, Some(enabled));
    assert_eq!(put["result"]["phase"], "http_request_firewall_managed");
    assert_eq!(
        zone.ok("GET", "waf_migration/status", None)["result"]["new_waf_status"],
        "enabled"
    );
    assert_eq!(
        zone.ok("GET", "waf_migration/status", None)["result"]["migration_state"],
        "start"
    );
}

#[test]
fn bad_input_is_answered_not_panicked() {
    let mut zone = Zone::new(Plan::Enterprise);
    let targets = [
        "settings/waf",
        "firewall/waf/overrides",
        "firewall/rules",
        "pagerules",
        ENTRYPOINT,
    ];
    for target in targets {
        for method in ["POST", "PUT", "PATCH"] {
            for raw in [
                "",
                "{",
                "null",
                "[]",
                "{}",
                "[1, \"x\", null]",
                "{\"rules\": [null, 1, {}]}",
            ] {
                let outcome = handle(WafRequest {
                    zone: &zone.config,
                    state: &zone.state,
                    method: &http::Method::from_bytes(method.as_bytes()).expect("method"),
                    path: &target.split('/').collect::<Vec<_>>(),
                    query: &[],
                    body: raw.as_bytes(),
                    can_write: true,
                    now: SystemTime::now(),
                });
                if let Err(error) = &outcome.result {
                    assert!(
                        (400..500).contains(&error.status),
                        "{method} {target} {raw}: {error:?}"
                    );
                }
            }
        }
    }
    let (status, body) = zone.call("GET", "firewall/waf/packages?page=0", None);
    assert_eq!((status, codes(&body)), (400, vec![1005]));
    let (status, body) = zone.call(
        "GET",
        "rulesets/phases/http_request_firewall_custom/entrypoint",
        None,
    );
    assert_eq!((status, codes(&body)), (400, vec![7003, 7000]));
    let (status, body) = zone.call("POST", "waf_migration/check", None);
    assert_eq!((status, codes(&body)), (405, vec![10405]));
    zone.restart();
    assert_eq!(zone.state, WafZoneState::default());
}
