//! When ESC is disabled for a request (zone flag, or the `disable_esc` secret cookie) no
//! customization runs, the debug header says why, and the secret never reaches the origin.

mod common;

use common::{get, request, Escgate, TestOrigin, ZONE_ID};
use escgate::state::{Change, EscEdit, SecretEdit};

fn edit_zone(escgate: &Escgate, always: Option<bool>, secret: SecretEdit) {
    let change = Change::SetZoneEsc {
        zone_id: ZONE_ID.to_string(),
        edit: EscEdit { always, secret },
    };
    escgate.writer.apply(change).expect("tenant state write");
}

#[test]
fn disabled_zone_and_secret_cookie_skip_every_customization() {
    let origin = TestOrigin::start();
    let escgate = Escgate::with_zone(
        origin.addr,
        r#"
debug_header = true
[[zones.esc]]
request_headers = { set = { "x-esc" = "1" } }
response_headers = { set = { "x-esc" = "1" } }
"#,
    );
    let response = get(escgate.addr, "example.com", "/");
    assert_eq!(response.header("escgate-esc"), Some("applied"));
    assert_eq!(response.echo().header("x-esc"), Some("1"));

    edit_zone(&escgate, Some(true), SecretEdit::Keep);
    let response = get(escgate.addr, "example.com", "/");
    assert_eq!(
        response.header("escgate-esc"),
        Some("disabled; reason=zone_always")
    );
    assert_eq!(response.header("x-esc"), None);
    assert_eq!(response.echo().header("x-esc"), None);

    edit_zone(&escgate, Some(false), SecretEdit::Set("s3cr3t".into()));
    let with_cookie = [
        ("host", "example.com"),
        ("cookie", "a=1; disable_esc=s3cr3t"),
    ];
    let response = request(escgate.addr, "GET", "/", &with_cookie, b"");
    assert_eq!(
        response.header("escgate-esc"),
        Some("disabled; reason=zone_secret")
    );
    let echo = response.echo();
    assert_eq!(echo.header("x-esc"), None);
    assert_eq!(
        echo.header("cookie"),
        Some("a=1"),
        "the secret is not forwarded"
    );
    let wrong = [("host", "example.com"), ("cookie", "disable_esc=guess")];
    let response = request(escgate.addr, "GET", "/", &wrong, b"");
    assert_eq!(response.header("escgate-esc"), Some("applied"));
    assert_eq!(
        response.echo().header("cookie"),
        None,
        "a wrong secret is stripped too"
    );
}
