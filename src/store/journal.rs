//! Journal segments: one JSON [`Record`] per line, appended and `sync_data`ed per acknowledged
//! write.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::StoreError;
use crate::state::Record;

/// The records of one segment and the length of its complete part: bytes after the last
/// newline are a torn append (the crash came before its `sync_data` returned, so it was never
/// acknowledged) and are not records.
#[derive(Debug)]
pub(super) struct ParsedSegment {
    pub(super) records: Vec<Record>,
    pub(super) complete_len: u64,
    pub(super) torn_tail: bool,
}

/// Parses a segment's bytes. A line that is not a valid record is [`StoreError::Corrupt`]
/// naming the file and the 1-based line: an acknowledged write is never silently dropped.
pub(super) fn parse_segment(bytes: &[u8], path: &Path) -> Result<ParsedSegment, StoreError> {
    let complete_len = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last_newline| last_newline + 1);
    let mut records = Vec::new();
    // Every complete line ends with a newline; without the final one, `split` yields the lines.
    let lines = match complete_len {
        0 => None,
        len => Some(bytes[..len - 1].split(|&b| b == b'\n')),
    };
    for (index, line) in lines.into_iter().flatten().enumerate() {
        let record = serde_json::from_slice::<Record>(line).map_err(|e| StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!("line {}: {e}", index + 1),
        })?;
        records.push(record);
    }
    Ok(ParsedSegment {
        records,
        complete_len: complete_len as u64,
        torn_tail: complete_len < bytes.len(),
    })
}

/// The open tail segment. Appends are all-or-nothing as far as a later load can tell: a failed
/// append is cut off again, and a store whose cut-off failed refuses further appends (they could
/// land after garbage and turn a torn record into a corrupt middle one).
#[derive(Debug)]
pub(super) struct Appender {
    file: File,
    path: PathBuf,
    segment: u64,
    len: u64,
    broken: bool,
}

impl Appender {
    /// Opens an existing segment for appending, cutting off a torn final record.
    pub(super) fn open(path: PathBuf, segment: u64, complete_len: u64) -> io::Result<Self> {
        let file = OpenOptions::new().append(true).open(&path)?;
        if file.metadata()?.len() != complete_len {
            file.set_len(complete_len)?;
            file.sync_all()?;
        }
        Ok(Appender {
            file,
            path,
            segment,
            len: complete_len,
            broken: false,
        })
    }

    /// Creates a new empty segment and makes its directory entry durable before anything is
    /// acknowledged from it. The caller syncs the directory (`sync_directory`).
    pub(super) fn create(path: PathBuf, segment: u64) -> io::Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)?;
        file.sync_all()?;
        Ok(Appender {
            file,
            path,
            segment,
            len: 0,
            broken: false,
        })
    }

    /// Appends one complete line and waits until it is on disk.
    pub(super) fn append(&mut self, line: &[u8]) -> io::Result<()> {
        if self.broken {
            // An earlier failed append could not be cut off; try once more before writing.
            self.file.set_len(self.len)?;
            self.file.sync_all()?;
            self.broken = false;
        }
        let written = self
            .file
            .write_all(line)
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.broken = self
                    .file
                    .set_len(self.len)
                    .and_then(|()| self.file.sync_all())
                    .is_err();
                Err(e)
            }
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn segment(&self) -> u64 {
        self.segment
    }

    /// Bytes acknowledged in this segment.
    pub(super) fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"set":"zone_esc","zone_id":"z","esc":{"always":true}}"#;

    #[test]
    fn complete_lines_are_records_and_a_partial_last_line_is_a_torn_tail() {
        let path = Path::new("seg");
        let text = format!("{LINE}\n{LINE}\n{{\"set\":\"zo");
        let parsed = parse_segment(text.as_bytes(), path).unwrap();
        assert_eq!(parsed.records.len(), 2);
        assert!(parsed.torn_tail);
        assert_eq!(parsed.complete_len as usize, 2 * (LINE.len() + 1));

        let whole = format!("{LINE}\n");
        let parsed = parse_segment(whole.as_bytes(), path).unwrap();
        assert_eq!(parsed.records.len(), 1);
        assert!(!parsed.torn_tail);

        let empty = parse_segment(b"", path).unwrap();
        assert!(empty.records.is_empty() && !empty.torn_tail && empty.complete_len == 0);

        // A complete record without its newline is still torn: it was never acknowledged.
        let unterminated = parse_segment(LINE.as_bytes(), path).unwrap();
        assert!(unterminated.records.is_empty() && unterminated.torn_tail);
    }

    #[test]
    fn a_bad_complete_line_is_corrupt_with_file_and_line() {
        for bad in ["{\"set\":\"zone_esc\"", "", "\u{0}\u{0}"] {
            let text = format!("{LINE}\n{bad}\n{LINE}\n");
            match parse_segment(text.as_bytes(), Path::new("dir/seg.000003")) {
                Err(StoreError::Corrupt { path, message }) => {
                    assert_eq!(path, "dir/seg.000003");
                    assert!(message.starts_with("line 2:"), "{message}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
