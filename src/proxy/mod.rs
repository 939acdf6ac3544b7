//! The pingora `ProxyHttp` implementation: thin hooks that call [`crate::zones`],
//! [`crate::esc`] and the helpers of this module.

pub mod ctx;
pub mod forwarding;
pub mod respond;
pub mod view;

use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::modules::http::compression::ResponseCompression;
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorSource, ErrorType, Result};

pub use ctx::{LocalAnswer, RequestCtx};

use crate::esc;
use crate::state::SharedSnapshot;

/// `tracing` target of the per-request access log line.
const ACCESS_LOG: &str = "escgate::access";

/// Compression level used for zones with `compression = true`.
const COMPRESSION_LEVEL: u32 = 6;

/// The edge proxy. Holds only the shared snapshot handle; everything else is per request.
pub struct EscProxy {
    shared: SharedSnapshot,
}

impl EscProxy {
    /// A proxy reading its config and tenant state from `shared`.
    pub fn new(shared: SharedSnapshot) -> EscProxy {
        EscProxy { shared }
    }
}

/// Status for a proxying error: timeouts are 504, other origin failures 502.
fn error_status(error: &Error) -> u16 {
    match error.etype() {
        ErrorType::HTTPStatus(code) => *code,
        ErrorType::ConnectTimedout | ErrorType::ReadTimedout | ErrorType::WriteTimedout
            if error.esource() == &ErrorSource::Upstream =>
        {
            504
        }
        _ => match error.esource() {
            ErrorSource::Upstream => 502,
            ErrorSource::Downstream => match error.etype() {
                ErrorType::WriteError | ErrorType::ReadError | ErrorType::ConnectionClosed => 0,
                _ => 400,
            },
            ErrorSource::Internal | ErrorSource::Unset => 500,
        },
    }
}

#[async_trait]
impl ProxyHttp for EscProxy {
    type CTX = RequestCtx;

    fn new_ctx(&self) -> RequestCtx {
        RequestCtx::new(self.shared.load_full())
    }

    /// Routes and decides before pingora's downstream modules run, so the compression module
    /// sees the request with its level already chosen.
    async fn early_request_filter(
        &self,
        session: &mut Session,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        let snapshot = ctx.snapshot.clone();
        let request = session.req_header();
        let Some(zone_index) = snapshot
            .config
            .zone_index
            .lookup(view::request_host(request))
        else {
            return Ok(());
        };
        let zone = &snapshot.config.zones[zone_index as usize];
        ctx.zone = Some(zone_index);
        let decision = esc::decision::decide(
            &snapshot.tenant,
            &zone.id,
            &zone.account_id,
            &request.headers,
        );
        ctx.decision = Some(decision);
        if decision.esc_applied() && !zone.esc.is_empty() {
            ctx.matched = esc::apply::match_entries(&zone.esc, || {
                view::request_view(request, forwarding::client_ip(session), false)
            });
            let plan = esc::plan_request(&zone.esc, ctx.matched);
            ctx.address = plan.address;
            ctx.sni = plan.sni;
            ctx.features_off = plan.features_off;
            ctx.redirect = plan
                .redirect
                .map(|r| (r.status, r.location_for(request.uri.query())));
        }
        if zone.compression && !ctx.features_off.contains(esc::FeatureSet::COMPRESSION) {
            if let Some(compression) = session
                .downstream_modules_ctx
                .get_mut::<ResponseCompression>()
            {
                compression.adjust_level(COMPRESSION_LEVEL);
            }
        }
        Ok(())
    }

    /// Answers what must not reach the origin: unknown hosts and ESC redirects.
    async fn request_filter(&self, session: &mut Session, ctx: &mut RequestCtx) -> Result<bool> {
        let Some(zone) = ctx.zone_config() else {
            ctx.local_answer = Some(LocalAnswer::UnknownHost);
            respond::unknown_host(session).await?;
            return Ok(true);
        };
        let debug = zone
            .debug_header
            .then(|| respond::debug_header_value(ctx.decision));
        if let Some((status, location)) = ctx.redirect.take() {
            ctx.local_answer = Some(LocalAnswer::Redirect);
            respond::redirect(session, status, location, debug).await?;
            return Ok(true);
        }
        Ok(false)
    }

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        ctx: &mut RequestCtx,
    ) -> Result<Box<HttpPeer>> {
        // Timed only for the access log: two clock reads per request are measurable here.
        if tracing::enabled!(target: ACCESS_LOG, tracing::Level::INFO) {
            ctx.upstream_started = Some(Instant::now());
        }
        let peer = ctx
            .zone_config()
            .and_then(|zone| zone.upstreams.peer(ctx.address, ctx.sni))
            .ok_or_else(|| Error::explain(ErrorType::HTTPStatus(502), "zone has no origin"))?;
        Ok(Box::new(peer.clone()))
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        esc::decision::strip_disable_esc_cookies(upstream_request);
        forwarding::add_forwarding_headers(upstream_request, forwarding::client_ip(session), false);
        if let Some(zone) = ctx.zone_config() {
            esc::apply_upstream_request(&zone.esc, ctx.matched, upstream_request);
        }
        Ok(())
    }

    async fn upstream_response_filter(
        &self,
        _session: &mut Session,
        _upstream_response: &mut ResponseHeader,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        ctx.upstream_time = ctx.upstream_started.map(|started| started.elapsed());
        Ok(())
    }

    async fn response_filter(
        &self,
        session: &mut Session,
        response: &mut ResponseHeader,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        let snapshot = ctx.snapshot.clone();
        let Some(zone) = ctx.zone.and_then(|i| snapshot.config.zones.get(i as usize)) else {
            return Ok(());
        };
        if ctx.matched != 0 {
            let status = response.status.as_u16();
            if let Some(replacement) = esc::response_replacement(&zone.esc, ctx.matched, status) {
                let head = session.req_header().method == http::Method::HEAD;
                if respond::declares_no_body(response) && !replacement.body.is_empty() && !head {
                    // Pingora sends no body after a header that ends the stream, so let
                    // `fail_to_proxy` write the whole replacement instead.
                    ctx.replaced_by_error = true;
                    return Err(Error::explain(
                        ErrorType::HTTPStatus(status),
                        "origin error without body, replaced by custom_error",
                    ));
                }
                respond::replace_response(response, &replacement)?;
                ctx.replacement_body = Some(replacement.body);
            }
            esc::apply_response_headers(&zone.esc, ctx.matched, response);
        }
        if zone.debug_header {
            response.insert_header(
                respond::DEBUG_HEADER,
                respond::debug_header_value(ctx.decision),
            )?;
        }
        Ok(())
    }

    fn response_body_filter(
        &self,
        _session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut RequestCtx,
    ) -> Result<Option<Duration>> {
        if let Some(replacement) = &ctx.replacement_body {
            *body = (end_of_stream && !replacement.is_empty()).then(|| replacement.clone());
        }
        Ok(None)
    }

    async fn fail_to_proxy(
        &self,
        session: &mut Session,
        error: &Error,
        ctx: &mut RequestCtx,
    ) -> FailToProxy {
        let code = error_status(error);
        let unreusable = FailToProxy {
            error_code: code,
            can_reuse_downstream: false,
        };
        if code == 0 {
            return unreusable;
        }
        let zone = ctx.zone_config();
        let replacement =
            zone.and_then(|zone| esc::response_replacement(&zone.esc, ctx.matched, code));
        let debug = zone
            .filter(|zone| zone.debug_header)
            .map(|_| respond::debug_header_value(ctx.decision));
        let written = match replacement {
            Some(replacement) => {
                respond::write_local(
                    session,
                    replacement.status,
                    Some(replacement.header),
                    debug,
                    replacement.body,
                )
                .await
            }
            None => session.respond_error(code).await,
        };
        if let Err(e) = written {
            tracing::debug!(error = %e, "could not send the error response");
        }
        unreusable
    }

    fn suppress_error_log(&self, _session: &Session, ctx: &RequestCtx, _error: &Error) -> bool {
        ctx.replaced_by_error
    }

    async fn logging(&self, session: &mut Session, error: Option<&Error>, ctx: &mut RequestCtx) {
        let status = session
            .response_written()
            .map_or(0, |response| response.status.as_u16());
        let request = session.req_header();
        let zone = ctx.zone_config().map_or("-", |zone| zone.name.as_str());
        let esc = ctx
            .decision
            .map_or("-", |decision| decision.reason.as_str());
        tracing::info!(
            target: ACCESS_LOG,
            zone,
            method = request.method.as_str(),
            path = request.uri.path(),
            status,
            esc,
            esc_entries = ctx.matched.count_ones(),
            local = ctx.local_answer.map(|a| match a {
                LocalAnswer::UnknownHost => "unknown_host",
                LocalAnswer::Redirect => "redirect",
            }),
            upstream_ms = ctx.upstream_time.map(|t| t.as_secs_f64() * 1000.0),
            error = error.map(|e| e.etype().as_str()),
            "request"
        );
    }
}
