//! `rewrite_uri`: a new path (fixed or by regex) and/or query for the request sent to the origin.

use std::borrow::Cow;

use http::Uri;
use regex::Regex;

/// How the path is rewritten.
#[derive(Debug, Clone)]
pub enum PathRewrite {
    /// `path = "/v2/items"`.
    Fixed(String),
    /// `path_regex = "^/api/(.*)$"` with `path_replace = "/v2/$1"`, the usual shape, recognized
    /// at load ([`PathRewrite::from_regex`]) and applied without the regex engine: a path that
    /// starts with `from` becomes `to` followed by the rest (same result as the regex).
    Prefix { from: String, to: String },
    /// `path_regex` + `path_replace` (`$1`-style groups); a path that does not match is kept.
    Regex { regex: Regex, replace: String },
}

impl PathRewrite {
    /// The rewrite for `path_regex` + `path_replace`: [`PathRewrite::Prefix`] when the regex is
    /// `^literal(.*)$` and the replacement `literal$1` (or `${1}`), else the regex itself.
    pub fn from_regex(regex: Regex, replace: String) -> PathRewrite {
        match prefix_form(regex.as_str(), &replace) {
            Some((from, to)) => PathRewrite::Prefix { from, to },
            None => PathRewrite::Regex { regex, replace },
        }
    }

    /// The rewritten path; `path` itself when it does not match.
    fn apply<'a>(&'a self, path: &'a str) -> Cow<'a, str> {
        match self {
            PathRewrite::Fixed(fixed) => Cow::Borrowed(fixed),
            PathRewrite::Prefix { from, to } => match path.strip_prefix(from.as_str()) {
                // `.` does not match a newline, so neither does the regex this stands for.
                Some(rest) if !rest.contains('\n') => Cow::Owned(format!("{to}{rest}")),
                _ => Cow::Borrowed(path),
            },
            PathRewrite::Regex { regex, replace } => regex.replace(path, replace.as_str()),
        }
    }
}

/// `(from, to)` when `pattern` is `^` + a literal + `(.*)$` and `replace` is a literal + `$1` or
/// `${1}`. Only plain path characters and `\.`, `\-`, `\/` escapes count as literal, so any
/// other regex syntax keeps the regex.
fn prefix_form(pattern: &str, replace: &str) -> Option<(String, String)> {
    let literal = pattern.strip_prefix('^')?.strip_suffix("(.*)$")?;
    let mut from = String::with_capacity(literal.len());
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                escaped @ ('.' | '-' | '/') => from.push(escaped),
                _ => return None,
            },
            c if c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '~' | '%' | ',') => {
                from.push(c)
            }
            _ => return None,
        }
    }
    let to = replace
        .strip_suffix("${1}")
        .or_else(|| replace.strip_suffix("$1"))?;
    if to.contains('$') {
        return None;
    }
    Some((from, to.to_owned()))
}

/// `rewrite_uri`, compiled. A `None` part keeps the request's own; `query = ""` drops the query.
#[derive(Debug, Clone)]
pub struct UriRewrite {
    pub path: Option<PathRewrite>,
    pub query: Option<String>,
    /// Both parts fixed: the whole URI, built at load.
    pub fixed: Option<Uri>,
}

impl UriRewrite {
    /// Builds the rewrite, precomputing the URI when nothing depends on the request.
    pub fn new(path: Option<PathRewrite>, query: Option<String>) -> Result<UriRewrite, String> {
        let fixed = match (&path, &query) {
            (Some(PathRewrite::Fixed(path)), Some(query)) => Some(join(path, Some(query))?),
            _ => None,
        };
        Ok(UriRewrite { path, query, fixed })
    }

    /// The rewritten URI for a request to `uri`; `None` when the result is not a valid URI.
    pub fn rewrite(&self, uri: &Uri) -> Option<Uri> {
        if let Some(fixed) = &self.fixed {
            return Some(fixed.clone());
        }
        let path = match &self.path {
            None => Cow::Borrowed(uri.path()),
            Some(rewrite) => rewrite.apply(uri.path()),
        };
        let query = match &self.query {
            Some(query) => Some(query.as_str()),
            None => uri.query(),
        };
        join(&path, query).ok()
    }
}

fn join(path: &str, query: Option<&str>) -> Result<Uri, String> {
    let query = query.filter(|query| !query.is_empty());
    let mut text = String::with_capacity(path.len() + query.map_or(0, |q| q.len() + 1));
    text.push_str(path);
    if let Some(query) = query {
        text.push('?');
        text.push_str(query);
    }
    Uri::try_from(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_path_keeps_the_request_query() {
        let rewrite = UriRewrite::new(Some(PathRewrite::Fixed("/v2".into())), None).unwrap();
        let uri: Uri = "/old?a=1".parse().unwrap();
        assert_eq!(rewrite.rewrite(&uri).unwrap(), "/v2?a=1");
    }

    #[test]
    fn regex_path_with_groups_and_empty_query_drops_it() {
        let rewrite = UriRewrite::new(
            Some(PathRewrite::Regex {
                regex: Regex::new("^/old/(.*)$").unwrap(),
                replace: "/new/$1".into(),
            }),
            Some(String::new()),
        )
        .unwrap();
        let uri: Uri = "/old/x/y?z=1".parse().unwrap();
        assert_eq!(rewrite.rewrite(&uri).unwrap(), "/new/x/y");
        let other: Uri = "/keep".parse().unwrap();
        assert_eq!(rewrite.rewrite(&other).unwrap(), "/keep");
    }

    #[test]
    fn prefix_shape_is_recognized_and_other_regexes_are_kept() {
        let compile = |pattern: &str, replace: &str| {
            PathRewrite::from_regex(Regex::new(pattern).unwrap(), replace.into())
        };
        assert!(matches!(
            compile("^/api/(.*)$", "/v2/$1"),
            PathRewrite::Prefix { ref from, ref to } if from == "/api/" && to == "/v2/"
        ));
        assert!(matches!(
            compile(r"^/a\.b/(.*)$", "/c${1}"),
            PathRewrite::Prefix { ref from, ref to } if from == "/a.b/" && to == "/c"
        ));
        for (pattern, replace) in [
            ("^/api/(.*)$", "/v2/$1x"),
            ("^/api/(.*)$", "/$2/$1"),
            ("^/a.b/(.*)$", "/c/$1"),
            ("^/api/(.+)$", "/v2/$1"),
            ("(?i)^/api/(.*)$", "/v2/$1"),
            ("^/api/(.*)", "/v2/$1"),
            (r"^/a\d/(.*)$", "/c/$1"),
        ] {
            assert!(
                matches!(compile(pattern, replace), PathRewrite::Regex { .. }),
                "{pattern} -> {replace}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn prefix_fast_path_agrees_with_the_regex(
            prefix in proptest::sample::select(vec!["/api/", "/", "/a-b_c/", "/v1"]),
            to in proptest::sample::select(vec!["/v2/", "", "/x"]),
            path in "(/api/|/a-b_c/|/v1|/)[a-z0-9/._%-]{0,12}",
        ) {
            let escaped = prefix.replace('-', "\\-");
            let regex = Regex::new(&format!("^{escaped}(.*)$")).unwrap();
            let fast = PathRewrite::from_regex(regex.clone(), format!("{to}$1"));
            let recognized = matches!(fast, PathRewrite::Prefix { .. });
            proptest::prop_assert!(recognized);
            let slow = PathRewrite::Regex { regex, replace: format!("{to}$1") };
            proptest::prop_assert_eq!(fast.apply(&path), slow.apply(&path));
        }
    }

    #[test]
    fn both_fixed_is_precomputed() {
        let rewrite =
            UriRewrite::new(Some(PathRewrite::Fixed("/v2".into())), Some("b=2".into())).unwrap();
        assert_eq!(rewrite.fixed.as_ref().unwrap(), "/v2?b=2");
    }
}
