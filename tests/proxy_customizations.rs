//! Every ESC customization family end to end: escgate in front of an echo origin, checking what
//! the origin received and what the client got.

mod common;

use common::origin::TlsIdentity;
use common::{get, request, Escgate, TestOrigin};

#[test]
fn request_headers_set_add_remove_in_order_and_scoped_by_when() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
[[zones.esc]]
request_headers = { set = { "x-a" = "first", "x-b" = "kept" }, add = { "x-multi" = "added" }, remove = ["x-drop"] }
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/api/")'
request_headers = { set = { "x-a" = "api" } }
"#,
    );
    let headers = [
        ("host", "example.com"),
        ("x-drop", "1"),
        ("x-multi", "client"),
    ];
    let echo = request(escgate.addr, "GET", "/api/items", &headers, b"").echo();
    assert_eq!(echo.header("x-a"), Some("api"), "a later set wins");
    assert_eq!(echo.header("x-b"), Some("kept"));
    assert_eq!(echo.headers_named("x-multi"), ["client", "added"]);
    assert_eq!(echo.header("x-drop"), None);
    let echo = request(escgate.addr, "GET", "/other", &headers, b"").echo();
    assert_eq!(
        echo.header("x-a"),
        Some("first"),
        "the /api/ entry does not match"
    );
}

#[test]
fn host_header_switch() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
[[zones.esc]]
when = 'http.host eq "www.example.com"'
host_header = "origin.internal"
"#,
    );
    let echo = get(escgate.addr, "www.example.com", "/").echo();
    assert_eq!(echo.header("host"), Some("origin.internal"));
    let echo = get(escgate.addr, "example.com", "/").echo();
    assert_eq!(echo.header("host"), Some("example.com"));
}

#[test]
fn rewrite_uri_fixed_and_regex() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
[[zones.esc]]
when = 'http.request.uri.path eq "/fixed"'
rewrite_uri = { path = "/v2/items", query = "a=1" }
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/api/")'
rewrite_uri = { path_regex = "^/api/(.*)$", path_replace = "/v2/$1" }
"#,
    );
    assert_eq!(
        get(escgate.addr, "example.com", "/fixed?z=9").echo().uri,
        "/v2/items?a=1"
    );
    assert_eq!(
        get(escgate.addr, "example.com", "/api/x/y?q=1").echo().uri,
        "/v2/x/y?q=1"
    );
    assert_eq!(
        get(escgate.addr, "example.com", "/plain?q=1").echo().uri,
        "/plain?q=1"
    );
}

#[test]
fn redirect_answers_at_once_first_match_wins_query_preserved() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
[[zones.esc]]
when = 'http.request.uri.path eq "/old"'
redirect = { to = "https://www.example.com/new", status = 301, preserve_query = true }
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/o")'
redirect = { to = "https://www.example.com/other?x=1", status = 308, preserve_query = true }
[[zones.esc]]
when = 'http.request.uri.path eq "/plain"'
redirect = { to = "/elsewhere" }
"#,
    );
    let response = get(escgate.addr, "example.com", "/old?q=1");
    assert_eq!(response.status, 301);
    assert_eq!(
        response.header("location"),
        Some("https://www.example.com/new?q=1")
    );
    let response = get(escgate.addr, "example.com", "/odd?q=2");
    assert_eq!(response.status, 308);
    assert_eq!(
        response.header("location"),
        Some("https://www.example.com/other?x=1&q=2")
    );
    let response = get(escgate.addr, "example.com", "/plain?q=3");
    assert_eq!(response.status, 302, "default status");
    assert_eq!(
        response.header("location"),
        Some("/elsewhere"),
        "query not preserved"
    );
    assert_eq!(origin.connections(), 0, "redirects never reach the origin");
}

#[test]
fn resolve_override_sends_to_another_origin() {
    let main_origin = TestOrigin::start();
    let other_origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        main_origin.addr,
        &format!(
            r#"
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/legacy/")'
resolve_override = "{}"
"#,
            other_origin.addr
        ),
    );
    assert_eq!(get(escgate.addr, "example.com", "/legacy/a").status, 200);
    assert_eq!(get(escgate.addr, "example.com", "/legacy/b").status, 200);
    assert_eq!(
        other_origin.connections(),
        1,
        "override origin, one reused connection"
    );
    assert_eq!(main_origin.connections(), 0);
    assert_eq!(get(escgate.addr, "example.com", "/new").status, 200);
    assert_eq!(main_origin.connections(), 1);
}

#[test]
fn tls_origin_receives_the_sni_and_host_escgate_sends() {
    let identity = TlsIdentity::self_signed(&["origin.internal", "example.com"]);
    let origin = TestOrigin::start_tls(&identity);
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
origin_tls = true
origin_verify_cert = false
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/internal/")'
sni = "origin.internal"
host_header = "origin.internal"
"#,
    );
    let echo = get(escgate.addr, "www.example.com", "/internal/x").echo();
    assert_eq!(echo.sni.as_deref(), Some("origin.internal"));
    assert_eq!(echo.header("host"), Some("origin.internal"));
    let echo = get(escgate.addr, "www.example.com", "/public").echo();
    assert_eq!(echo.sni.as_deref(), Some("example.com"), "zone default SNI");
    assert_eq!(echo.header("host"), Some("www.example.com"));
}

#[test]
fn feature_exception_switches_compression_off() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
compression = true
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/raw/")'
feature_exceptions = ["compression", "waf"]
"#,
    );
    let headers = [("host", "example.com"), ("accept-encoding", "gzip")];
    let compressed = request(escgate.addr, "GET", "/page", &headers, b"");
    assert_eq!(compressed.status, 200);
    assert_eq!(compressed.header("content-encoding"), Some("gzip"));
    let raw = request(escgate.addr, "GET", "/raw/file", &headers, b"");
    assert_eq!(raw.header("content-encoding"), None);
    assert_eq!(raw.echo().uri, "/raw/file");
}

#[test]
fn response_headers_and_cookies() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
[[zones.esc]]
response_headers = { set = { "x-frame-options" = "DENY" }, add = { "x-extra" = "1" }, remove = ["server", "x-powered-by"] }
add_cookies = ["promo=1; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax", "seen=yes; Path=/"]
"#,
    );
    let response = get(escgate.addr, "example.com", "/");
    assert_eq!(response.header("x-frame-options"), Some("DENY"));
    assert_eq!(response.header("x-extra"), Some("1"));
    assert_eq!(response.header("server"), None);
    assert_eq!(response.header("x-powered-by"), None);
    assert_eq!(
        response.headers_named("set-cookie"),
        [
            "promo=1; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax",
            "seen=yes; Path=/"
        ]
    );
}

#[test]
fn custom_error_replaces_origin_errors_and_escgate_errors() {
    let origin = TestOrigin::start();
    let custom = r#"
[[zones.esc]]
custom_error = { status = [500, 502, 503, 504], content_type = "text/html", body = "<h1>Sorry</h1>" }
"#;
    let escgate = Escgate::with_zone(origin.addr, custom);
    let response = get(escgate.addr, "example.com", "/status/503");
    assert_eq!(response.status, 503);
    assert_eq!(response.header("content-type"), Some("text/html"));
    assert_eq!(response.text(), "<h1>Sorry</h1>");
    let response = get(escgate.addr, "example.com", "/status/418");
    assert_eq!(
        (response.status, response.text().as_str()),
        (418, "origin 418")
    );
    let response = get(escgate.addr, "example.com", "/empty/500");
    assert_eq!(
        (response.status, response.text().as_str()),
        (500, "<h1>Sorry</h1>")
    );
    let response = request(
        escgate.addr,
        "HEAD",
        "/status/503",
        &[("host", "example.com")],
        b"",
    );
    assert_eq!(response.status, 503);
    let response = get(escgate.addr, "example.com", "/after");
    assert_eq!(
        response.status, 200,
        "the origin connection survived the replaced body"
    );

    let down = Escgate::with_zone(common::free_addr(), custom);
    let response = get(down.addr, "example.com", "/");
    assert_eq!(response.status, 502);
    assert_eq!(response.text(), "<h1>Sorry</h1>");
}

#[test]
fn status_redirect_turns_a_status_into_a_redirect() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
debug_header = true
[[zones.esc]]
status_redirect = { status = [404], to = "https://www.example.com/not-found", code = 302 }
"#,
    );
    let response = get(escgate.addr, "example.com", "/status/404");
    assert_eq!(response.status, 302);
    assert_eq!(
        response.header("location"),
        Some("https://www.example.com/not-found")
    );
    assert_eq!(response.body, b"");
    assert_eq!(response.header("escgate-esc"), Some("applied"));
    assert_eq!(get(escgate.addr, "example.com", "/status/200").status, 200);
}
