//! The per-request ESC decision (`esc::decision::decide`) and the upstream cookie strip: what
//! every proxied request pays. Compared: no tenant state (no cookie scan), secrets configured but
//! no cookie, a matching cookie among several, a wrong cookie in several `Cookie` headers; and
//! the strip with and without a `disable_esc` cookie; and the whole decision path (Host -> zone
//! lookup, then the decision). State holds 100k zones so lookups are at their deepest.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use escgate::esc::decision::{decide, strip_disable_esc_cookies, Reason};
use escgate::state::tenant::{EscSetting, TenantState};
use escgate::zones::ZoneIndex;

// Measured with the allocator the escgate binary ships with.
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

const ZONES: usize = 100_000;

fn zone_id(i: usize) -> String {
    format!("{i:032x}")
}

fn tenant_with_secrets() -> TenantState {
    let mut tenant = TenantState::default();
    for i in 0..ZONES {
        tenant = tenant.with_zone_esc(
            &zone_id(i),
            EscSetting {
                always: false,
                with_secret: Some(format!("secret-{i:08}-abcdefghijklmnop")),
            },
        );
    }
    tenant.with_account_esc(
        "acct",
        EscSetting {
            always: false,
            with_secret: Some("account-secret-0123456789".into()),
        },
    )
}

fn headers(cookies: &[&str]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    map.insert(http::header::HOST, "www.example.com".parse().unwrap());
    map.insert(http::header::USER_AGENT, "bench/1.0".parse().unwrap());
    for c in cookies {
        map.append(http::header::COOKIE, c.parse().unwrap());
    }
    map
}

fn decision(c: &mut Criterion) {
    let empty = TenantState::default();
    let tenant = tenant_with_secrets();
    let zone = zone_id(4242);
    let typical = "session=0123456789abcdef; theme=dark; _ga=GA1.2.3456789.0123456789";
    let no_cookie = headers(&[]);
    let plain = headers(&[typical]);
    let matching = headers(&[&format!(
        "{typical}; disable_esc=secret-00004242-abcdefghijklmnop"
    )]);
    let wrong_multi = headers(&[
        typical,
        "disable_esc=nope; a=b",
        "c=d; disable_esc=also-wrong",
    ]);

    let mut group = c.benchmark_group("decide");
    group.bench_function("no_state_with_cookies", |b| {
        b.iter(|| {
            decide(
                black_box(&empty),
                black_box(&zone),
                "acct",
                black_box(&plain),
            )
        })
    });
    group.bench_function("secrets_no_cookie_header", |b| {
        b.iter(|| {
            decide(
                black_box(&tenant),
                black_box(&zone),
                "acct",
                black_box(&no_cookie),
            )
        })
    });
    group.bench_function("secrets_unrelated_cookies", |b| {
        b.iter(|| {
            decide(
                black_box(&tenant),
                black_box(&zone),
                "acct",
                black_box(&plain),
            )
        })
    });
    group.bench_function("secrets_matching_cookie", |b| {
        b.iter(|| {
            decide(
                black_box(&tenant),
                black_box(&zone),
                "acct",
                black_box(&matching),
            )
        })
    });
    group.bench_function("secrets_wrong_cookies_3_headers", |b| {
        b.iter(|| {
            decide(
                black_box(&tenant),
                black_box(&zone),
                "acct",
                black_box(&wrong_multi),
            )
        })
    });
    group.finish();

    // The whole per-request decision path: Host -> zone (100k zones), then the decision with
    // the load benchmark's cookie (a disable_esc cookie that does not match the zone's secret).
    let names: Vec<String> = (0..ZONES).map(|i| format!("zone{i}.example")).collect();
    let index = ZoneIndex::build(names.iter().map(String::as_str));
    let zone_ids: Vec<String> = (0..ZONES).map(zone_id).collect();
    let bench_cookie = headers(&["session=4f2a9c; disable_esc=not-the-bench-secret; theme=dark"]);
    // What is measured has to be right: the bench cookie leaves ESC applied, the matching one
    // disables it by the zone's secret.
    let zone_of = |host| index.lookup(host).map(|i| zone_ids[i as usize].as_str());
    assert_eq!(zone_of("zone4242.example"), Some(zone.as_str()));
    assert_eq!(
        decide(&tenant, &zone, "acct", &bench_cookie).reason,
        Reason::Applied
    );
    assert_eq!(
        decide(&tenant, &zone, "acct", &matching).reason,
        Reason::ZoneSecret
    );
    let mut group = c.benchmark_group("decision_path");
    for (case, request) in [
        ("bench_cookie", &bench_cookie),
        ("matching_cookie", &matching),
    ] {
        group.bench_function(case, |b| {
            b.iter(|| {
                let zone = index.lookup(black_box("zone4242.example"))?;
                Some(decide(
                    &tenant,
                    &zone_ids[zone as usize],
                    "acct",
                    black_box(request),
                ))
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("strip_disable_esc");
    let mut request = pingora::http::RequestHeader::build("GET", b"/", None).unwrap();
    request.append_header("Cookie", typical).unwrap();
    group.bench_function("absent", |b| {
        b.iter(|| strip_disable_esc_cookies(black_box(&mut request)))
    });
    group.bench_function("present", |b| {
        b.iter_batched(
            || {
                let mut r = pingora::http::RequestHeader::build("GET", b"/", None).unwrap();
                r.append_header("Cookie", format!("{typical}; disable_esc=s"))
                    .unwrap();
                r
            },
            |mut r| {
                strip_disable_esc_cookies(&mut r);
                r
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, decision);
criterion_main!(benches);
