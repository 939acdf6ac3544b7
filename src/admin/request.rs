//! One admin request as the router sees it: method, path, query, headers and a bounded body.

/// Largest accepted request body; larger ones answer 413 (code 10413).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The request body, read up to [`BODY_LIMIT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body (empty when there was none).
    Complete(Vec<u8>),
    /// The body was longer than [`BODY_LIMIT`]; it was not kept.
    TooLarge,
}

/// A fully read admin request, owned so it can move to a blocking thread.
#[derive(Debug, Clone)]
pub struct AdminRequest {
    pub method: http::Method,
    /// Path without the query, e.g. `/client/v4/zones/<id>/disable_esc`.
    pub path: String,
    /// Raw query string without `?` (empty when absent).
    pub query: String,
    pub headers: http::HeaderMap,
    pub body: Body,
}

impl AdminRequest {
    /// The body bytes, or the 413 error.
    pub fn body_bytes(&self) -> Result<&[u8], super::envelope::ApiError> {
        match &self.body {
            Body::Complete(bytes) => Ok(bytes),
            Body::TooLarge => Err(super::codes::body_too_large(BODY_LIMIT)),
        }
    }

    /// Requires `Content-Type: application/json` (parameters such as `charset` allowed).
    pub fn require_json(&self) -> Result<(), super::envelope::ApiError> {
        let is_json = self
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or("").trim())
            .is_some_and(|media| media.eq_ignore_ascii_case("application/json"));
        if is_json {
            Ok(())
        } else {
            Err(super::codes::unsupported_media_type())
        }
    }

    /// Decoded `name=value` pairs of the query (`+` is a space, `%XX` decoded; invalid escapes
    /// are kept literally).
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        self.query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(name), percent_decode(value))
            })
            .collect()
    }

    /// The first value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let req = AdminRequest {
            method: http::Method::GET,
            path: "/".into(),
            query: "name=a%2Eb+c&account%2Eid=x&bad=%zz&end=%4".into(),
            headers: http::HeaderMap::new(),
            body: Body::Complete(Vec::new()),
        };
        assert_eq!(req.query_param("name").as_deref(), Some("a.b c"));
        assert_eq!(req.query_param("account.id").as_deref(), Some("x"));
        assert_eq!(req.query_param("bad").as_deref(), Some("%zz"));
        assert_eq!(req.query_param("end").as_deref(), Some("%4"));
        assert_eq!(req.query_param("missing"), None);
    }
}
