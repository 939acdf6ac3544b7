//! Cost of one disable-ESC toggle as the number of zones grows from 1k to 100k.
//!
//! - `apply`: building the next tenant state (persistent maps: path copy, no full clone) when
//!   every zone already has a setting — the in-memory part must stay flat.
//! - `writer_1_stateful_zone`: the whole acknowledged write (`Writer::apply`: build, serialize,
//!   temp file + fsync + rename + dir fsync, `ArcSwap` publish) with a config of N zones of which
//!   one has state — the usual case; must not grow with N.
//! - `writer_all_zones_stateful`: the same when all N zones have state: the JSON-document store
//!   rewrites every entry, so this one grows with N (a journaling or etcd store removes it).

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

fn writer(zones: usize, tenant: TenantState, dir: &std::path::Path) -> Writer {
    let shared = Arc::new(ArcSwap::from_pointee(Snapshot {
        config: Arc::new(config(zones)),
        tenant: Arc::new(tenant),
    }));
    Writer::new(shared, Arc::new(FileStore::new(dir.join("state.json"))))
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

    let mut group = c.benchmark_group("toggle/writer_1_stateful_zone");
    group.sample_size(20);
    for zones in sizes {
        let w = writer(zones, TenantState::default(), &dir);
        let mut i = 0u64;
        group.bench_function(BenchmarkId::from_parameter(zones), |b| {
            b.iter(|| {
                i += 1;
                w.apply(toggle(i)).unwrap()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("toggle/writer_all_zones_stateful");
    group.sample_size(10);
    for zones in sizes {
        let w = writer(zones, stateful(zones), &dir);
        let mut i = 0u64;
        group.bench_function(BenchmarkId::from_parameter(zones), |b| {
            b.iter(|| {
                i += 1;
                w.apply(toggle(i)).unwrap()
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(toggle_benches, benches);
criterion_main!(toggle_benches);
