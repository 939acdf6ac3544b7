//! The README walkthrough on the shipped config: escgate with its built-in demo origin.

mod common;

use common::{free_addr, get, request, wait_listening, Escgate};
use serde_json::Value;

/// The shipped config with its fixed ports swapped for free ones.
fn start_shipped() -> Escgate {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/escgate.toml"))
        .unwrap();
    let demo = free_addr().to_string();
    let text = text
        .replace("127.0.0.1:8080", "@LISTEN@")
        .replace("127.0.0.1:8081", "@ADMIN@")
        .replace("127.0.0.1:8082", &demo)
        .replace("var/state.json", "@STATE@");
    // Only the proxy is waited for by `start`; wait for the demo origin too.
    let escgate = Escgate::start(&text.replace("admin_listen = \"@ADMIN@\"\n", ""));
    wait_listening(demo.parse().unwrap());
    escgate
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).expect("demo origin answers JSON")
}

#[test]
fn walkthrough_api_request_shows_esc_at_work() {
    let escgate = start_shipped();
    let response = get(escgate.addr, "example.com", "/api/x?y=1");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("x-frame-options"), Some("DENY"));
    assert_eq!(response.header("escgate-esc"), Some("applied"));
    assert!(response
        .header("set-cookie")
        .unwrap()
        .starts_with("promo=1"));
    let echo = json(&response.body);
    assert_eq!(echo["uri"], "/v2/x?y=1");
    assert_eq!(echo["headers"]["host"], "api.internal");
    assert_eq!(echo["headers"]["x-api-version"], "2");
    assert_eq!(echo["headers"]["x-escgate-zone"], "example.com");
    assert_eq!(echo["headers"]["via"], "1.1 escgate");
}

#[test]
fn walkthrough_redirect_errors_and_other_zone() {
    let escgate = start_shipped();
    let response = get(escgate.addr, "www.example.com", "/old?q=1");
    assert_eq!(response.status, 301);
    assert_eq!(
        response.header("location"),
        Some("https://www.example.com/new?q=1")
    );

    let response = get(escgate.addr, "example.com", "/status/503");
    assert_eq!(response.status, 503);
    assert!(response.text().contains("Sorry"));

    let response = get(escgate.addr, "example.com", "/status/404");
    assert_eq!(
        (response.status, response.header("location")),
        (302, Some("/"))
    );

    let headers = [("host", "example.com"), ("accept-encoding", "gzip")];
    let response = request(escgate.addr, "GET", "/page", &headers, b"");
    assert_eq!(response.header("content-encoding"), Some("gzip"));
    let response = request(escgate.addr, "GET", "/raw/file", &headers, b"");
    assert_eq!(response.header("content-encoding"), None);

    let response = get(escgate.addr, "static.example.com", "/api/x");
    let echo = json(&response.body);
    assert_eq!(
        echo["uri"], "/api/x",
        "the longer zone name wins and has no ESC"
    );
    assert_eq!(response.header("escgate-esc"), None);

    assert_eq!(get(escgate.addr, "example.net", "/").status, 404);
}
