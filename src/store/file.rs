//! The default store: a JSON snapshot plus an append-only journal of one record per write,
//! compacted into a new snapshot on a background thread (layout and crash analysis in
//! [`crate::store`]).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::journal::{parse_segment, Appender};
use super::layout::Layout;
use super::{Store, StoreError};
use crate::state::tenant::{TenantDocument, TenantState};
use crate::state::Change;

/// Journal bytes in the open segment below which no compaction starts, whatever the snapshot
/// size: compacting a small state more often would buy nothing.
pub const DEFAULT_COMPACTION_BYTES: u64 = 4 << 20;

/// A snapshot document at `path` plus journal segments next to it. An acknowledged write costs
/// one appended line and one `sync_data`, however much state exists; the snapshot is rewritten
/// off the request path once the open segment outgrows both the snapshot and
/// [`DEFAULT_COMPACTION_BYTES`] (so replay at start stays bounded by about the snapshot size).
#[derive(Debug)]
pub struct FileStore {
    layout: Layout,
    /// `None`: the default policy (the segment outgrew the snapshot and the default size).
    compaction_bytes: Option<u64>,
    journal: Mutex<Option<Appender>>,
    compaction: Arc<CompactionStatus>,
    compactor: Mutex<Option<JoinHandle<()>>>,
}

/// Shared with the compaction thread; the writer only reads it (never waits on it).
#[derive(Debug, Default)]
struct CompactionStatus {
    running: AtomicBool,
    snapshot_bytes: AtomicU64,
}

/// What a load found: the state and where the journal continues.
struct Loaded {
    state: TenantState,
    /// First segment that belongs to the state (older ones are leftovers of a compaction).
    first_segment: u64,
    /// The last replayed segment and the length of its complete records.
    tail: Option<(u64, u64)>,
    snapshot_bytes: u64,
}

impl FileStore {
    /// A store whose snapshot is `path` (nothing need exist yet; [`FileStore::create_directory`]
    /// makes its directory). Reading is lazy: see [`Store::load`] and [`FileStore::open`].
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            layout: Layout::new(path.into()),
            compaction_bytes: None,
            journal: Mutex::new(None),
            compaction: Arc::default(),
            compactor: Mutex::new(None),
        }
    }

    /// The same store compacting whenever the open segment holds `bytes`, whatever the
    /// snapshot size (tests and benches that want compactions to happen often).
    pub fn with_compaction_bytes(mut self, bytes: u64) -> Self {
        self.compaction_bytes = Some(bytes);
        self
    }

    /// The snapshot file (`server.state_path`).
    pub fn path(&self) -> &Path {
        self.layout.snapshot()
    }

    /// Creates the state file's directory (and its parents) when missing, syncing the parent of
    /// each created level so the new directory survives a crash: the server calls this at
    /// start, so a fresh checkout's `var/state.json` works without a manual `mkdir`.
    pub fn create_directory(&self) -> Result<(), StoreError> {
        let mut missing = Vec::new();
        let mut dir = self.layout.directory();
        while !dir.exists() {
            missing.push(dir);
            match dir.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => dir = parent,
                _ => break,
            }
        }
        for dir in missing.into_iter().rev() {
            fs::create_dir(dir)
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => Ok(()),
                    _ => Err(e),
                })
                .map_err(|e| io_error(self.path(), e))?;
            let parent = match dir.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            File::open(parent)
                .and_then(|parent| parent.sync_all())
                .map_err(|e| io_error(self.path(), e))?;
        }
        Ok(())
    }

    /// Loads the state and opens the journal for appending: a torn final record (a crash in the
    /// middle of an append that was never acknowledged) is cut off, and segments an interrupted
    /// compaction left behind are deleted. The server calls this once at start; without it the
    /// first [`Store::commit`] does the same.
    pub fn open(&self) -> Result<TenantState, StoreError> {
        let mut journal = self.lock_journal();
        self.finish_compaction();
        let loaded = self.read()?;
        *journal = Some(self.open_appender(&loaded)?);
        Ok(loaded.state)
    }

    /// Durably replaces the whole stored state with `state` (seeding a store, tests): rotates to
    /// a new segment, writes the snapshot, deletes the older segments. Waits for a compaction
    /// in progress; not for the request path.
    pub fn save(&self, state: &TenantState) -> Result<(), StoreError> {
        let mut journal = self.lock_journal();
        self.finish_compaction();
        let appender = match journal.take() {
            Some(appender) => appender,
            None => self.open_appender(&self.read()?)?,
        };
        let next_segment = appender.segment() + 1;
        let rotated = Appender::create(self.layout.segment(next_segment), next_segment)
            .and_then(|rotated| self.layout.sync_directory().map(|()| rotated));
        let rotated = match rotated {
            Ok(rotated) => rotated,
            Err(e) => {
                *journal = Some(appender);
                return Err(io_error(&self.layout.segment(next_segment), e));
            }
        };
        *journal = Some(rotated);
        let bytes = write_snapshot(&self.layout, state, next_segment)?;
        self.compaction
            .snapshot_bytes
            .store(bytes, Ordering::Relaxed);
        delete_segments_before(&self.layout, next_segment)
    }

    /// Waits until a background compaction (if one is running) has finished.
    pub fn finish_compaction(&self) {
        let handle = self
            .compactor
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(handle) = handle {
            // A panicking compaction already left the files in a loadable state.
            let _ = handle.join();
        }
    }

    fn lock_journal(&self) -> std::sync::MutexGuard<'_, Option<Appender>> {
        // A poisoned lock only means a writer panicked; the appender's length is still exact.
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`Self::read_once`], again when it failed because a compaction (this process's, or a
    /// running server's while `--validate` reads) replaced the snapshot and deleted the segments
    /// it covers between our reading the snapshot and reading a segment.
    fn read(&self) -> Result<Loaded, StoreError> {
        let snapshot_identity = || {
            use std::os::unix::fs::MetadataExt;
            let meta = fs::metadata(self.layout.snapshot()).ok()?;
            Some((meta.ino(), meta.mtime(), meta.mtime_nsec(), meta.len()))
        };
        let mut retries = 0;
        loop {
            let before = snapshot_identity();
            match self.read_once() {
                Err(_) if retries < 10 && snapshot_identity() != before => retries += 1,
                result => return result,
            }
        }
    }

    /// Reads the snapshot, then replays the segments it does not include. Never writes.
    fn read_once(&self) -> Result<Loaded, StoreError> {
        let snapshot_path = self.layout.snapshot();
        let (doc, snapshot_bytes) = match fs::read(snapshot_path) {
            Ok(text) => {
                let doc: TenantDocument =
                    serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
                        path: snapshot_path.display().to_string(),
                        message: e.to_string(),
                    })?;
                (doc, text.len() as u64)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
                TenantDocument {
                    format: TenantDocument::FORMAT,
                    ..Default::default()
                },
                0,
            ),
            Err(e) => return Err(io_error(snapshot_path, e)),
        };
        if doc.format != TenantDocument::FORMAT {
            return Err(StoreError::Corrupt {
                path: snapshot_path.display().to_string(),
                message: format!(
                    "format {} is not supported (expected {})",
                    doc.format,
                    TenantDocument::FORMAT
                ),
            });
        }
        // 0 (documents from before the journal, or no snapshot yet): nothing was ever compacted,
        // so the journal starts at segment 1.
        let first_segment = doc.journal_from.max(1);
        let segments: Vec<u64> = self
            .layout
            .segments()
            .map_err(|e| io_error(self.layout.directory(), e))?
            .into_iter()
            .filter(|&n| n >= first_segment)
            .collect();
        self.check_sequence(&segments, first_segment, doc.journal_from)?;

        let mut state = TenantState::from_document(doc);
        let mut tail = None;
        for (index, &segment) in segments.iter().enumerate() {
            let path = self.layout.segment(segment);
            let bytes = fs::read(&path).map_err(|e| io_error(&path, e))?;
            let parsed = parse_segment(&bytes, &path)?;
            if parsed.torn_tail && index + 1 < segments.len() {
                // Rotation only follows an acknowledged append, so only the last can be torn.
                return Err(StoreError::Corrupt {
                    path: path.display().to_string(),
                    message: format!(
                        "line {}: incomplete record in a segment that is not the last",
                        parsed.records.len() + 1
                    ),
                });
            }
            for record in &parsed.records {
                state = record.apply(&state);
            }
            tail = Some((segment, parsed.complete_len));
        }
        Ok(Loaded {
            state,
            first_segment,
            tail,
            snapshot_bytes,
        })
    }

    /// The segments to replay must be `first, first+1, …` with no gap: a missing one would
    /// silently lose acknowledged writes.
    fn check_sequence(
        &self,
        segments: &[u64],
        first_segment: u64,
        journal_from: u64,
    ) -> Result<(), StoreError> {
        for (expected, &segment) in (first_segment..).zip(segments) {
            if segment != expected {
                return Err(self.missing_segment(expected));
            }
        }
        if segments.is_empty() && journal_from > 0 {
            // Compaction creates the segment before the snapshot that names it.
            return Err(self.missing_segment(journal_from));
        }
        Ok(())
    }

    fn missing_segment(&self, number: u64) -> StoreError {
        StoreError::Corrupt {
            path: self.layout.segment(number).display().to_string(),
            message: "journal segment missing (acknowledged writes would be lost)".into(),
        }
    }

    fn open_appender(&self, loaded: &Loaded) -> Result<Appender, StoreError> {
        delete_segments_before(&self.layout, loaded.first_segment)?;
        self.compaction
            .snapshot_bytes
            .store(loaded.snapshot_bytes, Ordering::Relaxed);
        match loaded.tail {
            Some((segment, complete_len)) => {
                let path = self.layout.segment(segment);
                Appender::open(path.clone(), segment, complete_len).map_err(|e| io_error(&path, e))
            }
            None => {
                let path = self.layout.segment(loaded.first_segment);
                Appender::create(path.clone(), loaded.first_segment)
                    .and_then(|appender| self.layout.sync_directory().map(|()| appender))
                    .map_err(|e| io_error(&path, e))
            }
        }
    }

    fn compaction_due(&self, appender: &Appender) -> bool {
        let threshold = self.compaction_bytes.unwrap_or_else(|| {
            let snapshot_bytes = self.compaction.snapshot_bytes.load(Ordering::Relaxed);
            DEFAULT_COMPACTION_BYTES.max(snapshot_bytes)
        });
        appender.len() >= threshold && !self.compaction.running.load(Ordering::Acquire)
    }

    /// Switches appends to a new segment and snapshots `state` (everything up to the rotation)
    /// on a background thread. The write that triggered it is already durable, so a failure
    /// here only postpones compaction.
    fn rotate_and_compact(&self, appender: &mut Appender, state: &TenantState) {
        let next_segment = appender.segment() + 1;
        let path = self.layout.segment(next_segment);
        let rotated = Appender::create(path.clone(), next_segment)
            .and_then(|rotated| self.layout.sync_directory().map(|()| rotated));
        let rotated = match rotated {
            Ok(rotated) => rotated,
            Err(error) => {
                // Without the directory sync the new segment might vanish in a power loss.
                let _ = fs::remove_file(&path);
                tracing::warn!(segment = %path.display(), %error, "journal rotation failed; compaction postponed");
                return;
            }
        };
        *appender = rotated;
        self.compaction.running.store(true, Ordering::Release);
        let layout = self.layout.clone();
        let status = self.compaction.clone();
        let state = state.clone();
        let spawned = std::thread::Builder::new()
            .name("escgate-compaction".into())
            .spawn(move || {
                let result = write_snapshot(&layout, &state, next_segment).and_then(|bytes| {
                    status.snapshot_bytes.store(bytes, Ordering::Relaxed);
                    delete_segments_before(&layout, next_segment)
                });
                if let Err(error) = result {
                    tracing::warn!(%error, "state compaction failed; the journal keeps the state");
                }
                status.running.store(false, Ordering::Release);
            });
        match spawned {
            Ok(handle) => {
                let mut compactor = self.compactor.lock().unwrap_or_else(|p| p.into_inner());
                // The previous compaction finished (it was not running), so this cannot block.
                if let Some(previous) = compactor.replace(handle) {
                    let _ = previous.join();
                }
            }
            Err(error) => {
                self.compaction.running.store(false, Ordering::Release);
                tracing::warn!(%error, "could not start the compaction thread");
            }
        }
    }
}

impl Store for FileStore {
    fn load(&self) -> Result<TenantState, StoreError> {
        self.read().map(|loaded| loaded.state)
    }

    fn commit(&self, change: &Change, next: &TenantState) -> Result<(), StoreError> {
        let mut line =
            serde_json::to_vec(&change.record(next)).map_err(|e| StoreError::Corrupt {
                path: self.path().display().to_string(),
                message: e.to_string(),
            })?;
        line.push(b'\n');
        let mut journal = self.lock_journal();
        let appender = match &mut *journal {
            Some(appender) => appender,
            None => {
                let loaded = self.read()?;
                journal.insert(self.open_appender(&loaded)?)
            }
        };
        appender
            .append(&line)
            .map_err(|e| io_error(appender.path(), e))?;
        if self.compaction_due(appender) {
            self.rotate_and_compact(appender, next);
        }
        Ok(())
    }
}

impl Drop for FileStore {
    fn drop(&mut self) {
        self.finish_compaction();
    }
}

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Replaces the snapshot atomically (temp file, fsync, rename, directory fsync) with `state`,
/// naming `journal_from` as the first segment to replay on top of it. Returns its size.
fn write_snapshot(
    layout: &Layout,
    state: &TenantState,
    journal_from: u64,
) -> Result<u64, StoreError> {
    let mut doc = state.to_document();
    doc.journal_from = journal_from;
    let bytes = serde_json::to_vec(&doc).map_err(|e| StoreError::Corrupt {
        path: layout.snapshot().display().to_string(),
        message: e.to_string(),
    })?;
    let temp = layout.temp();
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)
        .map_err(|e| io_error(&temp, e))?;
    file.write_all(&bytes).map_err(|e| io_error(&temp, e))?;
    file.sync_all().map_err(|e| io_error(&temp, e))?;
    drop(file);
    fs::rename(&temp, layout.snapshot()).map_err(|e| io_error(layout.snapshot(), e))?;
    layout
        .sync_directory()
        .map_err(|e| io_error(layout.directory(), e))?;
    Ok(bytes.len() as u64)
}

/// Deletes the segments a snapshot made obsolete (all numbered below `first_kept`).
fn delete_segments_before(layout: &Layout, first_kept: u64) -> Result<(), StoreError> {
    let segments = layout
        .segments()
        .map_err(|e| io_error(layout.directory(), e))?;
    let mut deleted = false;
    for segment in segments.into_iter().filter(|&n| n < first_kept) {
        let path = layout.segment(segment);
        match fs::remove_file(&path) {
            Ok(()) => deleted = true,
            // Already gone is what we want (another deleter got there first).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&path, e)),
        }
    }
    if deleted {
        layout
            .sync_directory()
            .map_err(|e| io_error(layout.directory(), e))?;
    }
    Ok(())
}
