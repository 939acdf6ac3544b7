//! ESC customizations: the data model and how each action edits a request or response.
//!
//! Everything here is compiled at config load ([`crate::config`]); the proxy only walks the
//! entries whose `when` matched (a bitmask computed once per request) and applies their actions.

pub mod actions;
pub mod apply;
pub mod decision;
pub mod headers;
pub mod uri;

pub use actions::{
    Action, CustomError, EscEntry, FeatureSet, Redirect, ResponseReplacement, StatusRedirect,
};
pub use apply::{
    apply_response_headers, apply_upstream_request, matched_entries, plan_request,
    response_replacement, RequestPlan,
};
pub use headers::{HeaderEdits, WireName};
pub use uri::{PathRewrite, UriRewrite};

/// Most entries one zone may have: the set of entries matching a request is a `u64` bitmask.
pub const MAX_ENTRIES_PER_ZONE: usize = 64;
