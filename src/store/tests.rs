//! The file store on real files: round trips, replay, torn tails, corruption, rotation and
//! compaction, and every crash point (files built in the state a crash would leave them).

use std::fs;
use std::path::{Path, PathBuf};

use super::layout::Layout;
use super::{FileStore, Store, StoreError};
use crate::state::tenant::{EscSetting, TenantState};
use crate::state::{Change, EscEdit, SecretEdit};
use crate::waf::WafZoneState;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("escgate-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn state(&self) -> PathBuf {
        self.0.join("state.json")
    }

    fn segment(&self, n: u64) -> PathBuf {
        Layout::new(self.state()).segment(n)
    }

    fn segments(&self) -> Vec<u64> {
        Layout::new(self.state()).segments().unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn secret(zone: &str, n: u64) -> Change {
    Change::SetZoneEsc {
        zone_id: zone.into(),
        edit: EscEdit {
            always: None,
            secret: SecretEdit::Set(format!("v{n}")),
        },
    }
}

/// Commits `change` on top of `state` through `store`, returning the next state (what the
/// writer does, minus publishing).
fn commit(store: &FileStore, state: &TenantState, change: Change) -> TenantState {
    let next = change.apply(state);
    store.commit(&change, &next).unwrap();
    next
}

fn same(a: &TenantState, b: &TenantState) {
    assert_eq!(a.to_document(), b.to_document());
}

fn on() -> EscSetting {
    EscSetting {
        always: true,
        with_secret: None,
    }
}

fn record_line(zone: &str, n: u64) -> String {
    format!(r#"{{"set":"zone_esc","zone_id":"{zone}","esc":{{"with_secret":"v{n}"}}}}"#) + "\n"
}

#[test]
fn missing_files_load_empty_and_commits_round_trip_through_the_journal() {
    let dir = TempDir::new("roundtrip");
    let store = FileStore::new(dir.state());
    assert!(store.load().unwrap().zone_ids().is_empty());
    assert!(store.open().unwrap().zone_ids().is_empty());
    let mut state = TenantState::default();
    state = commit(&store, &state, secret("z", 1));
    state = commit(
        &store,
        &state,
        Change::SetAccountEsc {
            account_id: "a".into(),
            edit: EscEdit {
                always: Some(true),
                secret: SecretEdit::Keep,
            },
        },
    );
    let waf = WafZoneState {
        next_serial: 3,
        created_on: Some("2026-01-01T00:00:00Z".into()),
        ..Default::default()
    };
    state = commit(
        &store,
        &state,
        Change::SetWafZone {
            zone_id: "z".into(),
            state: Box::new(waf.clone()),
        },
    );
    state = commit(
        &store,
        &state,
        Change::SetZoneEsc {
            zone_id: "z".into(),
            edit: EscEdit::reenable(),
        },
    );
    assert!(!dir.state().exists(), "no snapshot before a compaction");
    let text = fs::read_to_string(dir.segment(1)).unwrap();
    assert_eq!(text.lines().count(), 4, "one line per write:\n{text}");

    let loaded = FileStore::new(dir.state()).load().unwrap();
    same(&loaded, &state);
    assert!(loaded.zone_esc("z").is_none());
    assert_eq!(**loaded.waf_zone("z").unwrap(), waf);
    assert!(loaded.account_esc("a").unwrap().always);

    // A second store on the same files continues the same segment.
    drop(store);
    let reopened = FileStore::new(dir.state());
    same(&reopened.open().unwrap(), &state);
    let state = commit(&reopened, &state, secret("y", 2));
    assert_eq!(dir.segments(), vec![1]);
    same(&FileStore::new(dir.state()).load().unwrap(), &state);
}

#[test]
fn replay_is_idempotent_over_a_snapshot_that_already_holds_the_records() {
    let dir = TempDir::new("idempotent");
    let store = FileStore::new(dir.state());
    let mut state = TenantState::default();
    for n in 1..=3 {
        state = commit(&store, &state, secret("z", n));
    }
    // The snapshot already has v3, and the journal replays v1..v3 again: same result.
    let mut doc = state.to_document();
    doc.journal_from = 1;
    fs::write(dir.state(), serde_json::to_vec(&doc).unwrap()).unwrap();
    same(&FileStore::new(dir.state()).load().unwrap(), &state);
}

#[test]
fn save_replaces_everything_and_old_snapshots_without_journal_from_still_load() {
    let dir = TempDir::new("save");
    // A state file written before the journal existed.
    fs::write(
        dir.state(),
        br#"{"format":1,"zones":{"z":{"esc":{"always":true}}},"accounts":{}}"#,
    )
    .unwrap();
    let store = FileStore::new(dir.state());
    let old = store.open().unwrap();
    assert!(old.zone_esc("z").unwrap().always);
    let state = commit(&store, &old, secret("z", 1));
    same(&FileStore::new(dir.state()).load().unwrap(), &state);

    let replacement = TenantState::default().with_account_esc("a", on());
    store.save(&replacement).unwrap();
    assert_eq!(dir.segments(), vec![2], "older segments deleted");
    assert!(!Layout::new(dir.state()).temp().exists());
    same(&FileStore::new(dir.state()).load().unwrap(), &replacement);
    let after = commit(&store, &replacement, secret("q", 9));
    same(&FileStore::new(dir.state()).load().unwrap(), &after);
}

#[test]
fn save_creates_nothing_without_a_directory_and_create_directory_fixes_that() {
    let dir = TempDir::new("mkdir");
    let store = FileStore::new(dir.0.join("var/deeper/state.json"));
    assert!(store.save(&TenantState::default()).is_err());
    store.create_directory().unwrap();
    store.create_directory().unwrap();
    store.save(&TenantState::default()).unwrap();
    assert!(store.load().unwrap().zone_ids().is_empty());
}

#[test]
fn torn_tail_is_dropped_on_load_and_cut_off_when_opened_for_writing() {
    let dir = TempDir::new("torn");
    let store = FileStore::new(dir.state());
    let mut state = TenantState::default();
    state = commit(&store, &state, secret("z", 1));
    drop(store);
    // A crash in the middle of appending v2: part of the line, no newline, never acknowledged.
    let torn = &record_line("z", 2)[..20];
    let mut bytes = fs::read(dir.segment(1)).unwrap();
    let acknowledged_len = bytes.len();
    bytes.extend_from_slice(torn.as_bytes());
    fs::write(dir.segment(1), &bytes).unwrap();

    let loaded = FileStore::new(dir.state()).load().unwrap();
    same(&loaded, &state);
    assert_eq!(
        fs::read(dir.segment(1)).unwrap().len(),
        bytes.len(),
        "load only reads"
    );

    let store = FileStore::new(dir.state());
    same(&store.open().unwrap(), &state);
    assert_eq!(fs::read(dir.segment(1)).unwrap().len(), acknowledged_len);
    // The next write starts on a fresh line, so the torn bytes never become a corrupt record.
    let state = commit(&store, &state, secret("z", 3));
    same(&FileStore::new(dir.state()).load().unwrap(), &state);
    assert_eq!(
        FileStore::new(dir.state())
            .load()
            .unwrap()
            .zone_esc("z")
            .unwrap()
            .with_secret
            .as_deref(),
        Some("v3")
    );
}

#[test]
fn first_commit_without_open_also_cuts_off_a_torn_tail() {
    let dir = TempDir::new("torn-lazy");
    fs::write(
        dir.segment(1),
        record_line("z", 1) + &record_line("z", 2)[..9],
    )
    .unwrap();
    let store = FileStore::new(dir.state());
    let state = store.load().unwrap();
    let state = commit(&store, &state, secret("y", 5));
    let loaded = FileStore::new(dir.state()).load().unwrap();
    same(&loaded, &state);
    assert_eq!(
        loaded.zone_esc("z").unwrap().with_secret.as_deref(),
        Some("v1")
    );
}

#[test]
fn corrupt_record_in_the_middle_is_an_error_naming_file_and_line() {
    let dir = TempDir::new("corrupt-middle");
    let text = record_line("z", 1) + "{\"set\":\"zone_esc\",\"zone_id\":\n" + &record_line("z", 3);
    fs::write(dir.segment(1), text).unwrap();
    for result in [
        FileStore::new(dir.state()).load(),
        FileStore::new(dir.state()).open(),
    ] {
        match result {
            Err(StoreError::Corrupt { path, message }) => {
                assert!(path.ends_with("state.json.journal.000001"), "{path}");
                assert!(message.starts_with("line 2:"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
    let store = FileStore::new(dir.state());
    let change = secret("z", 4);
    assert!(
        store
            .commit(&change, &change.apply(&TenantState::default()))
            .is_err(),
        "a store that cannot load refuses writes"
    );
}

#[test]
fn corrupt_final_line_is_an_error_too() {
    // Only a missing newline marks an unacknowledged append; a complete bad line is corruption.
    let dir = TempDir::new("corrupt-last");
    fs::write(dir.segment(1), record_line("z", 1) + "garbage\n").unwrap();
    assert!(matches!(
        FileStore::new(dir.state()).load(),
        Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn torn_tail_in_a_segment_that_is_not_the_last_is_corrupt() {
    let dir = TempDir::new("torn-middle");
    fs::write(dir.segment(1), record_line("z", 1) + "{\"set\"").unwrap();
    fs::write(dir.segment(2), record_line("z", 2)).unwrap();
    match FileStore::new(dir.state()).load() {
        Err(StoreError::Corrupt { path, message }) => {
            assert!(path.ends_with(".journal.000001"), "{path}");
            assert!(message.starts_with("line 2:"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_gap_or_a_missing_named_segment_is_corrupt() {
    let dir = TempDir::new("gap");
    fs::write(dir.segment(1), record_line("z", 1)).unwrap();
    fs::write(dir.segment(3), record_line("z", 3)).unwrap();
    match FileStore::new(dir.state()).load() {
        Err(StoreError::Corrupt { path, .. }) => assert!(path.ends_with(".000002"), "{path}"),
        other => panic!("{other:?}"),
    }
    fs::remove_file(dir.segment(1)).unwrap();
    fs::remove_file(dir.segment(3)).unwrap();
    fs::write(dir.state(), br#"{"format":1,"journal_from":4}"#).unwrap();
    match FileStore::new(dir.state()).load() {
        Err(StoreError::Corrupt { path, .. }) => assert!(path.ends_with(".000004"), "{path}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn corrupt_snapshot_or_unknown_format_is_an_error_not_a_panic() {
    let dir = TempDir::new("corrupt-snapshot");
    let store = FileStore::new(dir.state());
    fs::write(dir.state(), b"{not json").unwrap();
    assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
    fs::write(dir.state(), br#"{"format": 99}"#).unwrap();
    assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
    fs::write(dir.state(), br#"{"format": 1, "journal_from": "x"}"#).unwrap();
    assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
}

#[test]
fn failed_commit_changes_nothing() {
    let dir = TempDir::new("failed");
    let store = FileStore::new(dir.state());
    let state = commit(&store, &TenantState::default(), secret("z", 1));
    // A store whose directory does not exist cannot create its journal: an error, no files.
    let elsewhere = FileStore::new(dir.0.join("missing/state.json"));
    let change = secret("z", 2);
    assert!(elsewhere.commit(&change, &change.apply(&state)).is_err());
    assert!(!dir.0.join("missing").exists());
    same(&FileStore::new(dir.state()).load().unwrap(), &state);
}

#[test]
fn journal_rotates_and_compacts_in_the_background_without_losing_a_write() {
    let dir = TempDir::new("compact");
    let store = FileStore::new(dir.state()).with_compaction_bytes(300);
    let mut state = TenantState::default();
    for n in 0..200u64 {
        state = commit(&store, &state, secret(&format!("zone-{}", n % 17), n));
        // Writes keep landing while compactions run; loads always see every acknowledged one.
        if n % 50 == 0 {
            same(&FileStore::new(dir.state()).load().unwrap(), &state);
        }
    }
    store.finish_compaction();
    let segments = dir.segments();
    let doc: crate::state::tenant::TenantDocument =
        serde_json::from_slice(&fs::read(dir.state()).unwrap()).unwrap();
    assert!(doc.journal_from > 1, "compacted at least once: {doc:?}");
    assert_eq!(
        segments.first().copied(),
        Some(doc.journal_from),
        "older segments deleted: {segments:?}"
    );
    assert!(
        segments.len() <= 2,
        "compaction keeps the journal short: {segments:?}"
    );
    same(&FileStore::new(dir.state()).load().unwrap(), &state);
    drop(store);
    let reopened = FileStore::new(dir.state());
    same(&reopened.open().unwrap(), &state);
}

/// Builds the files a crash leaves during a compaction of segment 1 into a snapshot with
/// `journal_from = 2`: segment 1 holds v1..v3 of `z`, segment 2 holds v4 of `z` and `y`.
struct CompactionCrash {
    dir: TempDir,
    before: TenantState,
    after: TenantState,
}

impl CompactionCrash {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(name);
        let store = FileStore::new(dir.state());
        let mut before = TenantState::default();
        for n in 1..=3 {
            before = commit(&store, &before, secret("z", n));
        }
        drop(store);
        let mut after = secret("z", 4).apply(&before);
        after = secret("y", 5).apply(&after);
        CompactionCrash { dir, before, after }
    }

    fn rotated(&self, with_records: bool) {
        let text = if with_records {
            record_line("z", 4) + &record_line("y", 5)
        } else {
            String::new()
        };
        fs::write(self.dir.segment(2), text).unwrap();
    }

    fn snapshot_renamed(&self) {
        let mut doc = self.before.to_document();
        doc.journal_from = 2;
        fs::write(self.dir.state(), serde_json::to_vec(&doc).unwrap()).unwrap();
    }

    fn expect(&self, expected: &TenantState) {
        same(&FileStore::new(self.dir.state()).load().unwrap(), expected);
        let store = FileStore::new(self.dir.state());
        same(&store.open().unwrap(), expected);
        // The store keeps working from there.
        let next = commit(&store, expected, secret("x", 6));
        same(&FileStore::new(self.dir.state()).load().unwrap(), &next);
    }
}

#[test]
fn crash_mid_rotation_new_segment_empty() {
    let crash = CompactionCrash::new("crash-rotation");
    crash.rotated(false);
    crash.expect(&crash.before);
}

#[test]
fn crash_mid_snapshot_leaves_a_partial_temp_file() {
    let crash = CompactionCrash::new("crash-snapshot");
    crash.rotated(true);
    fs::write(
        Layout::new(crash.dir.state()).temp(),
        b"{\"format\":1,\"zones\":{\"z\"",
    )
    .unwrap();
    crash.expect(&crash.after);
    // The next compaction overwrites the stale temp file.
    let store = FileStore::new(crash.dir.state());
    store.save(&crash.after).unwrap();
    same(
        &FileStore::new(crash.dir.state()).load().unwrap(),
        &crash.after,
    );
}

#[test]
fn crash_after_the_snapshot_rename_before_deleting_old_segments() {
    let crash = CompactionCrash::new("crash-rename");
    crash.rotated(true);
    crash.snapshot_renamed();
    assert_eq!(crash.dir.segments(), vec![1, 2]);
    crash.expect(&crash.after);
    assert_eq!(
        crash.dir.segments(),
        vec![2],
        "opening deletes the leftovers"
    );
}

#[test]
fn crash_mid_delete_of_old_segments() {
    let crash = CompactionCrash::new("crash-delete");
    // A store compacted twice: segments 1 and 2 are obsolete, 3 is current; 1 is already gone.
    crash.rotated(true);
    fs::write(crash.dir.segment(3), record_line("w", 7)).unwrap();
    let mut doc = crash.after.to_document();
    doc.journal_from = 3;
    fs::write(crash.dir.state(), serde_json::to_vec(&doc).unwrap()).unwrap();
    fs::remove_file(crash.dir.segment(1)).unwrap();
    let expected = secret("w", 7).apply(&crash.after);
    crash.expect(&expected);
    assert_eq!(crash.dir.segments(), vec![3]);
}

#[test]
fn crash_mid_append_right_after_a_rotation() {
    let crash = CompactionCrash::new("crash-append-rotated");
    crash.rotated(false);
    fs::write(crash.dir.segment(2), &record_line("z", 4)[..12]).unwrap();
    crash.expect(&crash.before);
}

#[test]
fn names_that_only_share_the_prefix_are_not_segments() {
    let dir = TempDir::new("prefix");
    fs::write(dir.0.join("state.json.journal.old"), b"x").unwrap();
    fs::write(dir.0.join("state.json.journal."), b"x").unwrap();
    fs::write(dir.segment(1), record_line("z", 1)).unwrap();
    assert_eq!(dir.segments(), vec![1]);
    assert!(FileStore::new(dir.state()).load().is_ok());
    assert!(Path::new(&dir.0.join("state.json.journal.old")).exists());
}
