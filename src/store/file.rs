//! The default store: one JSON document replaced atomically (temp file, fsync, rename, fsync dir).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Store, StoreError};
use crate::state::tenant::{TenantDocument, TenantState};

/// A JSON state file. A crash at any point leaves either the old or the new complete document:
/// the new one is written to `<file>.tmp`, synced, renamed over the file, and the directory
/// entry is synced so the rename itself survives a power loss.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store at `path` (the file need not exist yet; [`FileStore::create_directory`] makes
    /// its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore { path: path.into() }
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the state file's directory (and its parents) when missing, syncing the parent of
    /// each created level so the new directory survives a crash: the server calls this at
    /// start, so a fresh checkout's `var/state.json` works without a manual `mkdir`.
    pub fn create_directory(&self) -> Result<(), StoreError> {
        let mut missing = Vec::new();
        let mut dir = self.directory();
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
                .map_err(|e| self.io_error(e))?;
            let parent = match dir.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            File::open(parent)
                .and_then(|parent| parent.sync_all())
                .map_err(|e| self.io_error(e))?;
        }
        Ok(())
    }

    fn io_error(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn temp_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        self.path.with_file_name(name)
    }

    fn directory(&self) -> &Path {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        }
    }
}

impl Store for FileStore {
    fn load(&self) -> Result<TenantState, StoreError> {
        let text = match fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TenantState::default()),
            Err(e) => return Err(self.io_error(e)),
        };
        let doc: TenantDocument =
            serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
                path: self.path.display().to_string(),
                message: e.to_string(),
            })?;
        if doc.format != TenantDocument::FORMAT {
            return Err(StoreError::Corrupt {
                path: self.path.display().to_string(),
                message: format!(
                    "format {} is not supported (expected {})",
                    doc.format,
                    TenantDocument::FORMAT
                ),
            });
        }
        Ok(TenantState::from_document(doc))
    }

    fn save(&self, state: &TenantState) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(&state.to_document()).map_err(|e| StoreError::Corrupt {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        let temp = self.temp_path();
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|e| self.io_error(e))?;
        file.write_all(&bytes).map_err(|e| self.io_error(e))?;
        file.sync_all().map_err(|e| self.io_error(e))?;
        drop(file);
        fs::rename(&temp, &self.path).map_err(|e| self.io_error(e))?;
        File::open(self.directory())
            .and_then(|dir| dir.sync_all())
            .map_err(|e| self.io_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::tenant::EscSetting;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("escgate-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn missing_file_loads_empty_and_save_then_load_round_trips() {
        let dir = temp_dir("roundtrip");
        let store = FileStore::new(dir.join("state.json"));
        assert!(store.load().unwrap().zone_ids().is_empty());
        let state = TenantState::default().with_zone_esc(
            "z",
            EscSetting {
                always: true,
                with_secret: Some("k".into()),
            },
        );
        store.save(&state).unwrap();
        assert!(!store.temp_path().exists());
        let loaded = store.load().unwrap();
        assert_eq!(loaded.to_document(), state.to_document());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn create_directory_makes_missing_levels_then_save_works() {
        let dir = temp_dir("mkdir");
        let store = FileStore::new(dir.join("var/deeper/state.json"));
        assert!(store.save(&TenantState::default()).is_err());
        store.create_directory().unwrap();
        store.create_directory().unwrap();
        store.save(&TenantState::default()).unwrap();
        assert!(store.load().unwrap().zone_ids().is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn corrupt_or_unknown_format_is_an_error_not_a_panic() {
        let dir = temp_dir("corrupt");
        let path = dir.join("state.json");
        let store = FileStore::new(&path);
        fs::write(&path, b"{not json").unwrap();
        assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
        fs::write(&path, br#"{"format": 99}"#).unwrap();
        assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn failed_save_keeps_the_previous_document() {
        let dir = temp_dir("failed");
        let path = dir.join("state.json");
        let store = FileStore::new(&path);
        let first = TenantState::default().with_account_esc(
            "a",
            EscSetting {
                always: true,
                with_secret: None,
            },
        );
        store.save(&first).unwrap();
        // A directory where the temp file should go makes the next save fail.
        fs::create_dir_all(store.temp_path()).unwrap();
        assert!(store.save(&TenantState::default()).is_err());
        assert_eq!(store.load().unwrap().to_document(), first.to_document());
        fs::remove_dir_all(dir).unwrap();
    }
}
