//! The WAF API driven through its public entry point `waf::api::handle`, the way the admin router
//! calls it: each call's returned state is what gets persisted, and a "restart" reloads the state
//! from its JSON serialization (the form the state store writes). Only what is cheaper to sweep
//! here than over HTTP lives here (the previous-WAF packages surface, the entry point before
//! migration, a bad-input sweep); the migration itself is tested end to end in `waf_http.rs`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use escgate::admin::envelope::ApiResult;
use escgate::config::{Plan, ZoneConfig};
use escgate::waf::api::{handle, handles, WafRequest};
use escgate::waf::catalog::{catalog, MANAGED_RULESET_ID};
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
    catalog().vendor_package().id.clone()
}

fn owasp_id() -> String {
    catalog().owasp_package().id.clone()
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

    let vendor = catalog().vendor_package();
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
    let owasp_rule = &catalog().owasp_package().groups[0].rules[0];
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
