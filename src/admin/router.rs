//! Credentials first, then route, scope, method, permission, body: the order every admin call
//! goes through (so an id outside the caller's scope answers exactly like an unknown id).

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use serde_json::Value;

use super::auth::{Caller, CredentialIndex, Permission};
use super::envelope::ApiResult;
use super::request::AdminRequest;
use super::{codes, discovery, esc, reload, waf_hook};
use crate::config::Config;
use crate::state::{SharedSnapshot, Snapshot, Writer};

/// What a route answers: the envelope, or the bare object of `GET .../disable_esc`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Envelope(ApiResult),
    Bare(Value),
}

/// Path prefix of every admin route.
pub const PREFIX: &str = "/client/v4/";

#[derive(Debug)]
struct CompiledCredentials {
    config: Arc<Config>,
    index: Arc<CredentialIndex>,
}

/// Everything the routes need, shared by all connections.
#[derive(Debug)]
pub struct AdminCore {
    shared: SharedSnapshot,
    writer: Arc<Writer>,
    config_path: PathBuf,
    credentials: ArcSwapOption<CompiledCredentials>,
}

impl AdminCore {
    /// The routes over `shared`, writing through `writer`, reloading from `config_path`.
    pub fn new(shared: SharedSnapshot, writer: Arc<Writer>, config_path: PathBuf) -> Self {
        AdminCore {
            shared,
            writer,
            config_path,
            credentials: ArcSwapOption::empty(),
        }
    }

    /// The credential index of `config`, compiled once per config version.
    fn credentials(&self, config: &Arc<Config>) -> Arc<CredentialIndex> {
        if let Some(cached) = self.credentials.load_full() {
            if Arc::ptr_eq(&cached.config, config) {
                return cached.index.clone();
            }
        }
        let index = Arc::new(CredentialIndex::compile(config));
        self.credentials.store(Some(Arc::new(CompiledCredentials {
            config: config.clone(),
            index: index.clone(),
        })));
        index
    }

    /// Serves one request (blocking: writes fsync). Returns the reply and the caller's id for
    /// the access log.
    pub fn handle(&self, req: &AdminRequest) -> (Reply, Option<String>) {
        let snapshot = self.shared.load_full();
        let caller = match self
            .credentials(&snapshot.config)
            .authenticate(&req.headers)
        {
            Ok(caller) => caller,
            Err(e) => return (Reply::Envelope(Err(e)), None),
        };
        let reply = self.route(&snapshot, &caller, req);
        (reply, Some(caller.id))
    }

    fn route(&self, snapshot: &Arc<Snapshot>, caller: &Caller, req: &AdminRequest) -> Reply {
        let Some(rest) = req.path.strip_prefix(PREFIX) else {
            return Reply::Envelope(Err(codes::no_route()));
        };
        let segments: Vec<&str> = rest.split('/').collect();
        let config = &snapshot.config;
        let only_get = |f: &dyn Fn() -> ApiResult| match req.method {
            http::Method::GET => Reply::Envelope(f()),
            ref other => Reply::Envelope(Err(codes::method_not_allowed(other, "GET"))),
        };
        match segments.as_slice() {
            ["zones"] => only_get(&|| discovery::list_zones(config, caller, req)),
            ["zones", id, rest @ ..] => {
                let Some(zone) = config.zone_by_id(id).filter(|z| caller.covers_zone(z)) else {
                    return Reply::Envelope(Err(codes::could_not_route(&req.path)));
                };
                match rest {
                    [] => only_get(&|| discovery::get_zone(config, caller, zone)),
                    ["disable_esc"] => {
                        esc::handle(&self.writer, caller, esc::EscScope::Zone(&zone.id), req)
                    }
                    rest if waf_hook::is_waf_path(rest) => {
                        if !caller.can(Permission::WafRead) {
                            return Reply::Envelope(Err(codes::not_permitted(
                                Permission::WafRead.as_str(),
                            )));
                        }
                        Reply::Envelope(waf_hook::route(waf_hook::WafCall {
                            caller,
                            snapshot,
                            writer: &self.writer,
                            zone,
                            rest,
                            request: req,
                        }))
                    }
                    _ => Reply::Envelope(Err(codes::could_not_route(&req.path))),
                }
            }
            ["accounts"] => only_get(&|| discovery::list_accounts(config, caller, req)),
            ["accounts", id, rest @ ..] => {
                let Some(account) = config
                    .account_by_id(id)
                    .filter(|a| caller.covers_account(&a.id))
                else {
                    return Reply::Envelope(Err(codes::could_not_route(&req.path)));
                };
                match rest {
                    [] => only_get(&|| discovery::get_account(caller, account)),
                    ["disable_esc"] => esc::handle(
                        &self.writer,
                        caller,
                        esc::EscScope::Account(&account.id),
                        req,
                    ),
                    _ => Reply::Envelope(Err(codes::could_not_route(&req.path))),
                }
            }
            ["user", "tokens", "verify"] => only_get(&|| discovery::verify_token(caller)),
            ["escgate", "reload"] => match req.method {
                http::Method::POST => {
                    Reply::Envelope(reload::reload(&self.writer, caller, &self.config_path))
                }
                ref other => Reply::Envelope(Err(codes::method_not_allowed(other, "POST"))),
            },
            _ => Reply::Envelope(Err(codes::no_route())),
        }
    }
}
