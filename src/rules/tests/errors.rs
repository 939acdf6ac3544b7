//! Every class of compile error: message and position.

use super::{error, error_with};
use crate::rules::Limits;

fn message_at(expression: &str) -> String {
    error(expression).to_string()
}

#[test]
fn type_mismatch_on_the_right_names_the_operator() {
    assert_eq!(
        message_at(r#"http.host eq 5"#),
        "expected a string on the right of 'eq' at 13"
    );
    assert_eq!(
        message_at(r#"cf.waf.score gt "a""#),
        "expected an integer on the right of 'gt' at 16"
    );
    assert_eq!(
        message_at(r#"ip.src eq "1.2.3.4""#),
        "expected an IP address on the right of 'eq' at 10"
    );
    assert_eq!(
        message_at(r#"ssl eq "yes""#),
        "expected a boolean on the right of 'eq' at 7"
    );
    assert_eq!(
        message_at(r#"http.host in "a""#),
        "expected a list { … } on the right of 'in' at 13"
    );
    assert_eq!(
        message_at(r#"http.host in {"a" 1}"#),
        "expected only strings in the list at 13"
    );
}

#[test]
fn operators_not_defined_for_a_type() {
    assert_eq!(
        message_at("cf.waf.score contains 1"),
        "operator 'contains' is not defined for integers at 13"
    );
    assert_eq!(
        message_at("ip.src lt 1.2.3.4"),
        "operator 'lt' is not defined for IP addresses at 7"
    );
    assert_eq!(
        message_at("ssl gt true"),
        "operator 'gt' is not defined for booleans at 4"
    );
    assert_eq!(
        message_at("ip.src eq 10.0.0.0/8").split(" at ").next(),
        Some("a CIDR range is only allowed in a list after 'in', such as ip.src in { 10.0.0.0/8 }")
    );
}

#[test]
fn unknown_fields_and_functions_are_named() {
    assert_eq!(
        message_at(r#"http.hots eq "a""#),
        "unknown field 'http.hots' at 0"
    );
    assert_eq!(
        message_at(r#"true and lowercase(http.host) eq "a""#),
        "unknown function 'lowercase' at 9"
    );
}

#[test]
fn non_boolean_expressions_are_rejected() {
    assert_eq!(
        message_at("http.host"),
        "expected a boolean expression, found a string at 0"
    );
    assert_eq!(
        message_at("http.host and true"),
        "'and' needs boolean operands, found a string at 0"
    );
    assert_eq!(
        message_at("not cf.waf.score"),
        "'not' needs boolean operands, found an integer at 4"
    );
    assert_eq!(
        message_at(r#"http.request.headers["a"][*] eq "b""#),
        "a comparison on [*] gives an array of booleans: wrap it in any() or all() at 0"
    );
    assert_eq!(
        message_at(r#"http.request.headers eq "b""#),
        "cannot compare a map of string arrays: pick an element with [0] or [*] at 0"
    );
}

#[test]
fn function_argument_errors() {
    assert_eq!(
        message_at("lower(1) eq \"1\""),
        "lower() expects a string as argument 1, found an integer at 6"
    );
    assert_eq!(
        message_at("starts_with(http.host)"),
        "starts_with() takes 2 arguments, got 1 at 0"
    );
    assert_eq!(
        message_at("concat() eq \"\""),
        "concat() takes at least 1 argument, got 0 at 0"
    );
    assert_eq!(
        message_at(r#"any(http.host eq "a")"#).split(',').next(),
        Some("any() expects an array of booleans")
    );
    assert_eq!(
        message_at(r#"regex_replace(http.host, http.host, "x") eq "a""#),
        "regex_replace() expects a literal string regex as argument 2 at 25"
    );
    assert_eq!(
        message_at(r#"regex_replace(http.host, "(a)", "${2}") eq "a""#),
        "replacement refers to group ${2} but the pattern has 1 at 32"
    );
    assert_eq!(
        message_at(r#"url_decode(http.host, "x") eq "a""#),
        "url_decode() option 'x' is unknown (allowed: r, u) at 22"
    );
    assert_eq!(
        message_at(r#"wildcard_replace(http.host, "*", "x", "i") eq "a""#),
        "wildcard_replace() flags may only contain 's' (case-sensitive) at 38"
    );
    assert_eq!(
        message_at(r#"lookup_json_string(http.host, -1) eq "a""#),
        "lookup_json_string() expects a literal string key or non-negative integer index as argument 2 at 30"
    );
    assert_eq!(
        message_at("to_string(http.host) eq \"a\""),
        "to_string() expects an integer, a boolean or an IP address as argument 1, found a string at 10"
    );
}

#[test]
fn index_errors() {
    assert_eq!(
        message_at(r#"http.request.headers[0][0] eq "a""#),
        "a map is indexed with a string key, such as [\"name\"] at 20"
    );
    assert_eq!(
        message_at(r#"http.request.headers.names["a"] eq "a""#),
        "an array is indexed with an integer or [*] at 26"
    );
    assert_eq!(
        message_at(r#"http.host[0] eq "a""#),
        "cannot index a string at 9"
    );
    assert_eq!(
        message_at(r#"any(http.request.headers.names[*] eq http.request.headers.values[*])"#)
            .split(" at ")
            .next(),
        Some("expected a literal value on the right of 'eq', found 'http.request.headers.values'")
    );
    assert_eq!(
        message_at(
            r#"any(starts_with(http.request.headers.names[*], http.request.headers.values[*]))"#
        ),
        "one expression cannot range over two different [*] arrays at 47"
    );
}

#[test]
fn syntax_errors_point_at_the_token() {
    assert_eq!(message_at(""), "empty expression at 0");
    assert_eq!(
        message_at("http.host eq"),
        "expected a literal value on the right of 'eq', found end of expression at 12"
    );
    assert_eq!(
        message_at("(true"),
        "expected ')', found end of expression at 5"
    );
    assert_eq!(
        message_at("true true"),
        "unexpected 'true' after the end of the expression at 5"
    );
    assert_eq!(message_at("http.host eq \"a"), "unterminated string at 13");
    assert_eq!(
        message_at(r#"http.host eq "\q""#),
        "invalid escape in string (allowed: \\\" \\\\ \\xHH) at 14"
    );
    assert_eq!(
        message_at("http.host # 1"),
        "unexpected character '#' at 10"
    );
    assert_eq!(
        message_at("http.host strict \"a\""),
        "expected 'wildcard' after 'strict', found string at 17"
    );
    assert_eq!(
        message_at("and"),
        "expected a field, function or literal, found 'and' at 0"
    );
    assert_eq!(
        message_at("ip.src in {1.2.3.4/33}"),
        "invalid CIDR prefix length (0 to 32) at 18"
    );
    assert_eq!(
        message_at("cf.waf.score in {5..1}"),
        "empty range 5..1 at 17"
    );
    assert_eq!(
        message_at("cf.waf.score eq 99999999999999999999"),
        "integer '99999999999999999999' out of range at 16"
    );
    assert_eq!(
        message_at("ip.src eq 1.2.3"),
        "invalid number or IP address '1.2.3' at 10"
    );
    assert_eq!(
        message_at(r#"http.host eq r#"a""#),
        "unterminated raw string at 13"
    );
    assert_eq!(
        message_at(r#"http.host wildcard r"a\b""#),
        "invalid escape in wildcard pattern (allowed: \\* and \\\\) at 19"
    );
}

#[test]
fn regex_errors_and_size_cap() {
    assert_eq!(
        message_at(r#"http.host matches "(a""#),
        "invalid regex: unclosed group at 18"
    );
    let small = Limits {
        max_regex_size: 1000,
        ..Limits::default()
    };
    assert_eq!(
        error_with(r#"http.host matches r"\w{500}""#, &small).to_string(),
        "regex too large: its compiled form exceeds the limit of 1000 bytes at 18"
    );
}

#[test]
fn length_and_depth_caps() {
    let limits = Limits {
        max_len: 20,
        max_depth: 4,
        ..Limits::default()
    };
    assert_eq!(
        error_with("true or true or true or true", &limits).to_string(),
        "expression is 28 bytes, longer than the limit of 20 bytes at 20"
    );
    assert!(crate::rules::Filter::compile("((true))", &limits).is_ok());
    assert_eq!(
        error_with("((((true))))", &limits).to_string(),
        "expression nested deeper than 4 levels at 4"
    );
    assert_eq!(
        error_with("not not not not x", &limits).to_string(),
        "expression nested deeper than 4 levels at 16"
    );
    assert_eq!(
        error_with("lower(lower(lower(", &limits).to_string(),
        "expression nested deeper than 4 levels at 12"
    );
    // The default depth cap turns a deeply nested attack into an error, not a stack overflow.
    let deep = format!("{}true{}", "(".repeat(2000), ")".repeat(2000));
    let e = error_with(
        &deep,
        &Limits {
            max_len: 1 << 20,
            ..Limits::default()
        },
    );
    assert!(e.message.contains("nested deeper than 64"), "{e}");
}
