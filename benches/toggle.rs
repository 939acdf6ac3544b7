//! Cost of one disable-ESC toggle as the number of zones grows from 1k to 100k.
//!
//! - `apply`: building the next tenant state (persistent maps: path copy, no full clone) when
//!   every zone already has a setting — the in-memory part must stay flat.
//! - `writer_1_stateful_zone`: the whole acknowledged write (`Writer::apply`: build, one journal
//!   line appended + `sync_data`, `ArcSwap` publish) with a config of N zones of which one has
//!   state — the usual case; must not grow with N.
//! - `writer_all_zones_stateful`: the same when all N zones have state (stored in the snapshot
//!   first): the journal appends one record whatever the state size, so this must not grow with
//!   N either (the whole-document store took ~397 ms here at 100k).
//! - `writer_all_zones_stateful_compacting`: the same with a 64 KiB compaction threshold, so
//!   snapshots of all N zones are written on the background thread while the writes are timed:
//!   the writer never waits for them.
//! - `http_post_to_effect`: toggle→effect latency through the real admin service on loopback:
//!   from sending `POST .../disable_esc` to `decide` on the next loaded snapshot seeing it (the
//!   answer is sent after the swap, so this is the POST round trip including the fsync).

use std::sync::Arc;

use arc_swap::ArcSwap;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use escgate::config::{Config, ZoneConfig};
use escgate::state::tenant::{EscSetting, TenantState};
use escgate::state::{Change, EscEdit, SecretEdit, Snapshot, Writer};
use escgate::store::FileStore;

fn zone_id(i: usize) -> String {
    format!("{i:032x}")
}

fn config(zones: usize) -> Config {
    Config {
        zones: (0..zones)
            .map(|i| ZoneConfig {
                id: zone_id(i),
                name: format!("z{i}.example"),
                account_id: "a".into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn stateful(zones: usize) -> TenantState {
    (0..zones).fold(TenantState::default(), |t, i| {
        t.with_zone_esc(
            &zone_id(i),
            EscSetting {
                always: i.is_multiple_of(2),
                with_secret: Some(format!("secret-{i}")),
            },
        )
    })
}

fn toggle(i: u64) -> Change {
    Change::SetZoneEsc {
        zone_id: zone_id(7),
        edit: EscEdit {
            always: Some(i.is_multiple_of(2)),
            secret: SecretEdit::Keep,
        },
    }
}

/// A writer over a file store in its own directory `dir/name`, holding `tenant` on disk
/// (snapshot) and in memory; opened already, so no timed iteration pays the first load.
fn writer(
    zones: usize,
    tenant: TenantState,
    dir: &std::path::Path,
    name: &str,
    compaction_bytes: Option<u64>,
) -> Writer {
    let dir = dir.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = FileStore::new(dir.join("state.json"));
    if let Some(bytes) = compaction_bytes {
        store = store.with_compaction_bytes(bytes);
    }
    if !tenant.zone_ids().is_empty() {
        store.save(&tenant).unwrap();
    }
    let loaded = store.open().unwrap();
    assert_eq!(loaded.zone_ids().len(), tenant.zone_ids().len());
    let shared = Arc::new(ArcSwap::from_pointee(Snapshot {
        config: Arc::new(config(zones)),
        tenant: Arc::new(loaded),
    }));
    Writer::new(shared, Arc::new(store))
}

fn bench_writer(
    c: &mut Criterion,
    group_name: &str,
    sizes: &[usize],
    tenant: fn(usize) -> TenantState,
    dir: &std::path::Path,
    compaction_bytes: Option<u64>,
) {
    let mut group = c.benchmark_group(group_name);
    group.sample_size(20);
    for &zones in sizes {
        let name = format!("{}-{zones}", group_name.replace('/', "-"));
        let w = writer(zones, tenant(zones), dir, &name, compaction_bytes);
        let mut i = 0u64;
        group.bench_function(BenchmarkId::from_parameter(zones), |b| {
            b.iter(|| {
                i += 1;
                w.apply(toggle(i)).unwrap()
            })
        });
        if compaction_bytes.is_some_and(|bytes| i * 90 > 2 * bytes) {
            drop(w);
            let text = std::fs::read(dir.join(&name).join("state.json")).unwrap();
            let doc: escgate::state::tenant::TenantDocument =
                serde_json::from_slice(&text).unwrap();
            assert!(doc.journal_from > 2, "compactions ran during the bench");
            assert_eq!(doc.zones.len(), zones);
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("escgate-toggle-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sizes = [1_000usize, 100_000];

    let mut group = c.benchmark_group("toggle/apply");
    for zones in sizes {
        let tenant = stateful(zones);
        let mut i = 0u64;
        group.bench_with_input(BenchmarkId::from_parameter(zones), &tenant, |b, t| {
            b.iter(|| {
                i += 1;
                black_box(toggle(i).apply(t))
            })
        });
    }
    group.finish();

    bench_writer(
        c,
        "toggle/writer_1_stateful_zone",
        &sizes,
        |_| TenantState::default(),
        &dir,
        None,
    );
    bench_writer(
        c,
        "toggle/writer_all_zones_stateful",
        &sizes,
        stateful,
        &dir,
        None,
    );
    bench_writer(
        c,
        "toggle/writer_all_zones_stateful_compacting",
        &sizes,
        stateful,
        &dir,
        Some(64 << 10),
    );
    http_post_to_effect(c, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

fn http_post_to_effect(c: &mut Criterion, dir: &std::path::Path) {
    use escgate::admin::auth::hash_secret;
    use escgate::config::auth::ApiKeyEntry;
    use escgate::esc::decision::decide;
    use pingora::services::Service as _;

    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let mut cfg = config(100_000);
    cfg.server.admin_listen = Some(addr);
    cfg.api_keys = vec![ApiKeyEntry {
        email: "ops@example.com".into(),
        key_sha256: hash_secret("bench-key"),
        accounts: vec!["*".into()],
    }];
    let w = Arc::new(writer(0, TenantState::default(), dir, "http", None));
    w.replace_config(Arc::new(cfg));
    let shared = w.shared().clone();
    let mut service = escgate::admin::service(shared.clone(), w, dir.join("none.toml"));
    let (stop, watch) = tokio::sync::watch::channel(false);
    let server = std::thread::spawn(move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
            .block_on(service.start_service(None, watch, 1))
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(std::time::Instant::now() < deadline, "admin did not start");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let agent = ureq::AgentBuilder::new()
        .timeout(std::time::Duration::from_secs(5))
        .build();
    let zone = zone_id(7);
    let url = format!("http://{addr}/client/v4/zones/{zone}/disable_esc");
    let no_cookies = http::HeaderMap::new();
    let mut on = false;
    let mut group = c.benchmark_group("toggle/http_post_to_effect");
    group.sample_size(30);
    group.bench_function("100000", |b| {
        b.iter(|| {
            on = !on;
            agent
                .post(&url)
                .set("X-Auth-Email", "ops@example.com")
                .set("X-Auth-Key", "bench-key")
                .set("Content-Type", "application/json")
                .send_string(if on {
                    r#"{"always":true}"#
                } else {
                    r#"{"always":false}"#
                })
                .unwrap();
            let seen = decide(&shared.load().tenant, &zone, "a", &no_cookies);
            assert_eq!(seen.esc_applied(), !on, "the next request sees the toggle");
        })
    });
    group.finish();
    let _ = stop.send(true);
    let _ = server.join();
}

criterion_group!(toggle_benches, benches);
criterion_main!(toggle_benches);
