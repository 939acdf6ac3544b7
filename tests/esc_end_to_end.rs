//! Disable ESC end to end: the real admin HTTP API changes the state, the real proxy in front of
//! the echo origin shows the effect on the very next request (customization present or not,
//! `escgate-esc` debug header, `disable_esc` cookie never forwarded), and the state and the
//! decision log survive through the real binary.

mod admin_support;
mod common;
mod esc_support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use admin_support::{call, post_json, Answer, Auth};
use common::{request, temp_dir, Escgate, Response, TestOrigin, ACCOUNT_ID, ZONE_ID};
use esc_support::EscgateProcess;

/// Second zone of [`ACCOUNT_ID`].
const ZONE_2: &str = "2222222222222222222222222222222a";
/// A zone of [`OTHER_ACCOUNT`].
const ZONE_OTHER: &str = "3333333333333333333333333333333b";
const OTHER_ACCOUNT: &str = "4444444444444444444444444444444c";
const EMAIL: &str = "ops@example.com";
const KEY: &str = "e2e-admin-key";
const ZONE_SECRET: &str = "zone-s3cr3t";
const ACCOUNT_SECRET: &str = "account-s3cr3t";

fn auth() -> Auth<'static> {
    Auth::Key(EMAIL, KEY)
}

/// Three zones (two on [`ACCOUNT_ID`], one on [`OTHER_ACCOUNT`]), each with the debug header and
/// one customization (`x-esc: 1` added to the request), plus a global admin key.
fn config(origin: SocketAddr) -> String {
    let customized = r#"debug_header = true
[[zones.esc]]
request_headers = { set = { "x-esc" = "1" } }
"#;
    let key_sha256 = escgate::admin::auth::hash_secret(KEY);
    let tables = format!(
        r#"[[accounts]]
id = "{OTHER_ACCOUNT}"
name = "Other account"

[[api_keys]]
email = "{EMAIL}"
key_sha256 = "{key_sha256}"
accounts = ["*"]

{zone_1}
{zone_2}
[[zones]]
id = "{ZONE_OTHER}"
name = "other.test"
account_id = "{OTHER_ACCOUNT}"
origin = "{origin}"
{customized}
"#,
        zone_1 = Escgate::zone(ZONE_ID, "one.example", origin, customized),
        zone_2 = Escgate::zone(ZONE_2, "two.example", origin, customized),
    );
    Escgate::config_with_server_keys("admin_listen = \"@ADMIN@\"", &tables)
}

fn esc_url(admin: SocketAddr, scope: &str, id: &str) -> String {
    format!("http://{admin}/client/v4/{scope}/{id}/disable_esc")
}

/// POSTs `body` to a `disable_esc` endpoint and insists on 200.
fn set(admin: SocketAddr, scope: &str, id: &str, body: &str) -> Answer {
    let answer = post_json(&esc_url(admin, scope, id), auth(), body);
    assert_eq!(
        answer.status, 200,
        "POST {scope}/{id} {body}: {:?}",
        answer.json
    );
    answer
}

/// DELETEs a `disable_esc` setting and insists on 200.
fn clear(admin: SocketAddr, scope: &str, id: &str) {
    let answer = call("DELETE", &esc_url(admin, scope, id), auth(), None);
    assert_eq!(answer.status, 200, "DELETE {scope}/{id}: {:?}", answer.json);
}

/// One proxied GET to `host` with one `Cookie` header per entry of `cookies`.
fn proxied(proxy: SocketAddr, host: &str, cookies: &[&str]) -> Response {
    let mut headers = vec![("host", host)];
    headers.extend(cookies.iter().map(|c| ("cookie", *c)));
    request(proxy, "GET", "/", &headers, b"")
}

/// `name=value` pairs of every `Cookie` header, in order.
fn cookie_pairs<'a>(headers: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Sends the request and checks everything visible about the decision: the debug header, the
/// customization at the origin, and that exactly the non-`disable_esc` cookies were forwarded.
fn expect(proxy: SocketAddr, host: &str, cookies: &[&str], reason: &str, context: &str) {
    let response = proxied(proxy, host, cookies);
    assert_eq!(response.status, 200, "{context}: {}", response.text());
    let expected_header = match reason {
        "applied" => "applied".to_owned(),
        other => format!("disabled; reason={other}"),
    };
    assert_eq!(
        response.header("escgate-esc"),
        Some(expected_header.as_str()),
        "{context}: {host} cookies {cookies:?}"
    );
    let echo = response.echo();
    let customized = echo.header("x-esc") == Some("1");
    assert_eq!(
        customized,
        reason == "applied",
        "{context}: customization at the origin for {host} cookies {cookies:?}"
    );
    let sent = cookie_pairs(cookies.iter().copied());
    let kept: Vec<String> = sent
        .into_iter()
        .filter(|p| p.split('=').next().map(str::trim) != Some("disable_esc"))
        .collect();
    let forwarded = cookie_pairs(echo.headers_named("cookie"));
    assert_eq!(
        forwarded, kept,
        "{context}: cookies at the origin for {host} cookies {cookies:?}"
    );
}

/// The spec's decision, first match wins.
fn oracle(
    zone_always: bool,
    account_always: bool,
    zone_secret_matches: bool,
    account_secret_matches: bool,
) -> &'static str {
    if zone_always {
        "zone_always"
    } else if account_always {
        "account_always"
    } else if zone_secret_matches {
        "zone_secret"
    } else if account_secret_matches {
        "account_secret"
    } else {
        "applied"
    }
}

fn body(always: bool, secret: Option<&str>) -> String {
    match secret {
        Some(secret) => format!(r#"{{"always": {always}, "with_secret": "{secret}"}}"#),
        None => format!(r#"{{"always": {always}}}"#),
    }
}

#[test]
fn full_decision_table_through_the_admin_api_and_the_proxy() {
    let origin = TestOrigin::start();
    let escgate = Escgate::start(&config(origin.addr));
    let (proxy, admin) = (escgate.addr, escgate.admin_addr);

    // Cookie variants: (Cookie headers, carries the zone secret, carries the account secret).
    let zone_cookie = format!("disable_esc={ZONE_SECRET}");
    let account_cookie = format!("disable_esc={ACCOUNT_SECRET}");
    let quoted_zone_cookie = format!("x=1; disable_esc=\"{ZONE_SECRET}\"");
    let several_in_one = format!("a=1; disable_esc=wrong; disable_esc={ACCOUNT_SECRET}; b=2");
    let both_in_one = format!("disable_esc={ACCOUNT_SECRET}; c=3; disable_esc={ZONE_SECRET}");
    let variants: Vec<(Vec<&str>, bool, bool)> = vec![
        (vec![], false, false),
        (vec!["a=1; b=2"], false, false),
        (vec![zone_cookie.as_str()], true, false),
        (vec![account_cookie.as_str()], false, true),
        (vec!["a=1; disable_esc=wrong; b=2"], false, false),
        (vec![quoted_zone_cookie.as_str()], true, false),
        (vec![several_in_one.as_str()], false, true),
        (vec![both_in_one.as_str()], true, true),
        (
            vec!["a=1", zone_cookie.as_str(), "b=2; disable_esc=wrong"],
            true,
            false,
        ),
        (
            vec!["disable_esc=wrong", "a=1; disable_esc=also-wrong"],
            false,
            false,
        ),
        (vec![account_cookie.as_str(), "z=9"], false, true),
    ];

    let mut cases = 0;
    for state in 0..16u8 {
        let zone_always = state & 1 != 0;
        let account_always = state & 2 != 0;
        let zone_secret = (state & 4 != 0).then_some(ZONE_SECRET);
        let account_secret = (state & 8 != 0).then_some(ACCOUNT_SECRET);
        clear(admin, "zones", ZONE_ID);
        clear(admin, "accounts", ACCOUNT_ID);
        set(admin, "zones", ZONE_ID, &body(zone_always, zone_secret));
        set(
            admin,
            "accounts",
            ACCOUNT_ID,
            &body(account_always, account_secret),
        );
        for (cookies, has_zone, has_account) in &variants {
            let reason = oracle(
                zone_always,
                account_always,
                zone_secret.is_some() && *has_zone,
                account_secret.is_some() && *has_account,
            );
            let context = format!(
                "zone always={zone_always} secret={zone_secret:?}, account always={account_always} secret={account_secret:?}"
            );
            expect(proxy, "one.example", cookies, reason, &context);
            // The sibling zone sees only the account's setting.
            let sibling = oracle(
                false,
                account_always,
                false,
                account_secret.is_some() && *has_account,
            );
            expect(proxy, "www.two.example", cookies, sibling, &context);
            // Another account's zone sees none of it.
            expect(proxy, "other.test", cookies, "applied", &context);
            cases += 3;
        }
    }
    println!("decision table: {cases} proxied requests checked");
}

#[test]
fn toggle_is_visible_on_the_very_next_request_and_delete_reenables() {
    let origin = TestOrigin::start();
    let escgate = Escgate::start(&config(origin.addr));
    let (proxy, admin) = (escgate.addr, escgate.admin_addr);
    let secret_cookie = format!("k=v; disable_esc={ACCOUNT_SECRET}");

    let mut worst_post = Duration::ZERO;
    let mut worst_effect = Duration::ZERO;
    const ROUNDS: u32 = 20;
    for round in 0..ROUNDS {
        // Each POST's 200 is followed by exactly one request, which must already see it.
        let started = Instant::now();
        let answer = set(admin, "zones", ZONE_ID, r#"{"always": true}"#);
        assert_eq!(answer.json["result"]["always"], true);
        let acknowledged = Instant::now();
        expect(
            proxy,
            "one.example",
            &[],
            "zone_always",
            "after POST always",
        );
        worst_post = worst_post.max(acknowledged - started);
        worst_effect = worst_effect.max(acknowledged.elapsed());

        let answer = set(admin, "zones", ZONE_ID, r#"{"always": false}"#);
        assert_eq!(answer.json["result"]["always"], false);
        expect(
            proxy,
            "one.example",
            &[],
            "applied",
            "after POST always=false",
        );

        set(
            admin,
            "accounts",
            ACCOUNT_ID,
            &body(round % 2 == 0, Some(ACCOUNT_SECRET)),
        );
        let reason = if round % 2 == 0 {
            "account_always"
        } else {
            "account_secret"
        };
        expect(proxy, "two.example", &[&secret_cookie], reason, "account");
        expect(
            proxy,
            "other.test",
            &[&secret_cookie],
            "applied",
            "other account",
        );

        // DELETE clears the flag and the secret.
        clear(admin, "accounts", ACCOUNT_ID);
        expect(
            proxy,
            "two.example",
            &[&secret_cookie],
            "applied",
            "after DELETE",
        );
        let status = call("GET", &esc_url(admin, "accounts", ACCOUNT_ID), auth(), None);
        assert_eq!(status.json, serde_json::json!({"always": false}));
    }
    println!(
        "toggle -> effect over {ROUNDS} rounds: worst POST round trip {worst_post:?}, worst \
         POST-200 -> proxied response seeing it {worst_effect:?}"
    );
}

#[test]
fn state_survives_a_restart_and_the_log_carries_the_reason() {
    let origin = TestOrigin::start();
    let dir = temp_dir("esc-restart");
    // A directory that does not exist yet: the server creates it (as `var/` of a fresh checkout).
    let state = dir.join("var").join("state.json");
    let toml = config(origin.addr);
    let secret_cookie = format!("disable_esc={ZONE_SECRET}");

    let mut first = EscgateProcess::start(&dir, &toml, &state);
    set(
        first.admin_addr,
        "zones",
        ZONE_ID,
        &body(false, Some(ZONE_SECRET)),
    );
    set(
        first.admin_addr,
        "accounts",
        OTHER_ACCOUNT,
        r#"{"always": true}"#,
    );
    expect(
        first.addr,
        "one.example",
        &[&secret_cookie],
        "zone_secret",
        "first run",
    );
    expect(first.addr, "other.test", &[], "account_always", "first run");
    expect(first.addr, "two.example", &[], "applied", "first run");
    first.stop();
    let log = first.log();
    for (zone, reason) in [
        ("one.example", "zone_secret"),
        ("other.test", "account_always"),
        ("two.example", "applied"),
    ] {
        assert!(
            log.lines().any(|line| line.contains("escgate::access")
                && line.contains(&format!("zone=\"{zone}\""))
                && line.contains(&format!("esc=\"{reason}\""))),
            "no access log line for {zone} with {reason} in:\n{log}"
        );
    }

    let second = EscgateProcess::start(&dir, &toml, &state);
    expect(
        second.addr,
        "one.example",
        &[&secret_cookie],
        "zone_secret",
        "after restart",
    );
    expect(
        second.addr,
        "one.example",
        &["disable_esc=old"],
        "applied",
        "after restart",
    );
    expect(
        second.addr,
        "other.test",
        &[],
        "account_always",
        "after restart",
    );
    let status = call(
        "GET",
        &esc_url(second.admin_addr, "zones", ZONE_ID),
        auth(),
        None,
    );
    assert_eq!(
        status.json,
        serde_json::json!({"always": false, "with_secret": ZONE_SECRET})
    );
    drop(second);
    let _ = std::fs::remove_dir_all(dir);
}
