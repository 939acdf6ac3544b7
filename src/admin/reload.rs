//! `POST /client/v4/escgate/reload`: re-read the config file, as SIGHUP does.

use serde_json::json;

use super::auth::Caller;
use super::codes;
use super::envelope::{ApiError, ApiResult, ApiSuccess, ErrorItem};
use crate::state::Writer;

/// Loads `config_path`; on success publishes it (tenant state kept) and reports what it holds
/// and which stored ids the new config no longer names. On failure nothing changes and every
/// problem is listed in `error_chain`.
pub fn reload(writer: &Writer, caller: &Caller, config_path: &std::path::Path) -> ApiResult {
    if !caller.can_reload() {
        return Err(codes::not_permitted(
            "config:reload (keys: accounts = [\"*\"])",
        ));
    }
    match crate::config::load_file(config_path) {
        Ok(config) => {
            let config = std::sync::Arc::new(config);
            writer.replace_config(config.clone());
            let orphans = writer.shared().load().tenant.orphans(&config);
            Ok(ApiSuccess::ok(json!({
                "zones": config.zones.len(),
                "accounts": config.accounts.len(),
                "orphaned_state": orphans,
            })))
        }
        Err(errors) => Err(ApiError::from_items(
            400,
            vec![ErrorItem::new(
                codes::RELOAD_REJECTED,
                "The config file was rejected; the running config is unchanged",
            )
            .with_chain(
                errors
                    .0
                    .into_iter()
                    .map(|e| ErrorItem::new(codes::RELOAD_PROBLEM, e))
                    .collect(),
            )],
        )),
    }
}
