//! Admin API under `/client/v4` (Cloudflare v4 compatible), served by a pingora service on
//! `[server] admin_listen`.
//!
//! Every call goes: body read (at most [`request::BODY_LIMIT`], else 413) → credentials
//! ([`auth`]: `X-Auth-Email` + `X-Auth-Key`, or `Authorization: Bearer`) → route → zone/account
//! resolved *and* in the caller's scope (else the same 400 7003/7000 as an unknown id) → method
//! (405) → permission (403 10000) → body validation → change through the single
//! [`crate::state::Writer`] (persisted before the answer).
//!
//! Routes: `/zones`, `/zones/{id}`, `/zones/{id}/disable_esc`, `/accounts`, `/accounts/{id}`,
//! `/accounts/{id}/disable_esc`, `/user/tokens/verify`, `/escgate/reload`, and the WAF routes.
//!
//! Permissions (tokens list them; a Global API key holds all of them on its accounts):
//! `esc:read`, `esc:edit` (implies `esc:read`), `waf:read`, `waf:edit` (implies `waf:read`),
//! `zone:read`, `account:read`, `config:reload` (a key needs `accounts = ["*"]` to reload).
//!
//! **WAF routes**: `/zones/{id}/{waf_migration,rulesets,firewall,settings/waf,pagerules}…` are
//! handed, authenticated, scoped and `waf:read`-checked, to [`waf_hook::route`], which runs
//! [`crate::waf::api::handle`] (writes under the writer's lock, persisted before the answer).

pub mod auth;
pub mod codes;
pub mod discovery;
pub mod envelope;
pub mod esc;
pub mod reload;
pub mod request;
pub mod router;
pub mod waf_hook;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pingora::apps::http_app::{HttpServer, ServeHttp};
use pingora::protocols::http::ServerSession;
use pingora::services::listening::Service;

use envelope::ApiError;
use request::{AdminRequest, Body, BODY_LIMIT};
use router::{AdminCore, Reply};

use crate::state::{SharedSnapshot, Writer};

/// The pingora app behind [`service`].
#[derive(Debug)]
pub struct AdminApp {
    core: Arc<AdminCore>,
}

impl AdminApp {
    /// The admin routes over `shared`, writing through `writer`, reloading from `config_path`.
    pub fn new(shared: SharedSnapshot, writer: Arc<Writer>, config_path: PathBuf) -> Self {
        AdminApp {
            core: Arc::new(AdminCore::new(shared, writer, config_path)),
        }
    }
}

/// The admin API as a pingora service, listening on `[server] admin_listen` of the current
/// config (no listener when it is unset; add one with `endpoints()`/`add_tcp`). `writer` must
/// publish into `shared`.
pub fn service(
    shared: SharedSnapshot,
    writer: Arc<Writer>,
    config_path: PathBuf,
) -> Service<HttpServer<AdminApp>> {
    let listen = shared.load().config.server.admin_listen;
    let mut service = Service::new(
        "escgate admin".to_owned(),
        HttpServer::new_app(AdminApp::new(shared, writer, config_path)),
    );
    if let Some(addr) = listen {
        service.add_tcp(&addr.to_string());
    }
    service
}

async fn read_body(session: &mut ServerSession) -> Body {
    let declared = session
        .req_header()
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > BODY_LIMIT as u64) {
        discard_rest(session).await;
        return Body::TooLarge;
    }
    let mut body = Vec::new();
    loop {
        match session.read_request_body().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > BODY_LIMIT {
                    discard_rest(session).await;
                    return Body::TooLarge;
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Body::Complete(body),
            // A broken body is answered like a malformed one: the JSON parser rejects it.
            Err(_) => return Body::Complete(body),
        }
    }
}

/// Reads and drops the rest of an oversized body, bounded in bytes and time, so the client
/// finishes sending and reads the 413: closing with unread input makes the kernel reset the
/// connection, and the client sees a broken pipe instead of the answer.
async fn discard_rest(session: &mut ServerSession) {
    const DISCARD_LIMIT: usize = 16 * BODY_LIMIT;
    const DISCARD_TIME: std::time::Duration = std::time::Duration::from_secs(5);
    let _ = tokio::time::timeout(DISCARD_TIME, async {
        let mut discarded = 0usize;
        while let Ok(Some(chunk)) = session.read_request_body().await {
            discarded += chunk.len();
            if discarded > DISCARD_LIMIT {
                break;
            }
        }
    })
    .await;
}

fn json_response(status: u16, body: serde_json::Value) -> http::Response<Vec<u8>> {
    let bytes = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CONTENT_LENGTH, bytes.len())
        .body(bytes)
        .unwrap_or_default()
}

#[async_trait]
impl ServeHttp for AdminApp {
    async fn response(&self, session: &mut ServerSession) -> http::Response<Vec<u8>> {
        let body = read_body(session).await;
        if body == Body::TooLarge {
            // The rest of the body is not read, so the connection cannot be reused.
            session.set_keepalive(None);
        }
        let header = session.req_header();
        let request = AdminRequest {
            method: header.method.clone(),
            path: header.uri.path().to_owned(),
            query: header.uri.query().unwrap_or("").to_owned(),
            headers: header.headers.clone(),
            body,
        };
        let (method, path) = (request.method.clone(), request.path.clone());
        let core = self.core.clone();
        // Writes fsync; keep them off the async workers.
        let (reply, caller) = tokio::task::spawn_blocking(move || core.handle(&request))
            .await
            .unwrap_or_else(|_| {
                let error = ApiError::new(500, codes::INTERNAL, "Internal error");
                (Reply::Envelope(Err(error)), None)
            });
        let (status, json) = match reply {
            Reply::Bare(value) => (200, value),
            Reply::Envelope(Ok(success)) => (success.status, success.body()),
            Reply::Envelope(Err(error)) => (error.status, error.body()),
        };
        tracing::info!(
            target: "escgate::admin",
            method = %method,
            path = %path,
            status,
            caller = caller.as_deref().unwrap_or("-"),
            "admin request"
        );
        json_response(status, json)
    }
}
