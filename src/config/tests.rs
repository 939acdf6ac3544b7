//! Validation rules of the config loader, one concern per test.

use super::*;

const ACCOUNT: &str = "01a7362d577a6c3019a474fd6f485823";
const ZONE: &str = "023e105f4ecef8ad9ca31a8372d0c353";

fn with_zone(zone_extra: &str, tail: &str) -> String {
    format!(
        r#"
[server]
listen = ["127.0.0.1:8080", "127.0.0.1:8090"]
[[accounts]]
id = "{ACCOUNT}"
name = "A"
[[zones]]
id = "{ZONE}"
name = "Example.COM"
account_id = "{ACCOUNT}"
origin = "127.0.0.1:8082"
{zone_extra}
{tail}"#
    )
}

fn errors(text: &str) -> Vec<String> {
    load_str(text).expect_err("invalid config").0
}

#[test]
fn defaults_and_compiled_fields() {
    let config = load_str(&with_zone("", "")).unwrap();
    assert_eq!(config.server.listen.len(), 2);
    assert_eq!(config.server.threads, DEFAULT_THREADS);
    assert_eq!(config.server.state_path, PathBuf::from(DEFAULT_STATE_PATH));
    assert_eq!(
        config.server.upstream_keepalive_pool_size,
        DEFAULT_UPSTREAM_KEEPALIVE_POOL_SIZE
    );
    let zone = config.zone_by_id(ZONE).unwrap();
    assert_eq!(zone.name, "example.com");
    assert_eq!(zone.plan, Plan::Enterprise);
    assert_eq!(zone.origin_sni, "example.com");
    assert!(zone.upstreams.peer(0, 0).is_some());
    assert!(zone.upstreams.peer(1, 0).is_none());
    assert_eq!(config.zone_for_host("WWW.example.com:80").unwrap().id, ZONE);
    assert!(config.account_by_id(ACCOUNT).is_some());
}

#[test]
fn upstream_table_covers_every_override_pair() {
    let text = with_zone(
        "origin_tls = true\norigin_sni = \"origin.example\"",
        r#"
[[zones.esc]]
resolve_override = "127.0.0.1:9001"
[[zones.esc]]
sni = "other.example"
[[zones.esc]]
resolve_override = "127.0.0.1:9001"
sni = "origin.example"
"#,
    );
    let config = load_str(&text).unwrap();
    let upstreams = &config.zones[0].upstreams;
    let peer = upstreams.peer(1, 1).unwrap();
    assert_eq!(peer.sni, "other.example");
    assert_eq!(peer._address.to_string(), "127.0.0.1:9001");
    assert_eq!(upstreams.peer(0, 0).unwrap().sni, "origin.example");
    assert!(upstreams.peer(2, 0).is_none(), "duplicates share one index");
}

#[test]
fn zones_with_the_same_origin_share_one_peer() {
    let second = |id: &str, name: &str, extra: &str| {
        format!(
            "[[zones]]\nid = \"{id}\"\nname = \"{name}\"\naccount_id = \"{ACCOUNT}\"\n\
             origin = \"127.0.0.1:8082\"\n{extra}\n"
        )
    };
    let text = with_zone(
        "",
        &[
            second("123e105f4ecef8ad9ca31a8372d0c353", "plain.example", ""),
            second(
                "223e105f4ecef8ad9ca31a8372d0c353",
                "tls-a.example",
                "origin_tls = true",
            ),
            second(
                "323e105f4ecef8ad9ca31a8372d0c353",
                "tls-b.example",
                "origin_tls = true",
            ),
        ]
        .concat(),
    );
    let config = load_str(&text).unwrap();
    let peer = |zone: usize| config.zones[zone].upstreams.peer(0, 0).unwrap();
    assert!(std::ptr::eq(peer(0), peer(1)), "plain origins share a peer");
    assert_eq!(peer(0).sni, "", "no SNI on plain HTTP");
    assert_eq!(peer(2).sni, "tls-a.example");
    assert_eq!(peer(3).sni, "tls-b.example");
    assert!(!std::ptr::eq(peer(2), peer(3)), "TLS peers differ by SNI");
}

#[test]
fn entry_without_action_and_sni_without_tls_are_rejected() {
    let found = errors(&with_zone(
        "",
        "[[zones.esc]]\ndescription = \"nothing\"\n[[zones.esc]]\nsni = \"x.example\"\n",
    ));
    assert_eq!(
        found,
        [
            "zones[0].esc[0]: no action: at least one customization key expected",
            "zones[0].esc[1].sni: needs origin_tls = true on the zone",
        ]
    );
}

#[test]
fn rewrite_and_status_lists_are_checked() {
    let found = errors(&with_zone(
        "",
        r#"
[[zones.esc]]
rewrite_uri = { path = "relative", path_regex = "x" }
[[zones.esc]]
rewrite_uri = { path_regex = "(", path_replace = "/" }
[[zones.esc]]
custom_error = { status = [200], body = "" }
[[zones.esc]]
status_redirect = { status = [], to = "not a url" }
[[zones.esc]]
add_cookies = ["=novalue"]
"#,
    ));
    let expected_prefixes = [
        "zones[0].esc[0].rewrite_uri: either path, or path_regex with path_replace, expected",
        "zones[0].esc[1].rewrite_uri.path_regex: ",
        "zones[0].esc[2].custom_error.status[0]: 400 to 599 expected, got 200",
        "zones[0].esc[3].status_redirect.status: at least one status expected",
        "zones[0].esc[3].status_redirect.to: an absolute URL or a path expected",
        "zones[0].esc[4].add_cookies[0]: a Set-Cookie value expected",
    ];
    assert_eq!(found.len(), expected_prefixes.len(), "{found:#?}");
    for (found, prefix) in found.iter().zip(expected_prefixes) {
        assert!(
            found.starts_with(prefix),
            "{found:?} should start with {prefix:?}"
        );
    }
}

#[test]
fn duplicates_and_references_are_checked() {
    let text = with_zone("", "")
        + &with_zone("", "")
            .split("[[zones]]")
            .nth(1)
            .map(|z| format!("[[zones]]{z}"))
            .unwrap();
    let found = errors(&text);
    assert_eq!(
        found,
        [
            format!("zones[1].id: duplicate zone id {ZONE}"),
            "zones[1].name: duplicate zone name example.com".to_string(),
        ]
    );
}

#[test]
fn credential_shapes_are_checked() {
    let found = errors(&with_zone(
        "",
        r#"
[[api_keys]]
email = ""
key_sha256 = "ABC"
accounts = []
[[api_tokens]]
id = "ed17574386854bd3f1a6e1a1c3a3a6f1"
token_sha256 = "7c43ef5ae21d43ce2743f770c68e24def1a43ee2f416d2438410c8af7af2ff2c"
permissions = []
[[api_tokens]]
id = "ed17574386854bd3f1a6e1a1c3a3a6f2"
token_sha256 = "7c43ef5ae21d43ce2743f770c68e24def1a43ee2f416d2438410c8af7af2ff2c"
permissions = ["esc:write"]
zones = ["023e105f4ecef8ad9ca31a8372d0c353"]
"#,
    ));
    assert_eq!(
        found,
        [
            "api_keys[0].email: an address like ops@example.com expected, got \"\"",
            "api_keys[0].key_sha256: 64 lowercase hex digits expected (escgate hash-secret prints them)",
            "api_keys[0].accounts: at least one account id or \"*\" expected",
            "api_tokens[0].permissions: must not be empty",
            "api_tokens[0]: zones or accounts expected",
            "api_tokens[1].permissions[0]: one of esc:read, esc:edit, waf:read, waf:edit, zone:read, account:read, config:reload expected, got \"esc:write\"",
        ]
    );
}

#[test]
fn server_addresses_are_checked() {
    let found = errors("[server]\nlisten = []\nadmin_listen = \"localhost\"\nthreads = 0\n");
    assert_eq!(
        found,
        [
            "server.listen: at least one address expected",
            "server.admin_listen: an IP:port address expected, got \"localhost\"",
            "server.threads: 1 to 1024 expected, got 0",
        ]
    );
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = load_str(&text);
    }

    #[test]
    fn arbitrary_esc_values_never_panic(value in "\\PC{0,40}", status in 0u16..1000) {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        let text = with_zone("", &format!(
            "[[zones.esc]]\nhost_header = \"{escaped}\"\nredirect = {{ to = \"{escaped}\", status = {status} }}\nrewrite_uri = {{ path_regex = \"{escaped}\", path_replace = \"{escaped}\" }}\n"
        ));
        let _ = load_str(&text);
    }
}
