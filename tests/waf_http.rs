//! The WAF migration end to end: escgate started from TOML with its admin API on loopback, driven
//! over HTTP with the credentials a user has (an API token, an API key), its state on disk across
//! restarts of the process.

mod admin_support;
mod common;

use std::net::IpAddr;
use std::path::PathBuf;

use admin_support::{call, Answer, Auth};
use common::{Escgate, ACCOUNT_ID};
use escgate::admin::auth::hash_secret;
use escgate::rules::{Filter, Limits, RequestView};
use escgate::waf::catalog::{catalog, MANAGED_RULESET_ID, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID};
use serde_json::{json, Value};

const KEY_EMAIL: &str = "waf-admin@example.com";
const KEY: &str = "waf-global-key";
/// `waf:read` + `waf:edit` on the test account.
const TOKEN: &str = "waf-edit-token";
const ENTRYPOINT: &str = "rulesets/phases/http_request_firewall_managed/entrypoint";

/// The id of test zone `n`.
fn zone_id(n: u32) -> String {
    format!("{n:032x}")
}

/// The host name of test zone `n`.
fn zone_name(n: u32) -> String {
    format!("zone{n}.example")
}

/// escgate with its admin API, zones `(n, plan)`, and a state file that outlives the process.
struct Server {
    escgate: Option<Escgate>,
    toml: String,
    state_dir: PathBuf,
}

impl Server {
    fn start(zones: &[(u32, &str)]) -> Server {
        let state_dir = common::temp_dir("waf-state");
        let credentials = format!(
            r#"[[api_keys]]
email = "{KEY_EMAIL}"
key_sha256 = "{}"
accounts = ["*"]

[[api_tokens]]
id = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
token_sha256 = "{}"
permissions = ["waf:read", "waf:edit"]
accounts = ["{ACCOUNT_ID}"]
"#,
            hash_secret(KEY),
            hash_secret(TOKEN)
        );
        let origin = "127.0.0.1:9".parse().expect("address");
        let zones: String = zones
            .iter()
            .map(|&(n, plan)| {
                Escgate::zone(
                    &zone_id(n),
                    &zone_name(n),
                    origin,
                    &format!("plan = \"{plan}\""),
                )
            })
            .collect();
        let toml = Escgate::config_with_admin(&format!("{credentials}\n{zones}")).replace(
            "@STATE@",
            &state_dir.join("state.json").display().to_string(),
        );
        let escgate = Some(Escgate::start(&toml));
        Server {
            escgate,
            toml,
            state_dir,
        }
    }

    /// Stops the process and starts a new one on the same config and state file.
    fn restart(&mut self) {
        drop(self.escgate.take());
        self.escgate = Some(Escgate::start(&self.toml));
    }

    fn url(&self, zone: u32, target: &str) -> String {
        let admin = self.escgate.as_ref().expect("running").admin_addr;
        format!("http://{admin}/client/v4/zones/{}/{target}", zone_id(zone))
    }

    fn call_with(
        &self,
        auth: Auth<'_>,
        zone: u32,
        method: &str,
        target: &str,
        body: Option<&Value>,
    ) -> Answer {
        let text = body.map(Value::to_string);
        call(
            method,
            &self.url(zone, target),
            auth,
            text.as_deref().map(|t| ("application/json", t.as_bytes())),
        )
    }

    /// One call with the API token.
    fn call(&self, zone: u32, method: &str, target: &str, body: Option<Value>) -> Answer {
        self.call_with(Auth::Token(TOKEN), zone, method, target, body.as_ref())
    }

    /// One call that must succeed; its envelope.
    fn ok(&self, zone: u32, method: &str, target: &str, body: Option<Value>) -> Value {
        let answer = self.call(zone, method, target, body);
        assert_eq!(
            answer.status, 200,
            "{method} {target} on zone {zone}: {}",
            answer.json
        );
        assert_eq!(answer.json["success"], true);
        answer.json
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.escgate.take());
        let _ = std::fs::remove_dir_all(&self.state_dir);
    }
}

/// An object id from a create answer (`result.id`, or `result[index].id` for arrays).
fn created_id(envelope: &Value) -> String {
    let result = &envelope["result"];
    let item = if result.is_array() {
        &result[0]
    } else {
        result
    };
    item["id"].as_str().expect("created id").to_string()
}

fn codes(answer: &Answer) -> (u16, Vec<u64>) {
    (answer.status, answer.codes())
}

fn vendor_id() -> String {
    catalog().vendor_package().id.clone()
}

fn owasp_id() -> String {
    catalog().owasp_package().id.clone()
}

fn bypass_waf(expression: &str) -> Value {
    json!({"filter": {"expression": expression}, "action": "bypass", "products": ["waf"]})
}

fn page_rule(pattern: &str, action: Value, priority: i64) -> Value {
    json!({"targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
           "actions": [action], "priority": priority})
}

/// A generated (draft) rule: empty id, version and ref.
fn draft(
    action: &str,
    parameters: Value,
    expression: &str,
    description: &str,
    enabled: bool,
) -> Value {
    json!({"id": "", "version": "", "ref": "", "action": action, "action_parameters": parameters,
           "expression": expression, "description": description, "enabled": enabled})
}

fn skip(expression: &str, description: &str, enabled: bool) -> Value {
    draft(
        "skip",
        json!({"ruleset": "current"}),
        expression,
        description,
        enabled,
    )
}

const ZONE_SCOPE: &str = "on my zone-level phase entry point ruleset";

/// The Managed Ruleset execute rule; `overrides` are its rule overrides (none: no `overrides`).
fn managed(overrides: &[Value], expression: &str, scope: &str, enabled: bool) -> Value {
    let parameters = if overrides.is_empty() {
        json!({"id": MANAGED_RULESET_ID})
    } else {
        json!({"id": MANAGED_RULESET_ID, "overrides": {"rules": overrides}})
    };
    draft(
        "execute",
        parameters,
        expression,
        &format!("Execute Cloudflare Managed Ruleset {scope}"),
        enabled,
    )
}

/// The OWASP execute rule: paranoia levels above `level` disabled, the anomaly rule's action and
/// threshold.
fn owasp(
    level: u8,
    action: &str,
    threshold: u64,
    expression: &str,
    scope: &str,
    enabled: bool,
) -> Value {
    let categories: Vec<Value> = (level + 1..=4)
        .map(|l| json!({"category": format!("paranoia-level-{l}"), "enabled": false}))
        .collect();
    draft(
        "execute",
        json!({"id": OWASP_RULESET_ID, "overrides": {
            "categories": categories,
            "rules": [{"id": OWASP_ANOMALY_RULE_ID, "action": action, "score_threshold": threshold}]}}),
        expression,
        &format!("Execute Cloudflare OWASP Core Ruleset {scope}"),
        enabled,
    )
}

/// The zone-wide pair of execute rules with no vendor overrides.
fn zone_pair(
    level: u8,
    action: &str,
    threshold: u64,
    managed_on: bool,
    owasp_on: bool,
) -> Vec<Value> {
    vec![
        managed(&[], "true", ZONE_SCOPE, managed_on),
        owasp(level, action, threshold, "true", ZONE_SCOPE, owasp_on),
    ]
}

fn config_of(server: &Server, zone: u32) -> Value {
    server.ok(zone, "GET", "waf_migration/config?phase_two=1", None)
}

fn assert_rules(config: &Value, expected: &[Value], row: &str) {
    let rules = config["result"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), expected.len(), "{row}: {config}");
    for (index, (rule, expected)) in rules.iter().zip(expected).enumerate() {
        assert_eq!(rule, expected, "{row}: rule {index}");
    }
    assert_eq!(config["result"]["phase"], "http_request_firewall_managed");
    assert_eq!(config["result"]["kind"], "zone");
}

#[test]
fn every_mapping_row_one_zone_each_and_after_a_restart() {
    let zones: Vec<(u32, &str)> = (1..=12)
        .map(|n| (n, if n == 10 { "business" } else { "pro" }))
        .collect();
    let mut server = Server::start(&zones);
    let owasp_package = format!("firewall/waf/packages/{}", owasp_id());
    for zone in 1..=12 {
        if zone != 8 && zone != 11 {
            server.ok(zone, "PATCH", "settings/waf", Some(json!({"value": "on"})));
        }
    }
    // Sensitivity rows: High → PL2/40, Medium → PL1/25, Low → PL1/40, Default (zone 4) → PL2/40.
    for (zone, sensitivity) in [(1, "high"), (2, "medium"), (3, "low")] {
        server.ok(
            zone,
            "PATCH",
            &owasp_package,
            Some(json!({"sensitivity": sensitivity})),
        );
    }
    assert_rules(
        &config_of(&server, 1),
        &zone_pair(2, "challenge", 40, true, true),
        "high",
    );
    assert_rules(
        &config_of(&server, 2),
        &zone_pair(1, "challenge", 25, true, true),
        "medium",
    );
    assert_rules(
        &config_of(&server, 3),
        &zone_pair(1, "challenge", 40, true, true),
        "low",
    );
    assert_rules(
        &config_of(&server, 4),
        &zone_pair(2, "challenge", 40, true, true),
        "default",
    );

    // Action mode: simulate → log, block → block.
    server.ok(
        5,
        "PATCH",
        &owasp_package,
        Some(json!({"action_mode": "simulate"})),
    );
    server.ok(
        6,
        "PATCH",
        &owasp_package,
        Some(json!({"action_mode": "block", "sensitivity": "medium"})),
    );
    assert_rules(
        &config_of(&server, 5),
        &zone_pair(2, "log", 40, true, true),
        "simulate",
    );
    assert_rules(
        &config_of(&server, 6),
        &zone_pair(1, "block", 25, true, true),
        "block",
    );

    // OWASP off → its execute rule disabled; zone WAF off → both disabled.
    server.ok(
        7,
        "PATCH",
        &owasp_package,
        Some(json!({"sensitivity": "off"})),
    );
    assert_rules(
        &config_of(&server, 7),
        &zone_pair(2, "challenge", 40, true, false),
        "owasp off",
    );
    assert_rules(
        &config_of(&server, 8),
        &zone_pair(2, "challenge", 40, false, false),
        "zone off",
    );

    // Vendor group off and rule modes → Managed Ruleset rule overrides.
    let vendor = catalog().vendor_package();
    let group_off = &vendor.groups[2];
    let disabled = &vendor.groups[0].rules[3];
    let simulated = &vendor.groups[0].rules[0];
    let blocked = &vendor.groups[1].rules[0];
    server.ok(
        9,
        "PATCH",
        &format!(
            "firewall/waf/packages/{}/groups/{}",
            vendor.id, group_off.id
        ),
        Some(json!({"mode": "off"})),
    );
    for (rule, mode) in [
        (disabled, "disable"),
        (simulated, "simulate"),
        (blocked, "block"),
    ] {
        server.ok(
            9,
            "PATCH",
            &format!("firewall/waf/packages/{}/rules/{}", vendor.id, rule.id),
            Some(json!({"mode": mode})),
        );
    }
    let mut vendor_overrides = vec![
        json!({"id": simulated.new_rule_id, "action": "log"}),
        json!({"id": disabled.new_rule_id, "enabled": false}),
        json!({"id": blocked.new_rule_id, "action": "block"}),
    ];
    vendor_overrides.extend(
        group_off
            .rules
            .iter()
            .map(|r| json!({"id": r.new_rule_id, "enabled": false})),
    );
    assert_rules(
        &config_of(&server, 9),
        &[
            managed(&vendor_overrides, "true", ZONE_SCOPE, true),
            owasp(2, "challenge", 40, "true", ZONE_SCOPE, true),
        ],
        "vendor overrides",
    );

    // Firewall rules bypassing the WAF and page rules (Disable Security, WAF Off) → skip rules
    // first; a paused rule or disabled page rule → a disabled skip rule; other rules → nothing.
    let office = "ip.src in {192.0.2.0/24 198.51.100.7}";
    let paused = r#"http.request.uri.path eq "/healthz""#;
    let first = server.ok(10, "POST", "firewall/rules", Some(json!([
        {"filter": {"expression": office}, "action": "bypass", "products": ["waf"], "description": "office", "priority": 1},
        {"filter": {"expression": paused}, "action": "bypass", "products": ["waf"], "paused": true, "priority": 2},
        {"filter": {"expression": "http.request.method eq \"TRACE\""}, "action": "block"},
        {"filter": {"expression": "true"}, "action": "bypass", "products": ["uaBlock"]}
    ])));
    let office_id = first["result"][0]["id"].as_str().expect("id").to_string();
    let paused_id = first["result"][1]["id"].as_str().expect("id").to_string();
    let admin = created_id(&server.ok(
        10,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone10.example/admin/*",
            json!({"id": "disable_security"}),
            3,
        )),
    ));
    let api = created_id(&server.ok(
        10,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone10.example/api/*",
            json!({"id": "waf", "value": "off"}),
            2,
        )),
    ));
    let mut old = page_rule("zone10.example/old/*", json!({"id": "disable_security"}), 1);
    old["status"] = json!("disabled");
    let old = created_id(&server.ok(10, "POST", "pagerules", Some(old)));
    server.ok(
        10,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone10.example/shop/*",
            json!({"id": "waf", "value": "on"}),
            4,
        )),
    );
    let mut expected = vec![
        skip(
            office,
            &format!("Migrated from firewall rule {office_id} (bypass WAF): office"),
            true,
        ),
        skip(
            paused,
            &format!("Migrated from firewall rule {paused_id} (bypass WAF)"),
            false,
        ),
        skip(
            r#"(http.host eq "zone10.example" and http.request.uri.path matches "^/admin/.*$")"#,
            &format!("Migrated from page rule {admin} (Disable Security)"),
            true,
        ),
        skip(
            r#"(http.host eq "zone10.example" and http.request.uri.path matches "^/api/.*$")"#,
            &format!("Migrated from page rule {api} (Web Application Firewall: Off)"),
            true,
        ),
        skip(
            r#"(http.host eq "zone10.example" and http.request.uri.path matches "^/old/.*$")"#,
            &format!("Migrated from page rule {old} (Disable Security)"),
            false,
        ),
    ];
    expected.extend(zone_pair(2, "challenge", 40, true, true));
    assert_rules(
        &config_of(&server, 10),
        &expected,
        "firewall and page rules",
    );

    // Page rule WAF On in a zone with the WAF off → execute rules scoped to its URL pattern.
    let shop = created_id(&server.ok(
        11,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone11.example/shop/*",
            json!({"id": "waf", "value": "on"}),
            1,
        )),
    ));
    let scoped =
        r#"(http.host eq "zone11.example" and http.request.uri.path matches "^/shop/.*$")"#;
    let scope = format!("where page rule {shop} turned the WAF on");
    let mut expected = vec![
        managed(&[], scoped, &scope, true),
        owasp(2, "challenge", 40, scoped, &scope, true),
    ];
    expected.extend(zone_pair(2, "challenge", 40, false, false));
    assert_rules(&config_of(&server, 11), &expected, "page rule WAF on");

    // OWASP group and rule overrides are not migrated, and the answer names them.
    let owasp_group = &catalog().owasp_package().groups[1];
    let owasp_rule = &catalog().owasp_package().groups[0].rules[0];
    server.ok(
        12,
        "PATCH",
        &format!("{owasp_package}/groups/{}", owasp_group.id),
        Some(json!({"mode": "off"})),
    );
    server.ok(
        12,
        "PATCH",
        &format!("{owasp_package}/rules/{}", owasp_rule.id),
        Some(json!({"mode": "off"})),
    );
    let config = config_of(&server, 12);
    assert_rules(
        &config,
        &zone_pair(2, "challenge", 40, true, true),
        "owasp overrides",
    );
    assert_eq!(config["messages"][0]["code"], 1440);
    let message = config["messages"][0]["message"].as_str().expect("message");
    assert!(
        message.contains(&owasp_group.id) && message.contains(&owasp_rule.id),
        "{message}"
    );
    assert_eq!(config_of(&server, 1)["messages"][0]["code"], 1440);

    let before: Vec<Value> = (1..=12).map(|zone| config_of(&server, zone)).collect();
    server.restart();
    for (zone, config) in (1..=12).zip(before) {
        assert_eq!(
            config_of(&server, zone),
            config,
            "zone {zone} after a restart"
        );
    }
}

#[test]
fn phase_one_versus_phase_two_eligibility() {
    let server = Server::start(&[(1, "pro"), (2, "pro"), (3, "pro"), (4, "pro")]);
    let compatible = |zone: u32, query: &str| {
        let check = server.ok(zone, "GET", &format!("waf_migration/check{query}"), None);
        let codes: Vec<u64> = check["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["code"].as_u64().expect("code"))
            .collect();
        (
            check["result"]["compatible"].as_bool().expect("compatible"),
            codes,
        )
    };
    // WAF off: eligible in both phases.
    assert_eq!(
        server.ok(1, "GET", "waf_migration/check", None)["result"],
        json!({"compatible": true, "migration_state": "start"})
    );
    // WAF on with the OWASP package on: phase 2 only.
    server.ok(2, "PATCH", "settings/waf", Some(json!({"value": "on"})));
    assert_eq!(compatible(2, ""), (false, vec![1428]));
    assert_eq!(compatible(2, "?phase_two=1"), (true, vec![]));
    // Only the vendor package on: phase 1 too.
    server.ok(
        2,
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "off"})),
    );
    assert_eq!(compatible(2, ""), (true, vec![]));
    // A firewall rule bypassing the WAF, or a page rule toggling it: phase 2 only.
    let bypass = server.ok(
        3,
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf(r#"http.request.uri.path eq "/status""#)])),
    );
    let check = server.ok(3, "GET", "waf_migration/check", None);
    assert_eq!(check["messages"][0]["code"], 1429);
    assert!(check["messages"][0]["message"]
        .as_str()
        .expect("message")
        .contains(&created_id(&bypass)));
    assert_eq!(compatible(3, "?phase_two=1"), (true, vec![]));
    server.ok(
        4,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone4.example/*",
            json!({"id": "waf", "value": "on"}),
            1,
        )),
    );
    assert_eq!(compatible(4, ""), (false, vec![1429]));
    assert_eq!(compatible(4, "?phase_two=1"), (true, vec![]));

    // The PUT applies the same rules: phase 1 refuses, phase 2 migrates.
    let refused = server.call(
        3,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending"),
        Some(json!({"rules": []})),
    );
    assert_eq!(codes(&refused), (409, vec![1420, 1429]));
    let config = config_of(&server, 3);
    server.ok(
        3,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(
        server.ok(3, "GET", "waf_migration/status", None)["result"]["migration_state"],
        "complete"
    );
}

#[test]
fn uri_override_blocks_until_deleted_then_migration_succeeds() {
    let server = Server::start(&[(1, "business")]);
    let group = &catalog().vendor_package().groups[0];
    let created = server.ok(
        1,
        "POST",
        "firewall/waf/overrides",
        Some(json!({
        "urls": ["zone1.example/legacy/*"], "description": "old app", "priority": 1,
        "groups": {group.id.clone(): "off"}, "rewrite_action": {"block": "challenge"}})),
    );
    let id = created_id(&created);
    assert_eq!(created["result"]["urls"], json!(["zone1.example/legacy/*"]));
    server.ok(
        1,
        "PUT",
        &format!("firewall/waf/overrides/{id}"),
        Some(json!({"urls": ["zone1.example/legacy2/*"]})),
    );
    assert_eq!(
        server.ok(1, "GET", &format!("firewall/waf/overrides/{id}"), None)["result"]["urls"],
        json!(["zone1.example/legacy2/*"])
    );
    for target in ["waf_migration/check", "waf_migration/check?phase_two=1"] {
        let check = server.ok(1, "GET", target, None);
        assert_eq!(check["result"]["compatible"], false);
        assert_eq!(check["messages"][0]["code"], 1427);
        let message = check["messages"][0]["message"].as_str().expect("message");
        assert!(
            message.contains(&id) && message.contains("DELETE"),
            "{message}"
        );
    }
    let refused = server.call(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=1&phase_two=1"),
        Some(json!({"rules": []})),
    );
    assert_eq!(codes(&refused), (409, vec![1420, 1427]));

    let deleted = server.ok(1, "DELETE", &format!("firewall/waf/overrides/{id}"), None);
    assert_eq!(deleted["result"], json!({"id": id}));
    assert_eq!(
        server
            .call(1, "GET", &format!("firewall/waf/overrides/{id}"), None)
            .status,
        404
    );
    assert_eq!(
        server.ok(1, "GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true
    );
    let config = config_of(&server, 1);
    let done = server.ok(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(done["result"]["version"], "1");
    assert_eq!(
        server.ok(1, "GET", "waf_migration/status", None)["result"]["migration_state"],
        "complete"
    );
}

#[test]
fn two_hundred_rules_and_four_kilobyte_expressions() {
    let server = Server::start(&[(1, "enterprise"), (2, "enterprise")]);
    // Realistic bypass rules: one office network each.
    let office = |n: usize| {
        bypass_waf(&format!(
            "ip.src in {{10.{}.{}.0/24}} and http.request.uri.path ne \"/login\"",
            n / 256,
            n % 256
        ))
    };
    server.ok(
        1,
        "POST",
        "firewall/rules",
        Some(Value::Array((0..200).map(office).collect())),
    );
    assert_eq!(
        server.ok(1, "GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true,
        "200 migrate"
    );
    let extra = server.ok(1, "POST", "firewall/rules", Some(json!([office(200)])));
    let check = server.ok(1, "GET", "waf_migration/check?phase_two=1", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1424);
    let message = check["messages"][0]["message"].as_str().expect("message");
    assert!(
        message.contains("201") && message.contains("remove 1"),
        "{message}"
    );
    let refused = server.call(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=2&phase_two=1"),
        Some(json!({"rules": []})),
    );
    assert_eq!(codes(&refused), (409, vec![1420, 1424]));
    server.ok(
        1,
        "DELETE",
        &format!("firewall/rules/{}", created_id(&extra)),
        None,
    );
    assert_eq!(
        server.ok(1, "GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true
    );

    // An allow-list of addresses just over 4 KB.
    let addresses: Vec<String> = (0..400)
        .map(|n| format!("203.0.{}.{}", n / 200, n % 200 + 1))
        .collect();
    let long = format!("ip.src in {{{}}}", addresses.join(" "));
    assert!(long.len() > 4096, "{}", long.len());
    let fits = format!("ip.src in {{{}}}", addresses[..200].join(" "));
    assert!(fits.len() <= 4096, "{}", fits.len());
    server.ok(
        2,
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf(&fits)])),
    );
    assert_eq!(
        server.ok(2, "GET", "waf_migration/check?phase_two=1", None)["result"]["compatible"],
        true
    );
    let created = server.ok(
        2,
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf(&long)])),
    );
    let check = server.ok(2, "GET", "waf_migration/check?phase_two=1", None);
    assert_eq!(check["result"]["compatible"], false);
    assert_eq!(check["messages"][0]["code"], 1425);
    let message = check["messages"][0]["message"].as_str().expect("message");
    assert!(
        message.contains(&created_id(&created)) && message.contains(&long.len().to_string()),
        "{message}"
    );
    let refused = server.call(
        2,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
        Some(json!({"rules": []})),
    );
    assert_eq!(codes(&refused), (409, vec![1420, 1425]));
}

#[test]
fn validation_mode_is_refused_below_enterprise() {
    let server = Server::start(&[(1, "free"), (2, "pro"), (3, "business")]);
    for zone in 1..=3 {
        let config = config_of(&server, zone);
        let refused = server.call(
            zone,
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
            Some(config["result"].clone()),
        );
        assert_eq!(codes(&refused), (403, vec![1421]), "zone {zone}");
        assert_eq!(
            server.ok(zone, "GET", "waf_migration/status", None)["result"]["migration_state"],
            "start"
        );
        assert_eq!(
            server.call(zone, "GET", ENTRYPOINT, None).status,
            404,
            "refused calls change nothing"
        );
        // Their path: straight to pending.
        server.ok(
            zone,
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
            Some(config["result"].clone()),
        );
        let status = server.ok(zone, "GET", "waf_migration/status", None);
        assert_eq!(status["result"]["migration_state"], "complete");
        assert_eq!(status["result"]["old_waf_status"], "disabled");
        assert_eq!(status["result"]["new_waf_status"], "enabled");
    }
}

/// Every previous-WAF endpoint of a zone (method, target, body).
fn previous_waf_endpoints() -> Vec<(&'static str, String, Option<Value>)> {
    let vendor = catalog().vendor_package();
    let package = format!("firewall/waf/packages/{}", vendor.id);
    let group = format!("{package}/groups/{}", vendor.groups[0].id);
    let rule = format!("{package}/rules/{}", vendor.groups[0].rules[0].id);
    let some_id = "0123456789abcdef0123456789abcdef";
    vec![
        ("GET", "settings/waf".into(), None),
        ("PATCH", "settings/waf".into(), Some(json!({"value": "on"}))),
        ("GET", "firewall/waf/packages".into(), None),
        ("GET", package.clone(), None),
        (
            "PATCH",
            format!("firewall/waf/packages/{}", owasp_id()),
            Some(json!({"sensitivity": "low"})),
        ),
        ("GET", format!("{package}/groups"), None),
        ("GET", group.clone(), None),
        ("PATCH", group, Some(json!({"mode": "off"}))),
        ("GET", format!("{package}/rules"), None),
        ("GET", rule.clone(), None),
        ("PATCH", rule, Some(json!({"mode": "disable"}))),
        ("GET", "firewall/waf/overrides".into(), None),
        (
            "POST",
            "firewall/waf/overrides".into(),
            Some(json!({"urls": ["zone1.example/*"]})),
        ),
        ("GET", format!("firewall/waf/overrides/{some_id}"), None),
        (
            "PUT",
            format!("firewall/waf/overrides/{some_id}"),
            Some(json!({"urls": ["zone1.example/*"]})),
        ),
        ("DELETE", format!("firewall/waf/overrides/{some_id}"), None),
        ("GET", "firewall/rules".into(), None),
        (
            "POST",
            "firewall/rules".into(),
            Some(json!([bypass_waf("true")])),
        ),
        ("GET", format!("firewall/rules/{some_id}"), None),
        ("DELETE", format!("firewall/rules/{some_id}"), None),
        ("GET", "pagerules".into(), None),
        (
            "POST",
            "pagerules".into(),
            Some(page_rule(
                "zone1.example/*",
                json!({"id": "disable_security"}),
                1,
            )),
        ),
        ("GET", format!("pagerules/{some_id}"), None),
        ("DELETE", format!("pagerules/{some_id}"), None),
    ]
}

fn assert_gone(server: &Server, zone: u32) {
    for (method, target, body) in previous_waf_endpoints() {
        let answer = server.call(zone, method, &target, body);
        assert_eq!(
            codes(&answer),
            (410, vec![1410]),
            "{method} {target}: {}",
            answer.json
        );
        assert_eq!(answer.json["success"], false);
    }
}

#[test]
fn enterprise_start_validation_complete_refuses_the_rest_and_survives_restarts() {
    let mut server = Server::start(&[(1, "enterprise"), (2, "enterprise")]);
    let state =
        |server: &Server| server.ok(1, "GET", "waf_migration/status", None)["result"].clone();
    for (method, target, body) in previous_waf_endpoints() {
        let answer = server.call(2, method, &target, body);
        assert_ne!(answer.status, 410, "{method} {target} before migration");
    }
    server.ok(1, "PATCH", "settings/waf", Some(json!({"value": "on"})));
    let bypass = server.ok(
        1,
        "POST",
        "firewall/rules",
        Some(json!([bypass_waf("ip.src in {192.0.2.0/24}")])),
    );
    let start = state(&server);
    assert_eq!(start["migration_state"], "start");
    assert_eq!(start["old_waf_status"], "enabled");
    assert_eq!(start["new_waf_status"], "disabled");
    assert_eq!(start["source"], "zone");
    assert!(start["created"].is_string());

    // Refused before anything changes: bad flag, bad body, pending-only flags on incompatible zones.
    for flag in ["finish", "3", "", "VALIDATION"] {
        let refused = server.call(
            1,
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration={flag}&phase_two=1"),
            Some(json!({"rules": []})),
        );
        assert_eq!(codes(&refused), (400, vec![1423]), "flag {flag:?}");
    }
    let config = config_of(&server, 1);
    let mut broken = config["result"].clone();
    broken["rules"][1]["action"] = json!("explode");
    let refused = server.call(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
        Some(broken),
    );
    assert_eq!(refused.status, 400, "{}", refused.json);
    assert_eq!(
        refused.json["errors"][0]["source"]["pointer"],
        "/rules/1/action"
    );
    assert_eq!(state(&server), start);

    // start → validation: both WAFs on, the new entry point stored with ids and versions.
    let validated = server.ok(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(validated["result"]["version"], "1");
    let rules = validated["result"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[0]["expression"], "ip.src in {192.0.2.0/24}");
    let first_rule_id = rules[0]["id"].as_str().expect("id").to_string();
    assert_eq!(first_rule_id.len(), 32);
    assert!(rules
        .iter()
        .all(|r| r["version"] == "1" && r["last_updated"].is_string()));
    let validation = state(&server);
    assert_eq!(validation["migration_state"], "validation");
    assert_eq!(validation["old_waf_status"], "enabled");
    assert_eq!(validation["new_waf_status"], "enabled");

    server.restart();
    assert_eq!(state(&server), validation, "validation survives a restart");
    assert_eq!(
        server.ok(1, "GET", ENTRYPOINT, None)["result"],
        validated["result"]
    );
    // validation → validation is refused; the previous WAF still answers.
    let again = server.call(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=validation&phase_two=1"),
        Some(config["result"].clone()),
    );
    assert_eq!(codes(&again), (409, vec![1422]));
    assert_eq!(
        server.ok(1, "GET", "settings/waf", None)["result"]["value"],
        "on"
    );

    // Adjust while validating (PUT without flag, keeping ids): only the changed rule's version moves.
    let mut adjusted = validated["result"].clone();
    adjusted["rules"][2]["enabled"] = json!(false);
    let adjusted = server.ok(1, "PUT", ENTRYPOINT, Some(adjusted));
    assert_eq!(adjusted["result"]["version"], "2");
    assert_eq!(adjusted["result"]["rules"][0]["id"], first_rule_id.as_str());
    assert_eq!(adjusted["result"]["rules"][0]["version"], "1");
    assert_eq!(adjusted["result"]["rules"][2]["version"], "2");
    assert_eq!(state(&server)["migration_state"], "validation");

    // validation → complete, with the API key this time.
    let done = server.call_with(
        Auth::Key(KEY_EMAIL, KEY),
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=1"),
        Some(&adjusted["result"]),
    );
    assert_eq!(done.status, 200, "{}", done.json);
    assert_eq!(done.json["result"]["version"], "3");
    let complete = state(&server);
    assert_eq!(complete["migration_state"], "complete");
    assert_eq!(complete["old_waf_status"], "disabled");
    assert_eq!(complete["new_waf_status"], "enabled");
    assert_gone(&server, 1);

    server.restart();
    assert_eq!(state(&server), complete, "complete survives a restart");
    let entrypoint = server.ok(1, "GET", ENTRYPOINT, None);
    assert_eq!(entrypoint["result"], done.json["result"]);
    assert_gone(&server, 1);
    // Irreversible: every flag, and the config, are refused.
    for flag in ["pending", "1", "validation", "2"] {
        let refused = server.call(
            1,
            "PUT",
            &format!("{ENTRYPOINT}?waf_migration={flag}"),
            Some(entrypoint["result"].clone()),
        );
        assert_eq!(codes(&refused), (409, vec![1430]), "{flag}");
    }
    assert_eq!(
        codes(&server.call(1, "GET", "waf_migration/config", None)),
        (409, vec![1430])
    );
    assert_eq!(
        server.ok(1, "GET", "waf_migration/check", None)["result"],
        json!({"compatible": false, "migration_state": "complete"})
    );
    assert!(!created_id(&bypass).is_empty());

    // The rulesets API serves the new WAF: the entry point and the managed rulesets.
    let list = server.ok(1, "GET", "rulesets", None);
    let ids: Vec<&str> = list["result"]
        .as_array()
        .expect("rulesets")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(
        ids.contains(&MANAGED_RULESET_ID) && ids.contains(&OWASP_RULESET_ID),
        "{ids:?}"
    );
    let entry_id = entrypoint["result"]["id"].as_str().expect("entry point id");
    assert!(ids.contains(&entry_id));
    assert_eq!(
        server.ok(1, "GET", &format!("rulesets/{entry_id}"), None)["result"]["version"],
        "3"
    );
    let core = server.ok(1, "GET", &format!("rulesets/{OWASP_RULESET_ID}"), None);
    assert!(core["result"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .any(|r| r["id"] == OWASP_ANOMALY_RULE_ID));
    let replaced = server.ok(1, "PUT", ENTRYPOINT, Some(json!({"rules": [
        {"action": "execute", "expression": "not http.request.uri.path in {\"/healthz\" \"/metrics\"}",
         "action_parameters": {"id": MANAGED_RULESET_ID}}]})));
    assert_eq!(replaced["result"]["version"], "4");
    server.restart();
    assert_eq!(
        server.ok(1, "GET", ENTRYPOINT, None)["result"],
        replaced["result"]
    );
}

/// A request for evaluating generated expressions.
fn view<'a>(
    headers: &'a http::HeaderMap,
    tls: bool,
    host: &'a str,
    path: &'a str,
    query: Option<&'a str>,
) -> RequestView<'a> {
    RequestView {
        method: "GET",
        host,
        path,
        query,
        tls,
        version: "HTTP/1.1",
        src_ip: Some(IpAddr::from([192, 0, 2, 1])),
        headers,
        waf: Default::default(),
    }
}

#[test]
fn page_rule_expressions_compile_and_match_what_the_page_rule_matched() {
    let server = Server::start(&[(1, "business")]);
    server.ok(1, "PATCH", "settings/waf", Some(json!({"value": "on"})));
    let headers = http::HeaderMap::new();
    // (pattern, requests it matches, requests it does not), requests as (tls, host, path, query).
    type Request = (bool, &'static str, &'static str, Option<&'static str>);
    let cases: [(&str, &[Request], &[Request]); 4] = [
        (
            "zone1.example/admin/*",
            &[
                (false, "zone1.example", "/admin/", None),
                (true, "zone1.example", "/admin/users", Some("page=2")),
            ],
            &[
                (false, "zone1.example", "/public", None),
                (false, "www.zone1.example", "/admin/x", None),
            ],
        ),
        (
            "https://*.zone1.example/a.b/*?x=*",
            &[(true, "www.zone1.example", "/a.b/c", Some("x=1"))],
            &[
                (false, "www.zone1.example", "/a.b/c", Some("x=1")),
                (true, "www.zone1.example", "/aXb/c", Some("x=1")),
                (true, "www.zone1.example", "/a.b/c", Some("y=1")),
            ],
        ),
        (
            "zone1.example/exact(1)+[x]",
            &[(false, "zone1.example", "/exact(1)+[x]", None)],
            &[
                (false, "zone1.example", "/exact1+x", None),
                (false, "zone1.example", "/exact(1)+[x]/more", None),
            ],
        ),
        (
            "http://zone1.example/\"quoted\"\\*",
            &[(false, "zone1.example", "/\"quoted\"\\anything", None)],
            &[(true, "zone1.example", "/\"quoted\"\\anything", None)],
        ),
    ];
    let mut ids = Vec::new();
    for (index, (pattern, _, _)) in cases.iter().enumerate() {
        let action = if index % 2 == 0 {
            json!({"id": "disable_security"})
        } else {
            json!({"id": "waf", "value": "off"})
        };
        let priority = (cases.len() - index) as i64;
        ids.push(created_id(&server.ok(
            1,
            "POST",
            "pagerules",
            Some(page_rule(pattern, action, priority)),
        )));
    }
    let config = config_of(&server, 1);
    let rules = config["result"]["rules"].as_array().expect("rules");
    for (index, (pattern, matching, other)) in cases.iter().enumerate() {
        let rule = &rules[index];
        assert!(rule["description"]
            .as_str()
            .expect("description")
            .contains(&ids[index]));
        let expression = rule["expression"].as_str().expect("expression");
        let filter = Filter::compile(expression, &Limits::default())
            .unwrap_or_else(|e| panic!("{pattern} → {expression}: {e}"));
        for &(tls, host, path, query) in *matching {
            assert!(
                filter.matches(&view(&headers, tls, host, path, query)),
                "{pattern} → {expression} on {host}{path}"
            );
        }
        for &(tls, host, path, query) in *other {
            assert!(
                !filter.matches(&view(&headers, tls, host, path, query)),
                "{pattern} → {expression} on {host}{path}"
            );
        }
    }
    // The server compiles them too when the config becomes the entry point.
    let done = server.ok(
        1,
        "PUT",
        &format!("{ENTRYPOINT}?waf_migration=pending&phase_two=1"),
        Some(config["result"].clone()),
    );
    for (stored, generated) in done["result"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .zip(rules)
    {
        assert_eq!(stored["expression"], generated["expression"]);
    }
}

fn pointers(answer: &Answer) -> Vec<String> {
    answer.json["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            e["source"]["pointer"]
                .as_str()
                .unwrap_or("<none>")
                .to_string()
        })
        .collect()
}

#[test]
fn bad_bodies_are_answered_with_the_pointer_of_the_bad_value() {
    let server = Server::start(&[(1, "enterprise")]);
    let bad = server.call(1, "POST", "firewall/rules", Some(json!([
        {"filter": {"expression": "true"}, "action": "bypass"},
        {"filter": {"expression": "true"}, "action": "smite"},
        {"filter": {"expression": "http.request.uri.path eq"}, "action": "block"},
        {"filter": {"expression": "true"}, "action": "block", "products": ["waf"]},
        {"filter": {"expression": "lower(http.host) eq \"zone1.example\" and not ssl"}, "action": "block"}
    ])));
    assert_eq!(bad.status, 400);
    assert_eq!(
        pointers(&bad),
        [
            "/0/products",
            "/1/action",
            "/2/filter/expression",
            "/3/products"
        ]
    );
    assert_eq!(
        server.ok(1, "GET", "firewall/rules", None)["result"],
        json!([]),
        "nothing created"
    );

    let bad = server.call(
        1,
        "POST",
        "pagerules",
        Some(page_rule(
            "zone1.example/*",
            json!({"id": "always_use_https"}),
            1,
        )),
    );
    assert_eq!(
        (bad.status, pointers(&bad)),
        (400, vec!["/actions/0".to_string()])
    );
    assert!(bad.json["errors"][0]["message"]
        .as_str()
        .expect("message")
        .contains("always_use_https"));
    let bad = server.call(
        1,
        "POST",
        "firewall/waf/overrides",
        Some(json!({"urls": ["zone1.example/*"], "groups": {"nope": "off"}})),
    );
    assert_eq!(bad.status, 400, "{}", bad.json);
    let bad = server.call(
        1,
        "PATCH",
        &format!("firewall/waf/packages/{}", owasp_id()),
        Some(json!({"sensitivity": "extreme"})),
    );
    assert_eq!(
        (bad.status, pointers(&bad)),
        (400, vec!["/sensitivity".to_string()])
    );
    let bad = server.call(
        1,
        "PATCH",
        &format!("firewall/waf/packages/{}", vendor_id()),
        Some(json!({"sensitivity": "low"})),
    );
    assert_eq!(codes(&bad), (400, vec![1027]));

    // Entry point bodies: every problem reported, each at its value.
    let body = json!({"rules": [
        {"action": "execute", "expression": "true", "action_parameters": {"id": "ffffffffffffffffffffffffffffffff"}},
        {"action": "execute", "expression": "http.request.uri.path matches \"(\"", "action_parameters": {"id": MANAGED_RULESET_ID}},
        {"action": "execute", "expression": "true", "action_parameters": {"id": OWASP_RULESET_ID,
            "overrides": {"rules": [{"id": "00000000000000000000000000000000", "enabled": false}],
                          "categories": [{"category": "paranoia-level-9", "enabled": false}]}}},
        {"action": "explode", "expression": "true"},
        {"action": "skip", "expression": "true", "action_parameters": {"ruleset": "current"}, "enabled": "yes"}
    ]});
    let bad = server.call(1, "PUT", ENTRYPOINT, Some(body));
    assert_eq!(bad.status, 400, "{}", bad.json);
    let found = pointers(&bad);
    for expected in [
        "/rules/0/action_parameters/id",
        "/rules/1/expression",
        "/rules/2/action_parameters/overrides/rules/0/id",
        "/rules/2/action_parameters/overrides/categories/0/category",
        "/rules/3/action",
        "/rules/4/enabled",
    ] {
        assert!(
            found.iter().any(|p| p == expected),
            "{expected} in {found:?}: {}",
            bad.json
        );
    }
    for raw in ["", "{", "null", "[]", "{\"rules\": [null, 1]}"] {
        let answer = call(
            "PUT",
            &server.url(1, ENTRYPOINT),
            Auth::Token(TOKEN),
            Some(("application/json", raw.as_bytes())),
        );
        assert!(
            (400..500).contains(&answer.status),
            "{raw:?}: {}",
            answer.json
        );
        assert_eq!(answer.json["success"], false);
    }
    assert_eq!(
        server.call(1, "GET", ENTRYPOINT, None).status,
        404,
        "nothing stored"
    );
    assert_eq!(
        server.ok(1, "GET", "waf_migration/status", None)["result"]["migration_state"],
        "start"
    );
}
