//! Hot reload: re-read the file, compile it, and swap it into the shared snapshot.

use std::path::Path;
use std::sync::Arc;

use super::{load_file, ConfigErrors};
use crate::state::{SharedSnapshot, Snapshot};

/// Loads `path` and, when valid, swaps it in with the current tenant state. Uses `rcu` so a
/// concurrent tenant-state write is not lost. An invalid file changes nothing.
///
/// `[server]` keys (listeners, threads) only take effect on restart.
pub fn reload(shared: &SharedSnapshot, path: &Path) -> Result<(), ConfigErrors> {
    let config = Arc::new(load_file(path)?);
    shared.rcu(|current| Snapshot {
        config: config.clone(),
        tenant: current.tenant.clone(),
    });
    Ok(())
}
