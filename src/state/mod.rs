//! The immutable snapshot the hot path reads, and the single writer that replaces it.

mod pmap;
mod record;
pub mod tenant;
mod writer;

use std::sync::Arc;

use arc_swap::ArcSwap;

pub use pmap::PMap;
pub use record::Record;
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

/// Opens the tenant state of `config` (the file store at `server.state_path`: snapshot plus
/// journal, see [`crate::store`]) and returns the shared snapshot and its writer, ready for the
/// proxy and [`crate::admin::service`]. A missing state file is an empty state (its directory is
/// created); an unreadable or invalid one is an error (never silently replaced).
pub fn open(
    config: crate::config::Config,
) -> Result<(SharedSnapshot, Arc<Writer>), crate::store::StoreError> {
    let store = Arc::new(crate::store::FileStore::new(&config.server.state_path));
    store.create_directory()?;
    let tenant = store.open()?;
    let shared: SharedSnapshot = Arc::new(ArcSwap::from_pointee(Snapshot {
        config: Arc::new(config),
        tenant: Arc::new(tenant),
    }));
    let writer = Arc::new(Writer::new(shared.clone(), store));
    Ok((shared, writer))
}
