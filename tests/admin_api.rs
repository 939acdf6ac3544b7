//! The admin API alone (real pingora service on loopback): ESC endpoints for both scopes,
//! discovery, auth failures, bad input, durability of acknowledged writes.

mod admin_support;

use admin_support::*;
use serde_json::{json, Value};

fn esc_url(server: &AdminServer, scope: &str, id: &str) -> String {
    format!("{}/{scope}/{id}/disable_esc", server.base())
}

/// What a restart would load (snapshot plus journal), as the snapshot document's JSON.
fn stored(server: &AdminServer) -> Value {
    use escgate::store::{FileStore, Store};
    let state = FileStore::new(&server.state_path)
        .load()
        .expect("stored state loads");
    serde_json::to_value(state.to_document()).expect("document serializes")
}

/// The bytes of every state file (snapshot, journal segments), by name: unchanged bytes mean
/// nothing was written at all.
fn stored_files(server: &AdminServer) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let prefix = server.state_path.file_name().expect("file name").to_owned();
    let dir = server.state_path.parent().expect("directory");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("state directory")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&*prefix.to_string_lossy()))
        })
        .map(|path| {
            let bytes = std::fs::read(&path).expect("state file");
            (path.file_name().expect("name").to_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn esc_lifecycle_for_zone_and_account() {
    let dir = temp_dir("admin-lifecycle");
    let server = AdminServer::start(&dir.join("state.json"));
    for (scope, id, section) in [
        ("zones", ZONE_1, "zones"),
        ("accounts", ACCOUNT_1, "accounts"),
    ] {
        let url = esc_url(&server, scope, id);
        let get = call("GET", &url, admin(), None);
        assert_eq!((get.status, &get.json), (200, &json!({"always": false})));
        assert_eq!(get.content_type, "application/json");

        let on = post_json(&url, admin(), r#"{"always": true}"#);
        assert_eq!(on.status, 200, "{:?}", on.json);
        assert_eq!(on.json["success"], true);
        assert_eq!(on.json["result"], json!({"always": true}));
        assert_eq!(on.json["errors"], json!([]));
        // Persisted before the answer.
        assert_eq!(stored(&server)[section][id]["esc"]["always"], true);

        let secret = post_json(&url, admin(), r#"{"with_secret": "s3cr3t"}"#);
        assert_eq!(
            secret.json["result"],
            json!({"always": true, "with_secret": "s3cr3t"})
        );
        let off = post_json(&url, admin(), r#"{"always": false}"#);
        assert_eq!(
            off.json["result"],
            json!({"always": false, "with_secret": "s3cr3t"})
        );
        let get = call("GET", &url, admin(), None);
        assert_eq!(get.json, json!({"always": false, "with_secret": "s3cr3t"}));
        let both = post_json(&url, admin(), r#"{"always": true, "with_secret": "n3w"}"#);
        assert_eq!(
            both.json["result"],
            json!({"always": true, "with_secret": "n3w"})
        );

        let delete = call("DELETE", &url, admin(), None);
        assert_eq!(delete.status, 200);
        assert_eq!(delete.json["result"], json!({"always": false}));
        assert_eq!(
            call("GET", &url, admin(), None).json,
            json!({"always": false})
        );
        assert!(stored(&server)[section].get(id).is_none());
    }
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn acknowledged_writes_survive_a_restart() {
    let dir = temp_dir("admin-restart");
    let state = dir.join("state.json");
    let server = AdminServer::start(&state);
    post_json(
        &esc_url(&server, "zones", ZONE_2),
        admin(),
        r#"{"with_secret": "keep-me"}"#,
    );
    post_json(
        &esc_url(&server, "accounts", ACCOUNT_2),
        admin(),
        r#"{"always": true}"#,
    );
    server.stop();

    let server = AdminServer::start(&state);
    assert_eq!(
        call("GET", &esc_url(&server, "zones", ZONE_2), admin(), None).json,
        json!({"always": false, "with_secret": "keep-me"})
    );
    assert_eq!(
        call(
            "GET",
            &esc_url(&server, "accounts", ACCOUNT_2),
            admin(),
            None
        )
        .json,
        json!({"always": true})
    );
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn concurrent_edits_of_one_zone_are_all_kept() {
    let dir = temp_dir("admin-concurrent");
    let server = AdminServer::start(&dir.join("state.json"));
    let url = esc_url(&server, "zones", ZONE_1);
    std::thread::scope(|s| {
        let a = s.spawn(|| post_json(&url, admin(), r#"{"always": true}"#).status);
        let b = s.spawn(|| post_json(&url, admin(), r#"{"with_secret": "x"}"#).status);
        assert_eq!((a.join().unwrap(), b.join().unwrap()), (200, 200));
    });
    assert_eq!(
        call("GET", &url, admin(), None).json,
        json!({"always": true, "with_secret": "x"})
    );
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_auth_failure_has_its_code_and_reveals_nothing() {
    let dir = temp_dir("admin-auth");
    let server = AdminServer::start(&dir.join("state.json"));
    let url = esc_url(&server, "zones", ZONE_1);
    let check = |auth: Auth<'_>, status: u16, codes: &[u64]| {
        let answer = call("GET", &url, auth, None);
        assert_eq!(answer.status, status, "{:?}", answer.json);
        assert_eq!(answer.codes(), codes, "{:?}", answer.json);
        assert_eq!(answer.json["success"], false);
        assert_eq!(answer.json["result"], Value::Null);
        assert_eq!(answer.json["messages"], json!([]));
        answer
    };
    check(Auth::None, 400, &[9106]);
    check(Auth::Raw(&[("X-Auth-Email", ADMIN_EMAIL)]), 400, &[9106]);
    let bad = check(Auth::Raw(&[("Authorization", "Basic abc")]), 400, &[6003]);
    assert_eq!(bad.json["errors"][0]["error_chain"][0]["code"], 6111);
    let bad = check(Auth::Key("not-an-email", ADMIN_KEY), 400, &[6003]);
    assert_eq!(bad.json["errors"][0]["error_chain"][0]["code"], 6102);
    let bad = check(
        Auth::Raw(&[("X-Auth-Email", ADMIN_EMAIL), ("X-Auth-Key", "has space")]),
        400,
        &[6003],
    );
    assert_eq!(bad.json["errors"][0]["error_chain"][0]["code"], 6103);
    check(Auth::Key(ADMIN_EMAIL, "wrong-key"), 403, &[9103]);
    check(Auth::Key(ACCOUNT_1_EMAIL, ADMIN_KEY), 403, &[9103]);
    check(Auth::Token("unknown-token"), 403, &[9109]);

    // Read-only token: can read, cannot write (10000), state untouched.
    let reader = Auth::Token(ACCOUNT_1_READ_TOKEN);
    assert_eq!(call("GET", &url, reader, None).status, 200);
    let denied = post_json(&url, reader, r#"{"always": true}"#);
    assert_eq!((denied.status, denied.codes()), (403, vec![10000]));
    assert_eq!(
        call("GET", &url, admin(), None).json,
        json!({"always": false})
    );

    // Out of scope answers exactly like unknown.
    let unknown = call(
        "GET",
        &esc_url(&server, "zones", UNKNOWN_ZONE),
        reader,
        None,
    );
    let outside = call("GET", &esc_url(&server, "zones", ZONE_3), reader, None);
    assert_eq!((unknown.status, unknown.codes()), (400, vec![7003, 7000]));
    assert_eq!(
        (outside.status, outside.codes()),
        (unknown.status, unknown.codes())
    );
    let strip = |a: &Answer| {
        a.json
            .to_string()
            .replace(UNKNOWN_ZONE, "ID")
            .replace(ZONE_3, "ID")
    };
    assert_eq!(strip(&unknown), strip(&outside));
    // A write to an out-of-scope zone is also indistinguishable, and changes nothing.
    let key1 = Auth::Key(ACCOUNT_1_EMAIL, ACCOUNT_1_KEY);
    let write = post_json(
        &esc_url(&server, "zones", ZONE_3),
        key1,
        r#"{"always": true}"#,
    );
    assert_eq!((write.status, write.codes()), (400, vec![7003, 7000]));
    assert_eq!(
        call("GET", &esc_url(&server, "zones", ZONE_3), admin(), None).json,
        json!({"always": false})
    );

    // A zone token covers its zone, not its account; an account grant covers its zones.
    let zone_token = Auth::Token(ZONE_1_TOKEN);
    assert_eq!(
        post_json(&url, zone_token, r#"{"always": true}"#).status,
        200
    );
    let account = call(
        "GET",
        &esc_url(&server, "accounts", ACCOUNT_1),
        zone_token,
        None,
    );
    assert_eq!((account.status, account.codes()), (400, vec![7003, 7000]));
    assert_eq!(
        call("GET", &esc_url(&server, "zones", ZONE_2), key1, None).status,
        200
    );
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_bad_input_is_an_enveloped_4xx_and_changes_nothing() {
    let dir = temp_dir("admin-bad-input");
    let server = AdminServer::start(&dir.join("state.json"));
    let url = esc_url(&server, "zones", ZONE_1);
    post_json(
        &url,
        admin(),
        r#"{"always": true, "with_secret": "before"}"#,
    );
    let before = stored_files(&server);
    assert!(!before.is_empty());
    let too_long = format!(r#"{{"with_secret": "{}"}}"#, "a".repeat(101));
    let cases: Vec<(&str, Vec<u8>, u16, u64)> = vec![
        ("application/json", b"{not json".to_vec(), 400, 6007),
        ("application/json", b"".to_vec(), 400, 6007),
        ("application/json", b"[true]".to_vec(), 400, 1101),
        ("application/json", b"{}".to_vec(), 400, 1101),
        (
            "application/json",
            br#"{"always": "true"}"#.to_vec(),
            400,
            1103,
        ),
        (
            "application/json",
            br#"{"with_secret": 12}"#.to_vec(),
            400,
            1104,
        ),
        (
            "application/json",
            br#"{"always": true, "extra": 1}"#.to_vec(),
            400,
            1102,
        ),
        (
            "application/json",
            br#"{"with_secret": ""}"#.to_vec(),
            400,
            1105,
        ),
        ("application/json", too_long.into_bytes(), 400, 1105),
        (
            "application/json",
            br#"{"with_secret": "a;b"}"#.to_vec(),
            400,
            1106,
        ),
        (
            "application/json",
            br#"{"with_secret": "a b"}"#.to_vec(),
            400,
            1106,
        ),
        ("text/plain", br#"{"always": false}"#.to_vec(), 415, 10415),
        ("application/json", vec![b' '; 1024 * 1024 + 1], 413, 10413),
    ];
    for (content_type, body, status, code) in cases {
        let answer = call("POST", &url, admin(), Some((content_type, &body)));
        let shown = String::from_utf8_lossy(&body[..body.len().min(40)]).into_owned();
        assert_eq!(answer.status, status, "{shown}: {:?}", answer.json);
        assert_eq!(answer.codes()[0], code, "{shown}: {:?}", answer.json);
        assert_eq!(answer.json["success"], false);
        assert!(!answer.json["errors"][0]["message"]
            .as_str()
            .unwrap()
            .is_empty());
    }
    // Wrong methods, unknown ids and routes.
    let put = call("PUT", &url, admin(), Some(("application/json", b"{}")));
    assert_eq!((put.status, put.codes()), (405, vec![10405]));
    let post_list = post_json(&format!("{}/zones", server.base()), admin(), "{}");
    assert_eq!((post_list.status, post_list.codes()), (405, vec![10405]));
    let unknown = post_json(
        &esc_url(&server, "zones", UNKNOWN_ZONE),
        admin(),
        r#"{"always": true}"#,
    );
    assert_eq!((unknown.status, unknown.codes()), (400, vec![7003, 7000]));
    let route = call(
        "GET",
        &format!("{}/nothing/here", server.base()),
        admin(),
        None,
    );
    assert_eq!((route.status, route.codes()), (400, vec![7000]));
    let waf_unplugged = call(
        "GET",
        &format!("{}/zones/{ZONE_1}/unknown_thing", server.base()),
        admin(),
        None,
    );
    assert_eq!(waf_unplugged.status, 400);

    assert_eq!(stored_files(&server), before);
    assert_eq!(
        call("GET", &url, admin(), None).json,
        json!({"always": true, "with_secret": "before"})
    );
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn discovery_endpoints_are_shaped_like_cloudflare() {
    let dir = temp_dir("admin-discovery");
    let server = AdminServer::start(&dir.join("state.json"));
    let base = server.base();
    let all = call("GET", &format!("{base}/zones"), admin(), None);
    assert_eq!(all.status, 200);
    assert_eq!(all.json["result"].as_array().unwrap().len(), 3);
    assert_eq!(
        all.json["result_info"],
        json!({"page": 1, "per_page": 20, "count": 3, "total_count": 3, "total_pages": 1})
    );
    let zone = &all.json["result"][0];
    assert_eq!(zone["id"], ZONE_1);
    assert_eq!(zone["name"], "one.example");
    assert_eq!(zone["status"], "active");
    assert_eq!(
        zone["account"],
        json!({"id": ACCOUNT_1, "name": "Account One"})
    );
    assert_eq!(zone["plan"]["legacy_id"], "enterprise");

    let by_name = call(
        "GET",
        &format!("{base}/zones?name=two.example"),
        admin(),
        None,
    );
    assert_eq!(by_name.json["result"][0]["id"], ZONE_2);
    assert_eq!(by_name.json["result_info"]["total_count"], 1);
    let by_account = call(
        "GET",
        &format!("{base}/zones?account.id={ACCOUNT_2}"),
        admin(),
        None,
    );
    assert_eq!(by_account.json["result"][0]["id"], ZONE_3);
    let paged = call(
        "GET",
        &format!("{base}/zones?per_page=5&page=2"),
        admin(),
        None,
    );
    assert_eq!(paged.json["result"], json!([]));
    assert_eq!(paged.json["result_info"]["total_pages"], 1);
    let bad_page = call("GET", &format!("{base}/zones?page=zero"), admin(), None);
    assert_eq!((bad_page.status, bad_page.codes()), (400, vec![1004]));

    // Scope: the account-1 token sees account 1's zones only; the zone token lacks zone:read.
    let reader = Auth::Token(ACCOUNT_1_READ_TOKEN);
    let mine = call("GET", &format!("{base}/zones"), reader, None);
    assert_eq!(mine.json["result_info"]["total_count"], 2);
    let denied = call(
        "GET",
        &format!("{base}/zones"),
        Auth::Token(ZONE_1_TOKEN),
        None,
    );
    assert_eq!((denied.status, denied.codes()), (403, vec![10000]));

    let one = call("GET", &format!("{base}/zones/{ZONE_2}"), reader, None);
    assert_eq!(
        (one.status, &one.json["result"]["name"]),
        (200, &json!("two.example"))
    );
    let hidden = call("GET", &format!("{base}/zones/{ZONE_3}"), reader, None);
    assert_eq!((hidden.status, hidden.codes()), (400, vec![7003, 7000]));

    let accounts = call("GET", &format!("{base}/accounts"), reader, None);
    assert_eq!(
        accounts.json["result"],
        json!([{
            "id": ACCOUNT_1, "name": "Account One", "type": "standard",
            "settings": {"enforce_twofactor": false, "use_account_custom_ns_by_default": false}
        }])
    );
    let account = call(
        "GET",
        &format!("{base}/accounts/{ACCOUNT_2}"),
        admin(),
        None,
    );
    assert_eq!(account.json["result"]["name"], "Account Two");

    let verify = call(
        "GET",
        &format!("{base}/user/tokens/verify"),
        Auth::Token(ZONE_1_TOKEN),
        None,
    );
    assert_eq!(
        verify.json["result"],
        json!({"id": ZONE_1_TOKEN_ID, "status": "active"})
    );
    let verify_key = call("GET", &format!("{base}/user/tokens/verify"), admin(), None);
    assert_eq!(verify_key.status, 400);

    // Reload: needs config:reload (a restricted key lacks it); a bad file changes nothing.
    let key1 = Auth::Key(ACCOUNT_1_EMAIL, ACCOUNT_1_KEY);
    let reload_url = format!("{base}/escgate/reload");
    let denied = call("POST", &reload_url, key1, None);
    assert_eq!((denied.status, denied.codes()), (403, vec![10000]));
    let rejected = call("POST", &reload_url, admin(), None);
    assert_eq!((rejected.status, rejected.codes()), (400, vec![1200]));
    assert!(rejected.json["errors"][0]["error_chain"][0]["message"].is_string());
    assert_eq!(server.shared.load().config.zones.len(), 3);
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn waf_routes_are_authorized_scoped_and_persisted() {
    let dir = temp_dir("admin-waf");
    let state = dir.join("state.json");
    let server = AdminServer::start(&state);
    let url = format!("{}/zones/{ZONE_1}/settings/waf", server.base());
    let get = call("GET", &url, Auth::Token(ALL_TOKEN), None);
    assert_eq!(get.status, 200, "{:?}", get.json);
    // No waf:read: 10000; out of scope: like unknown.
    let denied = call("GET", &url, Auth::Token(ACCOUNT_1_READ_TOKEN), None);
    assert_eq!((denied.status, denied.codes()), (403, vec![10000]));
    let hidden = call(
        "GET",
        &format!("{}/zones/{ZONE_3}/settings/waf", server.base()),
        Auth::Key(ACCOUNT_1_EMAIL, ACCOUNT_1_KEY),
        None,
    );
    assert_eq!((hidden.status, hidden.codes()), (400, vec![7003, 7000]));

    let on = call(
        "PATCH",
        &url,
        Auth::Token(ALL_TOKEN),
        Some(("application/json", br#"{"value": "on"}"#)),
    );
    assert_eq!(on.status, 200, "{:?}", on.json);
    assert_eq!(on.json["result"]["value"], "on");
    let wrong_type = call(
        "PATCH",
        &url,
        Auth::Token(ALL_TOKEN),
        Some(("text/plain", br#"{"value": "off"}"#)),
    );
    assert_eq!(wrong_type.status, 415);
    let bad = call(
        "PATCH",
        &url,
        Auth::Token(ALL_TOKEN),
        Some(("application/json", br#"{"value": "maybe"}"#)),
    );
    assert_eq!(bad.status, 400);
    server.stop();

    let server = AdminServer::start(&state);
    let url = format!("{}/zones/{ZONE_1}/settings/waf", server.base());
    let after = call("GET", &url, admin(), None);
    assert_eq!(after.json["result"]["value"], "on", "{:?}", after.json);
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}
