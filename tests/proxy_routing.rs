//! Host routing, forwarding headers, origin connection reuse and origin failures, end to end.

mod common;

use common::{get, request, Escgate, TestOrigin, ZONE_ID};

const SUB_ZONE_ID: &str = "1b2c3d4e5f60718293a4b5c6d7e8f901";

#[test]
fn unknown_host_is_404_and_never_forwarded() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(origin.addr, "");
    let response = get(escgate.addr, "example.org", "/");
    assert_eq!(response.status, 404);
    assert_eq!(response.text(), "unknown host\n");
    let response = request(escgate.addr, "GET", "/", &[], b"");
    assert_eq!(response.status, 404, "no Host at all");
    assert_eq!(origin.connections(), 0);
}

#[test]
fn exact_name_then_parents_longest_wins_port_and_case_ignored() {
    let apex_origin = TestOrigin::start();
    let sub_origin = TestOrigin::start();
    let zones = Escgate::zone(ZONE_ID, "example.com", apex_origin.addr, "")
        + &Escgate::zone(SUB_ZONE_ID, "shop.example.com", sub_origin.addr, "");
    let escgate = Escgate::start(&Escgate::config(&zones));
    for host in ["example.com", "WWW.Example.com:8080", "a.b.example.com"] {
        assert_eq!(get(escgate.addr, host, "/").status, 200, "{host}");
    }
    for host in ["shop.example.com", "x.SHOP.example.com:443"] {
        assert_eq!(get(escgate.addr, host, "/").status, 200, "{host}");
    }
    assert_eq!(apex_origin.connections(), 1);
    assert_eq!(sub_origin.connections(), 1);
}

#[test]
fn forwarding_headers_and_body_reach_the_origin() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(origin.addr, "");
    let response = request(
        escgate.addr,
        "POST",
        "/form?x=1",
        &[
            ("host", "www.example.com"),
            ("x-forwarded-for", "203.0.113.9"),
            ("x-forwarded-proto", "https"),
            ("cookie", "session=abc; disable_esc=secret"),
        ],
        b"hello",
    );
    assert_eq!(response.status, 200);
    let echo = response.echo();
    assert_eq!(echo.method, "POST");
    assert_eq!(echo.uri, "/form?x=1");
    assert_eq!(echo.body, "hello");
    assert_eq!(echo.header("host"), Some("www.example.com"));
    assert_eq!(
        echo.header("x-forwarded-for"),
        Some("203.0.113.9, 127.0.0.1")
    );
    assert_eq!(echo.header("x-forwarded-proto"), Some("http"));
    assert_eq!(echo.header("via"), Some("1.1 escgate"));
    assert_eq!(
        echo.header("cookie"),
        Some("session=abc"),
        "secret never forwarded"
    );
}

#[test]
fn origin_connections_are_reused() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(origin.addr, "");
    let connections: Vec<u64> = (0..5)
        .map(|_| get(escgate.addr, "example.com", "/").echo().connection)
        .collect();
    assert_eq!(connections, [1, 1, 1, 1, 1]);
    assert_eq!(origin.connections(), 1);
}

#[test]
fn origin_down_is_502() {
    let closed = common::free_addr();
    let escgate = Escgate::with_zone(closed, "");
    let response = get(escgate.addr, "example.com", "/");
    assert_eq!(response.status, 502);
}

#[test]
fn slow_origin_is_504() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(origin.addr, "origin_read_timeout_ms = 200");
    let response = get(escgate.addr, "example.com", "/slow/1500");
    assert_eq!(response.status, 504);
    assert_eq!(get(escgate.addr, "example.com", "/").status, 200);
}
