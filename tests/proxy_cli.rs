//! The command line: `--validate` on the shipped and on broken configs, `hash-secret`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn escgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_escgate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run escgate")
}

#[test]
fn shipped_configs_validate() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let output = escgate(&["--config", path.to_str().unwrap(), "--validate"]);
            assert!(
                output.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "config/escgate.toml and config/minimal.toml at least"
    );
    assert!(escgate(&["--validate"]).status.success(), "default path");
}

#[test]
fn validate_prints_every_error_with_its_key_path() {
    let dir = std::env::temp_dir().join(format!("escgate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        r#"
[server]
listen = "127.0.0.1:8080"
[[accounts]]
id = "01a7362d577a6c3019a474fd6f485823"
name = "A"
[[zones]]
id = "023e105f4ecef8ad9ca31a8372d0c353"
name = "example.com"
account_id = "01a7362d577a6c3019a474fd6f485823"
origin = "127.0.0.1:8082"
plan = "gold"
[[zones.esc]]
redirect = { to = "https://www.example.com/new", status = 300 }
[[zones.esc]]
when = 'starts_with(http.request.uri.path, '
request_headers = { set = { "bad header" = "1" } }
feature_exceptions = ["cache"]
[[zones]]
id = "NOT-HEX"
name = "example.com"
account_id = "ffffffffffffffffffffffffffffffff"
origin = "nowhere"
"#,
    )
    .unwrap();
    let output = escgate(&["--config", path.to_str().unwrap(), "--validate"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for expected in [
        "zones[0].plan: free or pro or business or enterprise expected, got \"gold\"",
        "zones[0].esc[0].redirect.status: 301 or 302 or 303 or 307 or 308 expected, got 300",
        "zones[0].esc[1].when: ",
        "zones[0].esc[1].request_headers.set.\"bad header\": a header name expected",
        "zones[0].esc[1].feature_exceptions[0]: compression or waf expected, got \"cache\"",
        "zones[1].id: 32 lowercase hex digits expected, got \"NOT-HEX\"",
        "zones[1].account_id: no [[accounts]] entry has id",
        "zones[1].origin: host:port expected, got \"nowhere\"",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    std::fs::write(&path, "[server]\nlisten = \"127.0.0.1:1\"\nbogus = 1\n").unwrap();
    let output = escgate(&["--config", path.to_str().unwrap(), "--validate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown field `bogus`"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn hash_secret_prints_the_sha256_of_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_escgate"))
        .arg("hash-secret")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"demo-key\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "c48a01f49fd0f2cc404bc3cbbc80e91457a3d41bb429a695243de4c61794155c"
    );
}
