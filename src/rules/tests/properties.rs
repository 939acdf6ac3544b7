//! Property tests: the parser never panics, and printing a tree then parsing it gives the same
//! tree back.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::Sample;
use crate::rules::ast::{CompareOp, Expr, Index, ListItem, Literal, LogicalOp, Rhs, Span, Value};
use crate::rules::parser::KEYWORDS;
use crate::rules::{parse, Filter, Limits};

fn roomy() -> Limits {
    Limits {
        max_len: 1 << 20,
        max_depth: 1000,
        ..Limits::default()
    }
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "http.host",
            "http.request.uri.path",
            "http.request.headers",
            "cf.waf.score",
            "ip.src",
            "ssl",
            "lower",
            "any",
        ])
        .prop_map(String::from),
        "[a-z_][a-z0-9_]{0,5}(\\.[a-z_][a-z0-9_]{0,5}){0,3}",
    ]
    .prop_filter("keywords are not names", |n| {
        !KEYWORDS.contains(&n.as_str())
    })
}

fn ip() -> impl Strategy<Value = (IpAddr, Option<u8>)> {
    prop_oneof![
        (any::<u32>(), prop::option::of(0u8..=32))
            .prop_map(|(a, p)| (IpAddr::V4(Ipv4Addr::from(a)), p)),
        (any::<u128>(), prop::option::of(0u8..=128))
            .prop_map(|(a, p)| (IpAddr::V6(Ipv6Addr::from(a)), p)),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Literal::Str),
        any::<i64>().prop_map(Literal::Int),
        any::<bool>().prop_map(Literal::Bool),
        ip().prop_map(|(a, p)| Literal::Ip(a, p)),
    ]
}

fn compare_op() -> impl Strategy<Value = CompareOp> {
    prop::sample::select(vec![
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
        CompareOp::Contains,
        CompareOp::Matches,
        CompareOp::Wildcard,
        CompareOp::StrictWildcard,
        CompareOp::In,
    ])
}

fn rhs() -> impl Strategy<Value = Rhs> {
    let item = prop_oneof![
        literal().prop_map(ListItem::Literal),
        (0i64..1000, 0i64..1000).prop_map(|(a, b)| ListItem::Range(a, a + b)),
    ];
    prop_oneof![
        literal().prop_map(|l| Rhs::Literal(l, Span(0))),
        prop::collection::vec(item, 0..4).prop_map(|items| Rhs::List(items, Span(0))),
    ]
}

fn index() -> impl Strategy<Value = Index> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..6).prop_map(Index::Key),
        any::<u32>().prop_map(Index::Position),
        Just(Index::Each),
    ]
}

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        name().prop_map(|n| Value::Field(n, Span(0))),
        literal().prop_map(|l| Value::Literal(l, Span(0))),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        leaf_value().prop_map(Expr::Value),
        (leaf_value(), compare_op(), rhs()).prop_map(|(lhs, op, rhs)| Expr::Compare {
            lhs,
            op,
            rhs,
            span: Span(0)
        }),
    ];
    leaf.prop_recursive(5, 48, 3, |inner| {
        let value = prop_oneof![
            leaf_value(),
            (name(), prop::collection::vec(inner.clone(), 0..3)).prop_map(|(name, args)| {
                Value::Call {
                    name,
                    args,
                    span: Span(0),
                }
            }),
        ]
        .prop_recursive(2, 4, 1, |base| {
            (base, index()).prop_map(|(base, index)| Value::Index {
                base: Box::new(base),
                index,
                span: Span(0),
            })
        });
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(Box::new(e), Span(0))),
            (
                prop::sample::select(vec![LogicalOp::And, LogicalOp::Xor, LogicalOp::Or]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, lhs, rhs)| Expr::Logical {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                    span: Span(0)
                }),
            (value.clone(), compare_op(), rhs()).prop_map(|(lhs, op, rhs)| Expr::Compare {
                lhs,
                op,
                rhs,
                span: Span(0)
            }),
            value.prop_map(Expr::Value),
        ]
    })
}

/// Text made of the language's own pieces, so random input reaches deep into the parser.
fn token_soup() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "http.host",
        "http.request.headers",
        "http.request.uri.args",
        "ip.src",
        "cf.waf.score",
        "ssl",
        "lower(",
        "any(",
        "all(",
        "len(",
        "concat(",
        "url_decode(",
        "regex_replace(",
        "wildcard_replace(",
        "lookup_json_string(",
        "to_string(",
        "starts_with(",
        "(",
        ")",
        "[",
        "]",
        "[*]",
        "[0]",
        "[\"a\"]",
        "{",
        "}",
        ",",
        "..",
        " eq ",
        " == ",
        " ne ",
        " lt ",
        " in ",
        " contains ",
        " matches ",
        " ~ ",
        " wildcard ",
        " strict wildcard ",
        " and ",
        " && ",
        " or ",
        " xor ",
        " not ",
        "!",
        "\"a*\"",
        "\"(\"",
        "r#\"x\"#",
        "r\"",
        "\"\\x4\"",
        "1",
        "-2",
        "1..5",
        "10.0.0.0/8",
        "::1",
        "2001:db8::/129",
        "true",
        "false",
        " ",
        "\"",
        "\\",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_of_print_is_identity(ast in expr()) {
        let printed = ast.to_string();
        let reparsed = parse(&printed, &roomy());
        prop_assert_eq!(reparsed.as_ref().ok(), Some(&ast), "printed: {} ({:?})", printed, reparsed);
    }

    #[test]
    fn compile_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = Filter::compile(&text, &Limits::default());
    }

    #[test]
    fn compile_and_eval_never_panic_on_token_soup(text in token_soup()) {
        if let Ok(filter) = Filter::compile(&text, &Limits::default()) {
            filter.matches(&Sample::new().view());
            // Whatever parses also prints back to an equal tree.
            let ast = parse(&text, &Limits::default()).unwrap();
            prop_assert_eq!(parse(&ast.to_string(), &roomy()).ok(), Some(ast));
        }
    }

    #[test]
    fn compile_and_eval_never_panic_on_generated_trees(ast in expr()) {
        if let Ok(filter) = Filter::compile(&ast.to_string(), &roomy()) {
            filter.matches(&Sample::new().view());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The linear wildcard matcher agrees with the regex form used by `wildcard_replace`.
    #[test]
    fn wildcard_matcher_agrees_with_its_regex(
        pattern in "[abA*]{0,7}",
        value in "[abAB]{0,9}",
        case_sensitive in any::<bool>(),
    ) {
        use crate::rules::wildcard::{to_regex, WildcardPattern};
        let matcher = WildcardPattern::new(pattern.as_bytes(), case_sensitive).unwrap();
        let regex = to_regex(pattern.as_bytes(), case_sensitive, 1 << 20).unwrap().unwrap();
        prop_assert_eq!(
            matcher.matches(value.as_bytes()),
            regex.is_match(value.as_bytes()),
            "pattern {:?} value {:?}", pattern, value
        );
    }
}
