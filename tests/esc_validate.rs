//! `escgate --validate` checks the state file named by `server.state_path` against the config:
//! orphaned zone/account state is a warning (exit 0, it is kept), an unreadable or invalid state
//! file is an error (exit 1).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{temp_dir, Escgate, ACCOUNT_ID, ZONE_ID};
use escgate::state::tenant::{EscSetting, TenantState};
use escgate::store::{FileStore, Store};

const GONE_ZONE: &str = "9999999999999999999999999999999f";
const GONE_ACCOUNT: &str = "8888888888888888888888888888888e";

fn validate(config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_escgate"))
        .arg("--config")
        .arg(config)
        .arg("--validate")
        .output()
        .expect("run escgate --validate")
}

/// A valid config whose `state_path` is `state`; returns its path.
fn write_config(dir: &Path, state: &Path) -> std::path::PathBuf {
    let zone = Escgate::zone(ZONE_ID, "example.com", "127.0.0.1:9".parse().unwrap(), "");
    let text = Escgate::config(&zone)
        .replace("@LISTEN@", "127.0.0.1:1")
        .replace("@STATE@", &state.display().to_string());
    let path = dir.join("escgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn disabled() -> EscSetting {
    EscSetting {
        always: true,
        with_secret: Some("s3cr3t".into()),
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn missing_state_file_is_fine_and_orphans_are_warnings() {
    let dir = temp_dir("validate-orphans");
    let state = dir.join("state.json");
    let config = write_config(&dir, &state);

    let output = validate(&config);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));

    let tenant = TenantState::default()
        .with_zone_esc(ZONE_ID, disabled())
        .with_account_esc(ACCOUNT_ID, disabled())
        .with_zone_esc(GONE_ZONE, disabled())
        .with_account_esc(GONE_ACCOUNT, disabled());
    FileStore::new(&state).save(&tenant).unwrap();
    let output = validate(&config);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 2, "one line per orphan:\n{text}");
    assert!(warnings
        .iter()
        .any(|l| l.contains(&format!("zone {GONE_ZONE}"))));
    assert!(warnings
        .iter()
        .any(|l| l.contains(&format!("account {GONE_ACCOUNT}"))));
    assert!(
        !text.contains(ZONE_ID) && !text.contains(ACCOUNT_ID),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("valid"));
    // Validation only reads: the orphaned state is still there.
    let kept = FileStore::new(&state).load().unwrap();
    assert!(kept.zone_esc(GONE_ZONE).is_some());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn corrupt_or_unreadable_state_file_is_an_error() {
    let dir = temp_dir("validate-corrupt");
    let state = dir.join("state.json");
    let config = write_config(&dir, &state);

    for (label, content) in [
        ("not JSON", &b"{\"format\": 1, \"zones\": "[..]),
        ("unknown format", &br#"{"format": 99}"#[..]),
        ("binary", &[0xff, 0xfe, 0x00][..]),
    ] {
        std::fs::write(&state, content).unwrap();
        let output = validate(&config);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{label}: {text}");
        assert!(text.contains("server.state_path"), "{label}: {text}");
        assert!(text.contains("invalid document"), "{label}: {text}");
    }

    std::fs::remove_file(&state).unwrap();
    std::fs::create_dir(&state).unwrap();
    let output = validate(&config);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("server.state_path"));
    let _ = std::fs::remove_dir_all(dir);
}
