//! Responses escgate writes itself: unknown host, ESC redirects, replaced error responses.

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use http::StatusCode;
use pingora::http::ResponseHeader;
use pingora::proxy::Session;
use pingora::Result;

use crate::esc::ResponseReplacement;

/// Response header `escgate-esc` (zones with `debug_header = true`).
pub const DEBUG_HEADER: &str = "escgate-esc";
/// Body of the 404 for a Host no zone serves.
pub const UNKNOWN_HOST_BODY: &[u8] = b"unknown host\n";

/// The `escgate-esc` value for a decision.
pub fn debug_header_value(decision: Option<crate::esc::decision::Decision>) -> String {
    match decision {
        Some(decision) if !decision.esc_applied() => {
            format!("disabled; reason={}", decision.reason.as_str())
        }
        _ => "applied".to_string(),
    }
}

/// Writes a complete response: status, one extra header, body.
pub async fn write_local(
    session: &mut Session,
    status: StatusCode,
    header: Option<(http::HeaderName, http::HeaderValue)>,
    debug: Option<String>,
    body: Bytes,
) -> Result<()> {
    let mut response = ResponseHeader::build(status, Some(4))?;
    if let Some((name, value)) = header {
        response.insert_header(name, value)?;
    }
    if let Some(debug) = debug {
        response.insert_header(DEBUG_HEADER, debug)?;
    }
    response.insert_header(CONTENT_LENGTH, body.len().to_string())?;
    let empty = body.is_empty();
    session
        .write_response_header(Box::new(response), empty)
        .await?;
    if !empty {
        session.write_response_body(Some(body), true).await?;
    }
    Ok(())
}

/// The 404 for a Host no zone serves.
pub async fn unknown_host(session: &mut Session) -> Result<()> {
    let text = http::HeaderValue::from_static("text/plain; charset=utf-8");
    write_local(
        session,
        StatusCode::NOT_FOUND,
        Some((CONTENT_TYPE, text)),
        None,
        Bytes::from_static(UNKNOWN_HOST_BODY),
    )
    .await
}

/// An ESC `redirect`.
pub async fn redirect(
    session: &mut Session,
    status: StatusCode,
    location: http::HeaderValue,
    debug: Option<String>,
) -> Result<()> {
    write_local(
        session,
        status,
        Some((LOCATION, location)),
        debug,
        Bytes::new(),
    )
    .await
}

/// The origin response says it has no body (`Content-Length: 0`).
pub fn declares_no_body(response: &ResponseHeader) -> bool {
    response
        .headers
        .get(CONTENT_LENGTH)
        .is_some_and(|length| length.as_bytes() == b"0")
}

/// Rewrites an origin response header into `replacement` (its body replaces the origin's in
/// `response_body_filter`).
pub fn replace_response(
    response: &mut ResponseHeader,
    replacement: &ResponseReplacement,
) -> Result<()> {
    response.set_status(replacement.status)?;
    for name in [
        "transfer-encoding",
        "content-encoding",
        "etag",
        "last-modified",
        "content-type",
        "location",
    ] {
        response.remove_header(name);
    }
    let (name, value) = &replacement.header;
    response.insert_header(name, value.clone())?;
    response.insert_header(CONTENT_LENGTH, replacement.body.len().to_string())?;
    Ok(())
}
