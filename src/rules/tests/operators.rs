//! One test per operator and syntax form.

use super::{eval, matches, Sample};

#[test]
fn bare_booleans() {
    assert!(matches("true"));
    assert!(!matches("false"));
    assert!(matches("ssl"));
    let mut plain = Sample::new();
    plain.tls = false;
    assert!(!eval("ssl", &plain));
    assert!(eval("not ssl", &plain));
}

#[test]
fn equality_both_spellings() {
    assert!(matches(r#"http.host eq "example.com""#));
    assert!(matches(r#"http.host == "example.com""#));
    assert!(!matches(r#"http.host eq "Example.com""#));
    assert!(matches(r#"http.host ne "other.com""#));
    assert!(matches(r#"http.host != "other.com""#));
    assert!(!matches(r#"http.host ne "example.com""#));
}

#[test]
fn ordering_on_strings_is_bytewise() {
    assert!(matches(r#"http.request.method lt "POST""#));
    assert!(matches(r#"http.request.method < "POST""#));
    assert!(matches(r#"http.request.method le "GET""#));
    assert!(matches(r#"http.request.method <= "GET""#));
    assert!(matches(r#"http.request.method gt "DELETE""#));
    assert!(matches(r#"http.request.method > "DELETE""#));
    assert!(matches(r#"http.request.method ge "GET""#));
    assert!(matches(r#"http.request.method >= "GET""#));
    assert!(!matches(r#"http.request.method gt "GET""#));
}

#[test]
fn ordering_on_integers() {
    let mut sample = Sample::new();
    sample.waf.score = Some(20);
    for (expression, expected) in [
        ("cf.waf.score eq 20", true),
        ("cf.waf.score == 21", false),
        ("cf.waf.score ne 21", true),
        ("cf.waf.score lt 21", true),
        ("cf.waf.score < 20", false),
        ("cf.waf.score le 20", true),
        ("cf.waf.score gt 19", true),
        ("cf.waf.score > 20", false),
        ("cf.waf.score ge 20", true),
        ("cf.waf.score >= 21", false),
        ("cf.waf.score gt -5", true),
        ("cf.waf.score in {1 5 20}", true),
        ("cf.waf.score in {1..19 21..99}", false),
        ("cf.waf.score in {10..30}", true),
    ] {
        assert_eq!(eval(expression, &sample), expected, "{expression}");
    }
}

#[test]
fn missing_values_compare_false() {
    // No WAF scores on this request: every comparison is false, negations true.
    for expression in [
        "cf.waf.score eq 0",
        "cf.waf.score ne 0",
        "cf.waf.score lt 100",
        "cf.waf.score.sqli ge 0",
        "cf.waf.score.xss in {0..100}",
        r#"http.request.headers["x-missing"][0] eq "a""#,
        r#"http.request.headers["x-missing"][0] ne "a""#,
        r#"http.request.headers["accept"][7] ne "a""#,
        r#"http.request.cookies["nope"][0] ne "a""#,
        r#"http.request.uri.args["nope"][0] ne "a""#,
        r#"len(http.request.headers["x-missing"]) eq 0"#,
        r#"starts_with(http.request.headers["x-missing"][0], "")"#,
        r#"any(http.request.headers["x-missing"][*] ne "a")"#,
        r#"all(http.request.headers["x-missing"][*] ne "a")"#,
    ] {
        assert!(!matches(expression), "{expression}");
    }
    assert!(matches("not cf.waf.score eq 0"));
    let mut no_ip = Sample::new();
    no_ip.src_ip = None;
    assert!(!eval("ip.src ne 1.2.3.4", &no_ip));
    assert!(!eval("ip.src in {0.0.0.0/0 ::/0}", &no_ip));
}

#[test]
fn absent_headers_read_as_empty_strings() {
    let sample = Sample {
        headers: http::HeaderMap::new(),
        query: None,
        ..Sample::new()
    };
    assert!(eval(r#"http.user_agent eq """#, &sample));
    assert!(eval(r#"http.cookie eq """#, &sample));
    assert!(eval(r#"http.request.uri.query eq """#, &sample));
    assert!(eval(r#"http.request.uri eq "/api/v1/users""#, &sample));
}

#[test]
fn contains_operator() {
    assert!(matches(r#"http.request.uri.path contains "/v1/""#));
    assert!(matches(r#"http.request.uri.path contains """#));
    assert!(!matches(r#"http.request.uri.path contains "/V1/""#));
    assert!(matches(r#"http.user_agent contains "Firefox/120""#));
}

#[test]
fn matches_operator_both_spellings() {
    assert!(matches(r#"http.request.uri.path matches "^/api/v[0-9]+/""#));
    assert!(matches(r#"http.request.uri.path ~ "users$""#));
    assert!(!matches(r#"http.request.uri.path ~ "^/API""#));
    assert!(matches(r#"http.request.uri.path matches r"^/api/v\d""#));
    assert!(matches(
        r###"http.request.uri.path matches r#"^/api/("|v)"#"###
    ));
}

#[test]
fn wildcard_is_case_insensitive_strict_is_not() {
    assert!(matches(r#"http.request.uri.path wildcard "/API/*""#));
    assert!(matches(
        r#"http.request.full_uri wildcard "https://*.com/*/users?*""#
    ));
    assert!(!matches(r#"http.request.uri.path wildcard "/api""#));
    assert!(matches(r#"http.request.uri.path wildcard "*""#));
    assert!(matches(
        r#"http.request.uri.path strict wildcard "/api/*/users""#
    ));
    assert!(!matches(
        r#"http.request.uri.path strict wildcard "/API/*""#
    ));
    let mut star = Sample::new();
    star.path = "/a*b".into();
    assert!(eval(
        r#"http.request.uri.path strict wildcard "/a\\*b""#,
        &star
    ));
    star.path = "/axb".into();
    assert!(!eval(
        r#"http.request.uri.path strict wildcard "/a\\*b""#,
        &star
    ));
    assert!(eval(
        r#"http.request.uri.path strict wildcard "/a*b""#,
        &star
    ));
}

#[test]
fn in_lists_of_strings() {
    assert!(matches(r#"http.request.method in {"GET" "HEAD"}"#));
    assert!(matches(r#"http.request.method in {"POST", "GET"}"#));
    assert!(!matches(r#"http.request.method in {"POST" "PUT"}"#));
    assert!(!matches(r#"http.request.method in {}"#));
}

#[test]
fn ip_comparisons_and_cidrs() {
    assert!(matches("ip.src eq 198.51.100.7"));
    assert!(matches("ip.src == 198.51.100.7"));
    assert!(matches("ip.src ne 198.51.100.8"));
    assert!(matches("ip.src in {10.0.0.0/8 198.51.100.0/24}"));
    assert!(!matches("ip.src in {10.0.0.0/8 2001:db8::/32}"));
    assert!(matches("ip.src in {198.51.100.7}"));
    let mut v6 = Sample::new();
    v6.src_ip = Some("2001:db8::42".parse().unwrap());
    assert!(eval("ip.src in {10.0.0.0/8 2001:db8::/32}", &v6));
    assert!(eval("ip.src eq 2001:db8::42", &v6));
    assert!(!eval("ip.src in {2001:db9::/32}", &v6));
    let mut mapped = Sample::new();
    mapped.src_ip = Some("::ffff:198.51.100.7".parse().unwrap());
    assert!(eval("ip.src eq 198.51.100.7", &mapped));
    assert!(eval("ip.src in {198.51.100.0/24}", &mapped));
}

#[test]
fn logical_operators_both_spellings() {
    for (expression, expected) in [
        ("true and false", false),
        ("true && true", true),
        ("false or true", true),
        ("false || false", false),
        ("true xor true", false),
        ("true ^^ false", true),
        ("not true", false),
        ("! false", true),
        ("!false", true),
        ("not not true", true),
    ] {
        assert_eq!(matches(expression), expected, "{expression}");
    }
}

#[test]
fn precedence_not_and_xor_or() {
    // not > and > xor > or.
    assert!(matches("true or true and false")); // true or (true and false)
    assert!(!matches("(true or true) and false"));
    assert!(matches("not false and true")); // (not false) and true
    assert!(!matches("not (false or true)"));
    assert!(matches("true xor false and false")); // true xor (false and false)
    assert!(matches("true or true xor true")); // true or (true xor true)
    assert!(!matches("(true or true) xor true"));
    assert!(matches("false xor true or false"));
    assert!(!matches("true xor true xor false xor false")); // left-assoc chain
}

#[test]
fn boolean_comparisons() {
    assert!(matches("ssl eq true"));
    assert!(matches("ssl ne false"));
    assert!(!matches("ssl == false"));
}

#[test]
fn header_map_access() {
    assert!(matches(
        r#"http.request.headers["accept"][0] eq "text/html""#
    ));
    assert!(matches(
        r#"http.request.headers["accept"][1] eq "application/json""#
    ));
    assert!(matches(
        r#"any(http.request.headers["accept"][*] contains "json")"#
    ));
    assert!(!matches(
        r#"all(http.request.headers["accept"][*] contains "json")"#
    ));
    assert!(matches(
        r#"all(http.request.headers["accept"][*] contains "/")"#
    ));
    // Keys are lowercase names: an uppercase key never matches.
    assert!(!matches(r#"any(http.request.headers["Accept"][*] ne "")"#));
    assert!(matches(
        r#"any(http.request.headers.names[*] eq "x-api-key")"#
    ));
    assert!(matches(
        r#"any(http.request.headers.values[*] eq "Secret-Key")"#
    ));
    assert!(matches(r#"len(http.request.headers["accept"]) eq 2"#));
    assert!(matches(r#"len(http.request.headers.names) eq 7"#));
}

#[test]
fn args_and_cookies_maps() {
    assert!(matches(r#"http.request.uri.args["id"][0] eq "5""#));
    assert!(matches(r#"http.request.uri.args["id"][1] eq "6""#));
    assert!(matches(r#"any(http.request.uri.args["name"][*] eq "Bob")"#));
    assert!(matches(r#"any(http.request.uri.args.names[*] eq "name")"#));
    assert!(matches(r#"any(http.request.uri.args.values[*] eq "6")"#));
    assert!(matches(r#"len(http.request.uri.args.names) eq 3"#));
    assert!(matches(r#"http.request.cookies["theme"][0] eq "dark""#));
    assert!(matches(r#"http.request.cookies["session"][0] eq "abc123""#));
    assert!(matches(r#"http.cookie eq "session=abc123; theme=dark""#));
}

#[test]
fn scalar_fields() {
    let mut sample = Sample::new();
    sample.header("cookie", "extra=1");
    sample.header("x-forwarded-for", "198.51.100.1");
    for expression in [
        r#"http.request.method eq "GET""#,
        r#"http.request.uri eq "/api/v1/users?id=5&id=6&name=Bob""#,
        r#"http.request.uri.path eq "/api/v1/users""#,
        r#"http.request.uri.query eq "id=5&id=6&name=Bob""#,
        r#"http.request.full_uri eq "https://example.com/api/v1/users?id=5&id=6&name=Bob""#,
        r#"http.request.version eq "HTTP/1.1""#,
        r#"http.user_agent eq "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0""#,
        r#"http.referer eq "https://www.example.org/start""#,
        r#"http.x_forwarded_for eq "203.0.113.1, 198.51.100.1""#,
        r#"http.cookie eq "session=abc123; theme=dark; extra=1""#,
        r#"http.request.cookies["extra"][0] eq "1""#,
    ] {
        assert!(eval(expression, &sample), "{expression}");
    }
    sample.tls = false;
    assert!(eval(
        r#"http.request.full_uri wildcard "http://example.com/*""#,
        &sample
    ));
}

#[test]
fn string_escapes_and_raw_strings() {
    let mut sample = Sample::new();
    sample.path = r#"/a"b\c"#.into();
    assert!(eval(r#"http.request.uri.path eq "/a\"b\\c""#, &sample));
    assert!(eval(r#"http.request.uri.path eq "/a\x22b\x5cc""#, &sample));
    assert!(eval(r##"http.request.uri.path eq r#"/a"b\c"#"##, &sample));
}

#[test]
fn filter_is_send_sync_clone_debug() {
    fn assert_traits<T: Send + Sync + Clone + std::fmt::Debug>() {}
    assert_traits::<super::Filter>();
    let filter = super::Filter::compile(
        r#"http.host eq "a" and cf.waf.score gt 1"#,
        &super::Limits::default(),
    )
    .unwrap();
    assert_eq!(filter.source(), r#"http.host eq "a" and cf.waf.score gt 1"#);
    assert_eq!(filter.fields(), ["cf.waf.score", "http.host"]);
    assert!(format!("{filter:?}").contains("http.host"));
}

#[test]
fn longest_chains_within_the_default_limit_compile_and_evaluate() {
    for (op, expected) in [("or", true), ("and", true), ("xor", false)] {
        let clause = "true";
        let count = 4096 / (clause.len() + op.len() + 2);
        let count = count - count % 2;
        let expression = vec![clause; count].join(&format!(" {op} "));
        assert!(expression.len() <= 4096);
        assert_eq!(
            matches(&expression),
            expected,
            "{count} clauses joined by {op}"
        );
    }
}
