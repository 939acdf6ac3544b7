//! The immutable snapshot the hot path reads, and the single writer that replaces it.

mod pmap;
pub mod tenant;
mod writer;

use std::sync::Arc;

use arc_swap::ArcSwap;

pub use pmap::PMap;
pub use writer::{Change, EscEdit, SecretEdit, WriteError, Writer};

/// One consistent version of everything a request needs: operator config + tenant state.
/// A request loads it once and keeps the `Arc` for all its phases.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub config: Arc<crate::config::Config>,
    pub tenant: Arc<tenant::TenantState>,
}

/// The handle shared by the proxy, the admin API and the reloader.
pub type SharedSnapshot = Arc<ArcSwap<Snapshot>>;
