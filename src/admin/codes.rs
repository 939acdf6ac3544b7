//! Error codes of the admin API and the errors built from them (README's API section lists them).
//!
//! Codes below 10000 other than the 1xxx ESC/query block are Cloudflare's own; 104xx are local
//! codes mirroring the HTTP status.

use super::envelope::{ApiError, ErrorItem};

/// No credentials at all.
pub const MISSING_CREDENTIALS: u32 = 9106;
/// Malformed credential headers (with a chain of the three below).
pub const INVALID_HEADERS: u32 = 6003;
/// Malformed `X-Auth-Email`.
pub const INVALID_EMAIL_HEADER: u32 = 6102;
/// Malformed `X-Auth-Key`.
pub const INVALID_KEY_HEADER: u32 = 6103;
/// Malformed `Authorization`.
pub const INVALID_AUTHORIZATION_HEADER: u32 = 6111;
/// Well-formed but unknown key/email.
pub const UNKNOWN_KEY: u32 = 9103;
/// Unknown token.
pub const INVALID_TOKEN: u32 = 9109;
/// Authenticated, resource visible, operation not permitted.
pub const NOT_PERMITTED: u32 = 10000;
/// Unknown or out-of-scope object id.
pub const COULD_NOT_ROUTE: u32 = 7003;
/// Unknown route.
pub const NO_ROUTE: u32 = 7000;
/// Body is not valid JSON.
pub const MALFORMED_JSON: u32 = 6007;
/// ESC body: not an object, or neither `always` nor `with_secret`.
pub const ESC_BODY_SHAPE: u32 = 1101;
/// ESC body: unknown key.
pub const ESC_UNKNOWN_KEY: u32 = 1102;
/// ESC body: `always` is not a boolean.
pub const ESC_ALWAYS_TYPE: u32 = 1103;
/// ESC body: `with_secret` is not a string.
pub const ESC_SECRET_TYPE: u32 = 1104;
/// ESC body: `with_secret` empty or longer than 100 characters.
pub const ESC_SECRET_LENGTH: u32 = 1105;
/// ESC body: `with_secret` has a character that is not a cookie-value character.
pub const ESC_SECRET_CHARACTER: u32 = 1106;
/// Query parameter with an invalid value (`page`, `per_page`).
pub const INVALID_QUERY: u32 = 1004;
/// Reload: the config file was rejected (chain: one 1201 per problem).
pub const RELOAD_REJECTED: u32 = 1200;
/// Reload: one problem of the config file.
pub const RELOAD_PROBLEM: u32 = 1201;
/// The state could not be persisted; nothing changed.
pub const STATE_NOT_SAVED: u32 = 1500;
/// A handler failed unexpectedly (nothing was acknowledged).
pub const INTERNAL: u32 = 1501;
/// Method not allowed on a known route.
pub const METHOD_NOT_ALLOWED: u32 = 10405;
/// Body over the size limit.
pub const BODY_TOO_LARGE: u32 = 10413;
/// Wrong `Content-Type`.
pub const UNSUPPORTED_MEDIA_TYPE: u32 = 10415;

/// 400 7003 + 7000: unknown id, or an id outside the caller's scope (indistinguishable).
pub fn could_not_route(path: &str) -> ApiError {
    ApiError::from_items(
        400,
        vec![
            ErrorItem::new(
                COULD_NOT_ROUTE,
                format!("Could not route to {path}, perhaps your object identifier is invalid?"),
            ),
            ErrorItem::new(NO_ROUTE, "No route for that URI"),
        ],
    )
}

/// 400 7000: no such route.
pub fn no_route() -> ApiError {
    ApiError::bad_request(NO_ROUTE, "No route for that URI")
}

/// 405 10405.
pub fn method_not_allowed(method: &http::Method, allowed: &str) -> ApiError {
    ApiError::new(
        405,
        METHOD_NOT_ALLOWED,
        format!("Method not allowed: {method} (allowed: {allowed})"),
    )
}

/// 403 10000, naming the permission the operation needs.
pub fn not_permitted(permission: &str) -> ApiError {
    ApiError::from_items(
        403,
        vec![
            ErrorItem::new(NOT_PERMITTED, "Authentication error").with_chain(vec![ErrorItem::new(
                NOT_PERMITTED,
                format!("this operation needs the {permission} permission"),
            )]),
        ],
    )
}

/// 400 6007.
pub fn malformed_json(detail: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(
        MALFORMED_JSON,
        format!("Malformed JSON in request body: {detail}"),
    )
}

/// 415 10415.
pub fn unsupported_media_type() -> ApiError {
    ApiError::new(
        415,
        UNSUPPORTED_MEDIA_TYPE,
        "Content-Type must be application/json",
    )
}

/// 413 10413.
pub fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        413,
        BODY_TOO_LARGE,
        format!("Request body is larger than the {limit}-byte limit"),
    )
}

/// 500 1500.
pub fn state_not_saved() -> ApiError {
    ApiError::new(
        500,
        STATE_NOT_SAVED,
        "The state could not be saved; nothing was changed",
    )
}
