//! File names of one file store, all derived from `server.state_path`, and the directory
//! operations on them.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// The snapshot `<state>`, its temp file `<state>.tmp` and the journal segments
/// `<state>.journal.<n>` (n ≥ 1, zero-padded to 6 digits so a listing sorts like replay order).
#[derive(Debug, Clone)]
pub(super) struct Layout {
    snapshot: PathBuf,
    segment_prefix: String,
}

impl Layout {
    pub(super) fn new(snapshot: PathBuf) -> Self {
        let mut segment_prefix = snapshot
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        segment_prefix.push_str(".journal.");
        Layout {
            snapshot,
            segment_prefix,
        }
    }

    pub(super) fn snapshot(&self) -> &Path {
        &self.snapshot
    }

    pub(super) fn temp(&self) -> PathBuf {
        let mut name = self.snapshot.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        self.snapshot.with_file_name(name)
    }

    pub(super) fn segment(&self, number: u64) -> PathBuf {
        self.snapshot
            .with_file_name(format!("{}{number:06}", self.segment_prefix))
    }

    pub(super) fn directory(&self) -> &Path {
        match self.snapshot.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        }
    }

    /// Numbers of the journal segments present, ascending. Names that merely share the prefix
    /// (`state.json.journal.old`) are not segments. A missing directory has none.
    pub(super) fn segments(&self) -> io::Result<Vec<u64>> {
        let entries = match fs::read_dir(self.directory()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut numbers = Vec::new();
        for entry in entries {
            let name = entry?.file_name();
            let Some(suffix) = name
                .to_str()
                .and_then(|n| n.strip_prefix(&self.segment_prefix))
            else {
                continue;
            };
            if !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(number) = suffix.parse::<u64>() {
                    numbers.push(number);
                }
            }
        }
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Makes created, renamed and deleted entries of the directory survive a power loss.
    pub(super) fn sync_directory(&self) -> io::Result<()> {
        File::open(self.directory())?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_from_the_state_path() {
        let layout = Layout::new(PathBuf::from("var/state.json"));
        assert_eq!(layout.temp(), PathBuf::from("var/state.json.tmp"));
        assert_eq!(
            layout.segment(1),
            PathBuf::from("var/state.json.journal.000001")
        );
        assert_eq!(
            layout.segment(1_234_567),
            PathBuf::from("var/state.json.journal.1234567")
        );
        assert_eq!(layout.directory(), Path::new("var"));
        assert_eq!(
            Layout::new(PathBuf::from("state.json")).directory(),
            Path::new(".")
        );
    }
}
