//! Durable tenant state: the [`Store`] trait and its default JSON-file backend.
//!
//! Handlers never see a store: they send typed changes to [`crate::state::Writer`], which persists
//! the whole next state through this trait before publishing it. A distributed backend (etcd) is
//! another implementation of [`Store`]; nothing else changes.

mod file;

pub use file::FileStore;

use crate::state::tenant::TenantState;

/// Why a store could not load or save.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading, writing, syncing or renaming failed.
    #[error("state store {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The stored document is not valid JSON of the expected shape.
    #[error("state store {path}: invalid document: {message}")]
    Corrupt { path: String, message: String },
}

/// Where tenant state lives between restarts.
///
/// Contract: when [`Store::save`] returns `Ok`, a later [`Store::load`] (also after a crash or
/// `kill -9` of the process) returns that state or a newer one; when it returns `Err`, the
/// previously saved state is still what `load` returns.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The last saved state; the empty state when nothing was ever saved.
    fn load(&self) -> Result<TenantState, StoreError>;

    /// Durably replaces the stored state with `state`.
    fn save(&self, state: &TenantState) -> Result<(), StoreError>;
}
