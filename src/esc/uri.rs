//! `rewrite_uri`: a new path (fixed or by regex) and/or query for the request sent to the origin.

use http::Uri;
use regex::Regex;

/// How the path is rewritten.
#[derive(Debug, Clone)]
pub enum PathRewrite {
    /// `path = "/v2/items"`.
    Fixed(String),
    /// `path_regex` + `path_replace` (`$1`-style groups); a path that does not match is kept.
    Regex { regex: Regex, replace: String },
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
            None => std::borrow::Cow::Borrowed(uri.path()),
            Some(PathRewrite::Fixed(path)) => std::borrow::Cow::Borrowed(path.as_str()),
            Some(PathRewrite::Regex { regex, replace }) => {
                regex.replace(uri.path(), replace.as_str())
            }
        };
        let query = match &self.query {
            Some(query) => Some(query.as_str()),
            None => uri.query(),
        };
        join(&path, query).ok()
    }
}

fn join(path: &str, query: Option<&str>) -> Result<Uri, String> {
    let text = match query {
        Some(query) if !query.is_empty() => format!("{path}?{query}"),
        _ => path.to_string(),
    };
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
    fn both_fixed_is_precomputed() {
        let rewrite =
            UriRewrite::new(Some(PathRewrite::Fixed("/v2".into())), Some("b=2".into())).unwrap();
        assert_eq!(rewrite.fixed.as_ref().unwrap(), "/v2?b=2");
    }
}
