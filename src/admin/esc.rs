//! `GET|POST|DELETE /zones/{id}/disable_esc` and `/accounts/{id}/disable_esc`.

use serde_json::{Map, Value};

use super::auth::{Caller, Permission};
use super::codes;
use super::envelope::{ApiError, ApiSuccess, ErrorItem};
use super::request::AdminRequest;
use super::router::Reply;
use crate::state::tenant::EscSetting;
use crate::state::{Change, EscEdit, SecretEdit, WriteError, Writer};

/// Longest accepted secret, in characters.
pub const SECRET_MAX_CHARS: usize = 100;

/// Which disable-ESC setting a call addresses (already resolved and in the caller's scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscScope<'a> {
    Zone(&'a str),
    Account(&'a str),
}

/// Serves one disable-ESC call.
pub fn handle(writer: &Writer, caller: &Caller, scope: EscScope<'_>, req: &AdminRequest) -> Reply {
    let needed = match req.method {
        http::Method::GET => Permission::EscRead,
        http::Method::POST | http::Method::DELETE => Permission::EscEdit,
        ref other => {
            return Reply::Envelope(Err(codes::method_not_allowed(other, "GET, POST, DELETE")))
        }
    };
    if !caller.can(needed) {
        return Reply::Envelope(Err(codes::not_permitted(needed.as_str())));
    }
    if req.method == http::Method::GET {
        let tenant = writer.shared().load().tenant.clone();
        return Reply::Bare(setting_json(current(&tenant, scope)));
    }
    let edit = if req.method == http::Method::DELETE {
        EscEdit::reenable()
    } else {
        match parse_post(req) {
            Ok(edit) => edit,
            Err(e) => return Reply::Envelope(Err(e)),
        }
    };
    let change = match scope {
        EscScope::Zone(id) => Change::SetZoneEsc {
            zone_id: id.to_owned(),
            edit,
        },
        EscScope::Account(id) => Change::SetAccountEsc {
            account_id: id.to_owned(),
            edit,
        },
    };
    Reply::Envelope(match writer.apply(change) {
        Ok(tenant) => Ok(ApiSuccess::ok(setting_json(current(&tenant, scope)))),
        Err(WriteError::Store(e)) => {
            tracing::error!(error = %e, "disable_esc write not persisted");
            Err(codes::state_not_saved())
        }
        Err(WriteError::Rejected(never)) => match never {},
    })
}

fn current(tenant: &crate::state::tenant::TenantState, scope: EscScope<'_>) -> EscSetting {
    match scope {
        EscScope::Zone(id) => tenant.zone_esc(id),
        EscScope::Account(id) => tenant.account_esc(id),
    }
    .cloned()
    .unwrap_or_default()
}

/// `{"always": bool}` plus `"with_secret"` when a secret is configured.
pub fn setting_json(setting: EscSetting) -> Value {
    let mut object = Map::new();
    object.insert("always".into(), Value::Bool(setting.always));
    if let Some(secret) = setting.with_secret {
        object.insert("with_secret".into(), Value::String(secret));
    }
    Value::Object(object)
}

/// Parses and validates a POST body into an edit; every problem is reported at once.
pub fn parse_post(req: &AdminRequest) -> Result<EscEdit, ApiError> {
    let bytes = req.body_bytes()?;
    req.require_json()?;
    let value: Value = serde_json::from_slice(bytes).map_err(codes::malformed_json)?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_request(
            codes::ESC_BODY_SHAPE,
            "Request body must be a JSON object with \"always\" and/or \"with_secret\"",
        ));
    };
    let mut problems = Vec::new();
    let mut edit = EscEdit {
        always: None,
        secret: SecretEdit::Keep,
    };
    for (key, value) in &object {
        match (key.as_str(), value) {
            ("always", Value::Bool(flag)) => edit.always = Some(*flag),
            ("always", _) => problems.push(
                ErrorItem::new(codes::ESC_ALWAYS_TYPE, "\"always\" must be a boolean")
                    .at("/always"),
            ),
            ("with_secret", Value::String(secret)) => match validate_secret(secret) {
                Ok(()) => edit.secret = SecretEdit::Set(secret.clone()),
                Err(item) => problems.push(item.at("/with_secret")),
            },
            ("with_secret", _) => problems.push(
                ErrorItem::new(codes::ESC_SECRET_TYPE, "\"with_secret\" must be a string")
                    .at("/with_secret"),
            ),
            (other, _) => problems.push(
                ErrorItem::new(
                    codes::ESC_UNKNOWN_KEY,
                    format!(
                        "unknown key {other:?}: only \"always\" and \"with_secret\" are accepted"
                    ),
                )
                .at(format!("/{}", other.replace('~', "~0").replace('/', "~1"))),
            ),
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::from_items(400, problems));
    }
    if object.is_empty() {
        return Err(ApiError::bad_request(
            codes::ESC_BODY_SHAPE,
            "Request body must contain \"always\" and/or \"with_secret\"",
        ));
    }
    Ok(edit)
}

/// A secret is 1–100 cookie-value characters (RFC 6265 `cookie-octet`: visible ASCII except
/// `"`, `,`, `;` and `\`).
pub fn validate_secret(secret: &str) -> Result<(), ErrorItem> {
    let chars = secret.chars().count();
    if chars == 0 {
        return Err(ErrorItem::new(
            codes::ESC_SECRET_LENGTH,
            "\"with_secret\" must not be empty",
        ));
    }
    if chars > SECRET_MAX_CHARS {
        return Err(ErrorItem::new(
            codes::ESC_SECRET_LENGTH,
            format!("\"with_secret\" must be at most {SECRET_MAX_CHARS} characters, got {chars}"),
        ));
    }
    let allowed = |c: char| c.is_ascii_graphic() && !matches!(c, '"' | ',' | ';' | '\\');
    if let Some((position, bad)) = secret.chars().enumerate().find(|(_, c)| !allowed(*c)) {
        return Err(ErrorItem::new(
            codes::ESC_SECRET_CHARACTER,
            format!(
                "\"with_secret\" has {bad:?} at position {position}: only cookie-value characters are allowed (visible ASCII except space, '\"', ',', ';' and '\\')"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::request::Body;

    fn post(body: &str) -> AdminRequest {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            "application/json; charset=utf-8".parse().unwrap(),
        );
        AdminRequest {
            method: http::Method::POST,
            path: "/".into(),
            query: String::new(),
            headers,
            body: Body::Complete(body.as_bytes().to_vec()),
        }
    }

    fn first_code(body: &str) -> u32 {
        parse_post(&post(body)).unwrap_err().errors[0].code
    }

    #[test]
    fn bodies_parse_or_fail_with_their_code() {
        assert_eq!(
            parse_post(&post(r#"{"always": true, "with_secret": "s3cr3t"}"#)).unwrap(),
            EscEdit {
                always: Some(true),
                secret: SecretEdit::Set("s3cr3t".into())
            }
        );
        assert_eq!(first_code("{"), codes::MALFORMED_JSON);
        assert_eq!(first_code("[]"), codes::ESC_BODY_SHAPE);
        assert_eq!(first_code("{}"), codes::ESC_BODY_SHAPE);
        assert_eq!(first_code(r#"{"always": "yes"}"#), codes::ESC_ALWAYS_TYPE);
        assert_eq!(first_code(r#"{"with_secret": 5}"#), codes::ESC_SECRET_TYPE);
        assert_eq!(
            first_code(r#"{"with_secret": ""}"#),
            codes::ESC_SECRET_LENGTH
        );
        let long = format!(r#"{{"with_secret": "{}"}}"#, "a".repeat(101));
        assert_eq!(first_code(&long), codes::ESC_SECRET_LENGTH);
        let max = format!(r#"{{"with_secret": "{}"}}"#, "a".repeat(100));
        assert!(parse_post(&post(&max)).is_ok());
        assert_eq!(
            first_code(r#"{"with_secret": "a;b"}"#),
            codes::ESC_SECRET_CHARACTER
        );
        assert_eq!(
            first_code(r#"{"with_secret": "a b"}"#),
            codes::ESC_SECRET_CHARACTER
        );
        assert_eq!(
            first_code(r#"{"with_secret": "é"}"#),
            codes::ESC_SECRET_CHARACTER
        );
        assert_eq!(
            first_code(r#"{"always": true, "x": 1}"#),
            codes::ESC_UNKNOWN_KEY
        );
        let mut wrong_type = post(r#"{"always": true}"#);
        wrong_type
            .headers
            .insert(http::header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert_eq!(
            parse_post(&wrong_type).unwrap_err().errors[0].code,
            codes::UNSUPPORTED_MEDIA_TYPE
        );
    }
}
