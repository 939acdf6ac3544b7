//! Hot reload: re-read the file, compile it, and publish it through the single writer.

use std::path::Path;
use std::sync::Arc;

use super::{load_file, Config, ConfigErrors};
use crate::state::Writer;

/// Loads `path` and, when valid, publishes it with the current tenant state through `writer`
/// (serialized with tenant-state writes, so none is lost). An invalid file changes nothing.
/// Returns the config now serving.
///
/// `[server]` keys (listeners, threads, admin listener, state path) only take effect on restart.
pub fn reload(writer: &Writer, path: &Path) -> Result<Arc<Config>, ConfigErrors> {
    let config = Arc::new(load_file(path)?);
    writer.replace_config(config.clone());
    Ok(config)
}
