//! Expressions from Cloudflare's Rules language documentation (operators, functions, fields
//! pages and examples) with their expected results against three sample requests.

use super::{eval, Sample};

/// The default sample: `GET https://example.com/api/v1/users?id=5&id=6&name=Bob`.
fn api() -> Sample {
    Sample::new()
}

/// `POST http://www.example.com/wp-login.php` from 203.0.113.50 with a WAF score of 15.
fn login() -> Sample {
    let mut sample = Sample::new();
    sample.method = "POST".into();
    sample.host = "www.example.com".into();
    sample.path = "/wp-login.php".into();
    sample.query = None;
    sample.tls = false;
    sample.src_ip = Some("203.0.113.50".parse().unwrap());
    sample.waf.score = Some(15);
    sample.waf.score_sqli = Some(90);
    sample.header("content-type", "application/json");
    sample
}

/// `GET https://www.cloudflare.com/articles/2008/` from an IPv6 client.
fn articles() -> Sample {
    let mut sample = Sample::new();
    sample.host = "www.cloudflare.com".into();
    sample.path = "/articles/2008/".into();
    sample.query = Some("expand=true".into());
    sample.src_ip = Some("2400:cb00::1".parse().unwrap());
    sample
}

#[test]
fn documented_expressions_against_sample_requests() {
    // (expression, api, login, articles)
    let table: &[(&str, bool, bool, bool)] = &[
        (
            r#"http.request.uri.path eq "/articles/2008/""#,
            false,
            false,
            true,
        ),
        ("ip.src ne 203.0.113.0", true, true, true),
        ("cf.waf.score lt 10", false, false, false),
        ("cf.waf.score le 20", false, true, false),
        ("cf.waf.score gt 25", false, false, false),
        ("cf.waf.score ge 60", false, false, false),
        (
            r#"http.request.uri.path contains "/articles/""#,
            false,
            false,
            true,
        ),
        (
            r#"http.request.uri.path wildcard "/articles/*""#,
            false,
            false,
            true,
        ),
        (
            r#"http.request.uri.path strict wildcard "/AdminTeam/*""#,
            false,
            false,
            false,
        ),
        (
            r#"http.request.uri.path matches "^/articles/200[7-8]/$""#,
            false,
            false,
            true,
        ),
        (
            "ip.src in { 203.0.113.0/24 2400:cb00::/32 }",
            false,
            true,
            true,
        ),
        (
            r#"lower(http.host) == "www.cloudflare.com""#,
            false,
            false,
            true,
        ),
        (
            r#"lower(http.request.uri.path) contains "/wp-login.php""#,
            false,
            true,
            false,
        ),
        (
            r#"ends_with(http.request.uri.path, ".html")"#,
            false,
            false,
            false,
        ),
        (
            r#"all(http.request.headers["content-type"][*] == "application/json")"#,
            false,
            true,
            false,
        ),
        (
            r#"any(http.request.headers["accept"][*] contains "json")"#,
            true,
            true,
            true,
        ),
        (
            r#"http.host eq "www.example.com" and not ip.src in {203.0.113.0/24}"#,
            false,
            false,
            false,
        ),
        (
            r#"http.host eq "www.example.com" or http.host eq "www.cloudflare.com""#,
            false,
            true,
            true,
        ),
        (
            r#"not http.request.method in {"GET" "HEAD"}"#,
            false,
            true,
            false,
        ),
        (
            r#"http.request.method eq "POST" and cf.waf.score.sqli ge 80"#,
            false,
            true,
            false,
        ),
        (
            r#"(http.request.method eq "POST" or ssl) and http.request.uri.path ne "/""#,
            true,
            true,
            true,
        ),
        (
            r#"http.request.full_uri wildcard "https://*.cloudflare.com/*""#,
            false,
            false,
            true,
        ),
        (
            r#"starts_with(http.request.uri.path, "/blog")"#,
            false,
            false,
            false,
        ),
        (
            r#"ends_with(http.request.uri.path, ".php")"#,
            false,
            true,
            false,
        ),
        (
            r#"len(http.request.uri.args["id"]) gt 1"#,
            true,
            false,
            false,
        ),
        (
            r#"http.request.uri.args["expand"][0] eq "true""#,
            false,
            false,
            true,
        ),
        (
            r#"any(http.request.uri.args.names[*] == "id")"#,
            true,
            false,
            false,
        ),
        (
            r#"http.request.cookies["theme"][0] eq "dark""#,
            true,
            true,
            true,
        ),
        (
            r#"concat("https://", http.host) eq "https://www.cloudflare.com""#,
            false,
            false,
            true,
        ),
        (
            r#"wildcard_replace(http.request.full_uri, "https://*.cloudflare.com/*/*", "https://cloudflare.com/${1}/${2}/${3}") eq "https://cloudflare.com/www/articles/2008/?expand=true""#,
            false,
            false,
            true,
        ),
        (
            r#"regex_replace(http.request.uri.path, "^/articles/([0-9]+)/$", "/archive/${1}") eq "/archive/2008""#,
            false,
            false,
            true,
        ),
        ("true", true, true, true),
        ("false", false, false, false),
    ];
    let samples = [api(), login(), articles()];
    for (expression, on_api, on_login, on_articles) in table {
        let results = [
            eval(expression, &samples[0]),
            eval(expression, &samples[1]),
            eval(expression, &samples[2]),
        ];
        assert_eq!(results, [*on_api, *on_login, *on_articles], "{expression}");
    }
}
