//! One test per function.

use super::{eval, matches, Sample};

#[test]
fn lower_and_upper() {
    assert!(matches(
        r#"lower(http.request.headers["x-api-key"][0]) eq "secret-key""#
    ));
    assert!(matches(r#"upper(http.request.method) eq "GET""#));
    assert!(matches(r#"upper(http.host) eq "EXAMPLE.COM""#));
    // ASCII only: other bytes pass through.
    let mut sample = Sample::new();
    sample.path = "/ÄB".into();
    assert!(eval(r#"lower(http.request.uri.path) eq "/Äb""#, &sample));
}

#[test]
fn len_of_strings_and_arrays() {
    assert!(matches("len(http.host) eq 11"));
    assert!(matches(r#"len("") eq 0"#));
    assert!(matches(r#"len(http.request.uri.args["id"]) eq 2"#));
}

#[test]
fn starts_with_and_ends_with() {
    assert!(matches(r#"starts_with(http.request.uri.path, "/api/")"#));
    assert!(!matches(r#"starts_with(http.request.uri.path, "/API/")"#));
    assert!(matches(r#"ends_with(http.request.uri.path, "/users")"#));
    assert!(!matches(r#"ends_with(http.request.uri.path, "/user")"#));
    assert!(matches(r#"not ends_with(http.request.uri.path, ".php")"#));
}

#[test]
fn any_and_all_with_transformed_elements() {
    assert!(matches(
        r#"any(lower(http.request.headers.values[*])[*] eq "secret-key")"#
    ));
    assert!(matches(
        r#"any(lower(http.request.headers.values[*]) eq "secret-key")"#
    ));
    assert!(matches(
        r#"all(http.request.headers["accept"][*] contains "/" and http.request.headers["accept"][*] ne "")"#
    ));
    assert!(matches(
        r#"any(starts_with(http.request.headers["accept"][*], "application/"))"#
    ));
    assert!(!matches(
        r#"any(ends_with(http.request.headers["accept"][*], "xml"))"#
    ));
    assert!(matches(
        r#"any(len(http.request.headers["accept"][*]) gt 10)"#
    ));
}

#[test]
fn concat_joins_strings() {
    assert!(matches(
        r#"concat(http.host, http.request.uri.path) eq "example.com/api/v1/users""#
    ));
    assert!(matches(r#"concat("a") eq "a""#));
    assert!(matches(r#"concat("a", "b", "c") eq "abc""#));
    assert!(!matches(
        r#"concat(http.request.headers["x-missing"][0], "a") eq "a""#
    ));
}

#[test]
fn url_decode_plain_recursive_unicode() {
    let mut sample = Sample::new();
    sample.path = "/a%20b+c%2541%zz%u0041".into();
    assert!(eval(
        r#"url_decode(http.request.uri.path) eq "/a b c%41%zz%u0041""#,
        &sample
    ));
    assert!(eval(
        r#"url_decode(http.request.uri.path, "r") eq "/a b cA%zz%u0041""#,
        &sample
    ));
    assert!(eval(
        r#"url_decode(http.request.uri.path, "u") eq "/a b c%41%zzA""#,
        &sample
    ));
    assert!(eval(
        r#"url_decode(http.request.uri.path, "ru") eq "/a b cA%zzA""#,
        &sample
    ));
    sample.path = "/%E4%BD%A0".into();
    assert!(eval(
        r#"url_decode(http.request.uri.path) eq "/你""#,
        &sample
    ));
    assert!(eval(
        r#"url_decode(http.request.uri.path) eq "/\xe4\xbd\xa0""#,
        &sample
    ));
}

#[test]
fn to_string_of_int_bool_ip() {
    let mut sample = Sample::new();
    sample.waf.score = Some(42);
    assert!(eval(r#"to_string(cf.waf.score) eq "42""#, &sample));
    assert!(matches(r#"to_string(ssl) eq "true""#));
    assert!(matches(r#"to_string(ip.src) eq "198.51.100.7""#));
    assert!(!matches(r#"to_string(cf.waf.score) eq """#));
}

#[test]
fn lookup_json_string_paths() {
    let mut sample = Sample::new();
    sample.header(
        "x-meta",
        r#"{"user":{"name":"ann","roles":["admin","dev"]},"n":5}"#,
    );
    let meta = r#"http.request.headers["x-meta"][0]"#;
    assert!(eval(
        &format!(r#"lookup_json_string({meta}, "user", "name") eq "ann""#),
        &sample
    ));
    assert!(eval(
        &format!(r#"lookup_json_string({meta}, "user", "roles", 1) eq "dev""#),
        &sample
    ));
    // Not a string, absent, or not JSON: missing, so the comparison is false either way.
    for path in [r#""n""#, r#""user""#, r#""nope""#, r#""user", "roles", 9"#] {
        let expression = format!(r#"lookup_json_string({meta}, {path}) ne "x""#);
        assert!(!eval(&expression, &sample), "{expression}");
    }
    assert!(!matches(r#"lookup_json_string(http.host, "a") ne "x""#));
}

#[test]
fn regex_replace_first_match_with_groups() {
    assert!(matches(
        r#"regex_replace(http.request.uri.path, "^/api/(v[0-9]+)/(.*)$", "/${2}/${1}") eq "/users/v1""#
    ));
    assert!(matches(
        r#"regex_replace(http.request.uri.path, "/x", "/y") eq "/api/v1/users""#
    ));
    assert!(matches(
        r#"regex_replace("/a/a/a", "/a", "/b") eq "/b/a/a""#
    ));
}

#[test]
fn wildcard_replace_whole_match() {
    assert!(matches(
        r#"wildcard_replace(http.request.full_uri, "https://*.com/*/*", "https://new.net/${1}/${2}/${3}") eq "https://new.net/example/api/v1/users?id=5&id=6&name=Bob""#
    ));
    // Case-insensitive by default, case-sensitive with "s".
    assert!(matches(
        r#"wildcard_replace(http.request.uri.path, "/API/*", "/x/${1}") eq "/x/v1/users""#
    ));
    assert!(matches(
        r#"wildcard_replace(http.request.uri.path, "/API/*", "/x/${1}", "s") eq "/api/v1/users""#
    ));
    assert!(matches(
        r#"wildcard_replace(http.request.uri.path, "/nomatch", "/x") eq "/api/v1/users""#
    ));
}

#[test]
fn case_folded_comparisons_keep_lower_and_upper_semantics() {
    let mut sample = Sample::new();
    sample.path = "/WP-Login.PHP".into();
    for (expression, expected) in [
        (r#"lower(http.request.uri.path) eq "/wp-login.php""#, true),
        (r#"lower(http.request.uri.path) eq "/WP-login.php""#, false),
        (r#"lower(http.request.uri.path) ne "/wp-login.php""#, false),
        (r#"lower(http.request.uri.path) ne "/WP-Login.PHP""#, true),
        (r#"lower(http.request.uri.path) contains "login.php""#, true),
        (r#"lower(http.request.uri.path) contains "Login""#, false),
        (r#"upper(http.request.uri.path) eq "/WP-LOGIN.PHP""#, true),
        (r#"upper(http.request.uri.path) ne "/WP-LOGIN.PHP""#, false),
        (
            r#"lower(http.request.headers["x-missing"][0]) ne "a""#,
            false,
        ),
    ] {
        assert_eq!(eval(expression, &sample), expected, "{expression}");
    }
}
