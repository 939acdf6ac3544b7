//! Durable tenant state: the [`Store`] trait and its default file backend, a snapshot plus an
//! append-only journal.
//!
//! Handlers never see a store: they send typed changes to [`crate::state::Writer`], which
//! persists each change through this trait before publishing the next state. A distributed
//! backend (etcd) is another implementation of [`Store`]; nothing else changes.
//!
//! # File layout ([`FileStore`], all names derived from `server.state_path`)
//!
//! - `state.json`: the snapshot, the [`crate::state::tenant::TenantDocument`] JSON (`format`
//!   1). Its optional `journal_from` names the first journal segment to replay on top of it;
//!   files without it (written before the journal) replay every segment.
//! - `state.json.journal.000001`, `…000002`, …: journal segments. Each acknowledged write
//!   appends one line, a [`crate::state::Record`] holding the resulting value of the one key the
//!   change touched (`{"set":"zone_esc","zone_id":…,"esc":{…}|null}`, `account_esc`,
//!   `waf_zone`), then `sync_data`s before the write is acknowledged: its cost does not depend
//!   on how much state exists. Records are values, so replay is idempotent.
//! - `state.json.tmp`: a snapshot being written (ignored by a load).
//!
//! **Compaction**, off the request path: when the open segment reaches
//! [`file::DEFAULT_COMPACTION_BYTES`] and the snapshot's size, the writer creates segment n+1
//! (synced, directory synced) and appends there from then on; a background thread writes the
//! state as of the rotation into the snapshot (temp file, fsync, rename, directory fsync) with
//! `journal_from = n+1`, then deletes segments ≤ n. The writer never waits for it; while one
//! runs, appends continue in the current segment.
//!
//! **Load**: the snapshot, then every segment from `journal_from` (default 1) on, in order.
//! Older segments are leftovers of an interrupted delete and are ignored (deleted when the store
//! opens for writing). The replayed segments must be consecutive (a gap is an error). Bytes
//! after the last newline of the last segment are a torn append that was never acknowledged:
//! dropped, and cut off when the store opens for writing. Any other bad line is
//! [`StoreError::Corrupt`] naming the file and line, as is an unknown snapshot `format`.
//!
//! **Crash points**, each loading the last acknowledged state: mid-append (torn tail, dropped);
//! after creating segment n+1 (an empty or short extra segment, replayed); mid-snapshot (a stale
//! `state.json.tmp`, ignored; the old snapshot and all segments still replay); after the rename
//! (segments below `journal_from` ignored); mid-delete (likewise).

mod file;
mod journal;
mod layout;
#[cfg(test)]
mod tests;

pub use file::{FileStore, DEFAULT_COMPACTION_BYTES};

use crate::state::tenant::TenantState;
use crate::state::Change;

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
    /// A stored file is not valid JSON of the expected shape (`path` is the file, `message`
    /// names the line for a journal segment).
    #[error("state store {path}: invalid document: {message}")]
    Corrupt { path: String, message: String },
}

/// Where tenant state lives between restarts.
///
/// Contract: when [`Store::commit`] returns `Ok`, a later [`Store::load`] (also after a crash
/// or `kill -9` of the process) returns that state or a newer one; when it returns `Err`, the
/// previously committed state is still what `load` returns.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The last committed state; the empty state when nothing was ever committed.
    fn load(&self) -> Result<TenantState, StoreError>;

    /// Durably records `change`, whose result is `next` (the store persists what it needs:
    /// the changed key's value from `next`, or all of `next` when it compacts).
    fn commit(&self, change: &Change, next: &TenantState) -> Result<(), StoreError>;
}
