//! `kill -9` while clients write in a loop: after each restart every acknowledged write is in
//! the state file, which is always a valid document.
//!
//! The process killed is the real `escgate` binary on a config with ephemeral loopback ports; it
//! is restarted on the same state file after each kill. Every process is killed on drop, so a
//! failing assertion leaves nothing running.

mod common;
mod esc_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{temp_dir, Escgate, ACCOUNT_ID, ZONE_ID};
use esc_support::EscgateProcess;
use escgate::store::{FileStore, Store};

const ROUNDS: usize = 4;
const ZONE_2: &str = "2222222222222222222222222222222a";
const EMAIL: &str = "ops@example.com";
const KEY: &str = "kill9-admin-key";

/// Two zones of one account and a global admin key; the origin is never contacted.
fn config() -> String {
    let key_sha256 = escgate::admin::auth::hash_secret(KEY);
    let origin = "127.0.0.1:9".parse().unwrap();
    let tables = format!(
        r#"[[api_keys]]
email = "{EMAIL}"
key_sha256 = "{key_sha256}"
accounts = ["*"]

{}{}"#,
        Escgate::zone(ZONE_ID, "one.example", origin, ""),
        Escgate::zone(ZONE_2, "two.example", origin, ""),
    );
    Escgate::config_with_server_keys("admin_listen = \"@ADMIN@\"", &tables)
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
            .set("X-Auth-Email", EMAIL)
            .set("X-Auth-Key", KEY)
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
    let test_start = Instant::now();
    let dir = temp_dir("kill9");
    let state = dir.join("state.json");
    let toml = config();
    let scopes = [
        ("zones", ZONE_ID),
        ("zones", ZONE_2),
        ("accounts", ACCOUNT_ID),
    ];
    let mut last = [0u64; 3];
    let mut total_acknowledged = 0;
    for round in 0..ROUNDS {
        let mut escgate = EscgateProcess::start(&dir, &toml, &state);
        let admin = escgate.admin_base();
        let stop = AtomicBool::new(false);
        let results: Vec<(u64, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = scopes
                .iter()
                .zip(last)
                .map(|((kind, id), start)| {
                    let url = format!("{admin}/{kind}/{id}/disable_esc");
                    let stop = &stop;
                    s.spawn(move || write_loop(&url, start, stop))
                })
                .collect();
            std::thread::sleep(Duration::from_millis(150 + 100 * round as u64));
            escgate.kill_9();
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

    // A final restart serves exactly what the file holds, at every scope.
    let escgate = EscgateProcess::start(&dir, &toml, &state);
    for ((kind, id), stored) in scopes.iter().zip(last) {
        let url = format!("{}/{kind}/{id}/disable_esc", escgate.admin_base());
        let answer = ureq::get(&url)
            .timeout(Duration::from_secs(5))
            .set("X-Auth-Email", EMAIL)
            .set("X-Auth-Key", KEY)
            .call()
            .expect("GET after restart");
        let text = answer.into_string().expect("status body");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON status");
        assert_eq!(
            stored_counter(json["with_secret"].as_str()),
            stored,
            "{kind}/{id}"
        );
    }
    drop(escgate);
    assert!(
        test_start.elapsed() < Duration::from_secs(60),
        "bounded in time"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
