//! Page rule URL patterns (`*example.com/images/*`) as Rules language expressions, so the
//! migration can scope skip and execute rules to the URLs a page rule covered.

/// The expression matching what the page rule pattern matched: optional scheme (`ssl`), host
/// (`http.host`), path (`http.request.uri.path`) and query (`http.request.uri.query`); `*` matches
/// any run of characters, as in page rules.
pub fn pattern_expression(pattern: &str) -> String {
    let (scheme, rest) = if let Some(rest) = pattern.strip_prefix("https://") {
        (Some(true), rest)
    } else if let Some(rest) = pattern.strip_prefix("http://") {
        (Some(false), rest)
    } else {
        (None, pattern)
    };
    let (host, path_and_query) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let mut parts = Vec::new();
    match scheme {
        Some(true) => parts.push("ssl".to_string()),
        Some(false) => parts.push("not ssl".to_string()),
        None => {}
    }
    parts.extend(field_condition("http.host", &host.to_ascii_lowercase()));
    // Every path starts with `/`, so `/*` constrains nothing.
    if path != "/*" {
        parts.extend(field_condition("http.request.uri.path", path));
    }
    if let Some(query) = query {
        parts.extend(field_condition("http.request.uri.query", query));
    }
    if parts.is_empty() {
        return "true".into();
    }
    let joined = parts.join(" and ");
    if parts.len() == 1 {
        joined
    } else {
        format!("({joined})")
    }
}

/// `eq` for a literal, `matches` with an anchored regex for a wildcard, nothing for `*` alone.
fn field_condition(field: &str, pattern: &str) -> Option<String> {
    if pattern == "*" {
        return None;
    }
    if !pattern.contains('*') {
        return Some(format!("{field} eq {}", quote(pattern)));
    }
    let regex: Vec<String> = pattern.split('*').map(regex::escape).collect();
    Some(format!(
        "{field} matches {}",
        quote(&format!("^{}$", regex.join(".*")))
    ))
}

/// A Rules language string literal.
fn quote(value: &str) -> String {
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translates_patterns() {
        assert_eq!(
            pattern_expression("example.com/admin"),
            r#"(http.host eq "example.com" and http.request.uri.path eq "/admin")"#
        );
        assert_eq!(
            pattern_expression("*example.com/images/*"),
            r#"(http.host matches "^.*example\\.com$" and http.request.uri.path matches "^/images/.*$")"#
        );
        assert_eq!(
            pattern_expression("https://Example.com/*"),
            r#"(ssl and http.host eq "example.com")"#
        );
        assert_eq!(
            pattern_expression("http://*/*?debug=*"),
            r#"(not ssl and http.request.uri.query matches "^debug=.*$")"#
        );
        assert_eq!(pattern_expression("*/*"), "true");
        assert_eq!(
            pattern_expression("example.com"),
            r#"(http.host eq "example.com" and http.request.uri.path eq "/")"#
        );
    }

    #[test]
    fn quotes_are_escaped() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
    }
}
