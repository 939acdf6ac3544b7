//! `kill -9` while clients write in a loop: after each restart every acknowledged write is in
//! the state file, which is always a valid document.
//!
//! The process killed is this test binary re-executed in "child" mode, where it runs the real
//! admin service (pingora, file store) until killed; the parent talks HTTP to it.

mod admin_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use admin_support::*;
use escgate::store::{FileStore, Store};

const CHILD_ENV: &str = "ESCGATE_KILL9_CHILD_STATE";
const ROUNDS: usize = 4;

/// Child mode: serve until killed. In a normal run (variable unset) this checks that the harness
/// used by the parent starts and answers.
#[test]
fn kill9_child_server() {
    let Ok(state) = std::env::var(CHILD_ENV) else {
        let dir = temp_dir("kill9-selfcheck");
        let server = AdminServer::start(&dir.join("state.json"));
        let url = format!("{}/zones/{ZONE_1}/disable_esc", server.base());
        assert_eq!(call("GET", &url, admin(), None).status, 200);
        server.stop();
        std::fs::remove_dir_all(dir).unwrap();
        return;
    };
    let server = AdminServer::start(std::path::Path::new(&state));
    println!("KILL9_ADMIN_ADDR={}", server.addr);
    // Killed by the parent; the deadline only bounds a parent that died first.
    std::thread::sleep(Duration::from_secs(120));
    drop(server);
}

fn spawn_child(state: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill9_child_server",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test name ... " on the same line first.
            if let Some((_, addr)) = line.split_once("KILL9_ADMIN_ADDR=") {
                let _ = tx.send(addr.trim().to_owned());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(addr) => (child, addr),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child admin server did not start");
        }
    }
}

/// Writes `with_secret = v<n>` to one scope in a loop; returns the last acknowledged n.
fn write_loop(url: &str, start: u64, stop: &AtomicBool) -> (u64, u64) {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(5))
        .build();
    let mut acknowledged = start;
    let mut n = start;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let body = format!(r#"{{"with_secret": "v{n}"}}"#);
        let result = agent
            .post(url)
            .set("X-Auth-Email", ADMIN_EMAIL)
            .set("X-Auth-Key", ADMIN_KEY)
            .set("Content-Type", "application/json")
            .send_string(&body);
        match result {
            Ok(response) if response.status() == 200 => acknowledged = n,
            _ => return (acknowledged, n),
        }
    }
    (acknowledged, n)
}

fn stored_counter(secret: Option<&str>) -> u64 {
    secret
        .and_then(|s| s.strip_prefix('v'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn kill_9_loses_no_acknowledged_write() {
    let dir = temp_dir("kill9");
    let state = dir.join("state.json");
    let scopes = [
        ("zones", ZONE_1),
        ("zones", ZONE_2),
        ("accounts", ACCOUNT_1),
    ];
    let mut last = [0u64; 3];
    let mut total_acknowledged = 0;
    for round in 0..ROUNDS {
        let (mut child, addr) = spawn_child(&state);
        let stop = AtomicBool::new(false);
        let results: Vec<(u64, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = scopes
                .iter()
                .zip(last)
                .map(|((kind, id), start)| {
                    let url = format!("http://{addr}/client/v4/{kind}/{id}/disable_esc");
                    let stop = &stop;
                    s.spawn(move || write_loop(&url, start, stop))
                })
                .collect();
            std::thread::sleep(Duration::from_millis(150 + 100 * round as u64));
            child.kill().expect("kill -9");
            let _ = child.wait();
            stop.store(true, Ordering::Relaxed);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });

        let loaded = FileStore::new(&state)
            .load()
            .expect("state file valid after kill -9");
        for (i, ((kind, id), (acknowledged, attempted))) in scopes.iter().zip(&results).enumerate()
        {
            let setting = if *kind == "zones" {
                loaded.zone_esc(id)
            } else {
                loaded.account_esc(id)
            };
            let stored = stored_counter(setting.and_then(|s| s.with_secret.as_deref()));
            assert!(
                stored >= *acknowledged && stored <= *attempted,
                "round {round} {kind}/{id}: stored v{stored}, acknowledged v{acknowledged}, attempted v{attempted}"
            );
            total_acknowledged += acknowledged - last[i];
            last[i] = stored;
        }
    }
    println!("kill -9 rounds: {ROUNDS}, acknowledged writes: {total_acknowledged}");
    assert!(total_acknowledged > 0, "no write was acknowledged");

    // A final restart serves exactly what the file holds.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut child, addr) = spawn_child(&state);
    let url = format!("http://{addr}/client/v4/zones/{ZONE_1}/disable_esc");
    let answer = call("GET", &url, admin(), None);
    let _ = child.kill();
    let _ = child.wait();
    assert!(Instant::now() < deadline);
    assert_eq!(stored_counter(answer.json["with_secret"].as_str()), last[0]);
    std::fs::remove_dir_all(dir).unwrap();
}
