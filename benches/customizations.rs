//! Cost of applying a typical ESC customization set to one request, per phase, on pingora's own
//! header types (what the proxy hooks do): evaluating the `when` expressions and folding the
//! plan (request_filter), editing the upstream request (upstream_request_filter), editing the
//! response (response_filter). The header clone each iteration needs is measured apart
//! (`clone_only`) so it can be subtracted.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use escgate::config::{load_str, ZoneConfig};
use escgate::esc;
use escgate::proxy::view::request_view;
use pingora::http::{RequestHeader, ResponseHeader};

// Measured with the allocator the escgate binary ships with.
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

const CONFIG: &str = r#"
[server]
listen = "127.0.0.1:8080"
[[accounts]]
id = "01a7362d577a6c3019a474fd6f485823"
name = "Bench"
[[zones]]
id = "023e105f4ecef8ad9ca31a8372d0c353"
name = "example.com"
account_id = "01a7362d577a6c3019a474fd6f485823"
origin = "127.0.0.1:8082"
[[zones.esc]]
request_headers = { set = { "x-escgate-zone" = "example.com" }, remove = ["x-debug"] }
response_headers = { set = { "x-frame-options" = "DENY" }, remove = ["x-powered-by"] }
[[zones.esc]]
when = 'starts_with(http.request.uri.path, "/api/")'
request_headers = { add = { "x-api-version" = "2" } }
host_header = "api.internal"
rewrite_uri = { path_regex = "^/api/(.*)$", path_replace = "/v2/$1" }
add_cookies = ["promo=1; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax"]
[[zones.esc]]
when = 'http.request.uri.path eq "/old"'
redirect = { to = "https://www.example.com/new", status = 301, preserve_query = true }
[[zones.esc]]
custom_error = { status = [500, 502, 503, 504], content_type = "text/html", body = "<h1>Sorry</h1>" }
"#;

fn zone() -> ZoneConfig {
    let config = load_str(CONFIG).expect("bench config");
    config.zones[0].clone()
}

fn request() -> RequestHeader {
    let mut request = RequestHeader::build("GET", b"/api/items/42?page=2", None).unwrap();
    for (name, value) in [
        ("Host", "www.example.com"),
        ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) bench"),
        ("Accept", "text/html,application/xhtml+xml"),
        ("Accept-Encoding", "gzip, br"),
        ("Cookie", "session=abcdef0123456789; theme=dark"),
        ("X-Debug", "1"),
    ] {
        request.append_header(name, value).unwrap();
    }
    request
}

fn response() -> ResponseHeader {
    let mut response = ResponseHeader::build(200, None).unwrap();
    for (name, value) in [
        ("Content-Type", "application/json"),
        ("Content-Length", "512"),
        ("Server", "origin"),
        ("X-Powered-By", "php"),
    ] {
        response.append_header(name, value).unwrap();
    }
    response
}

fn phases(c: &mut Criterion) {
    let zone = zone();
    let request = request();
    let response = response();
    let mut group = c.benchmark_group("esc_typical");
    group.bench_function("match_and_plan", |b| {
        b.iter(|| {
            let view = || request_view(black_box(&request), None, false);
            let matched = esc::apply::match_entries(&zone.esc, view);
            black_box(esc::plan_request(&zone.esc, matched).address)
        })
    });
    let matched = esc::apply::match_entries(&zone.esc, || request_view(&request, None, false));
    assert_eq!(matched, 0b1011, "entries 0, 1 and 3 match /api/");
    group.bench_function("request_clone_only", |b| {
        b.iter_batched(|| request.clone(), black_box, BatchSize::SmallInput)
    });
    group.bench_function("upstream_request", |b| {
        b.iter_batched(
            || request.clone(),
            |mut upstream| {
                esc::apply_upstream_request(&zone.esc, matched, &mut upstream);
                upstream
            },
            BatchSize::SmallInput,
        )
    });
    // Per entry, to see which action dominates.
    for (label, mask) in [("entry0_headers", 0b0001u64), ("entry1_api", 0b0010)] {
        group.bench_function(format!("upstream_request_{label}"), |b| {
            b.iter_batched(
                || request.clone(),
                |mut upstream| {
                    esc::apply_upstream_request(&zone.esc, mask, &mut upstream);
                    upstream
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.bench_function("response_clone_only", |b| {
        b.iter_batched(|| response.clone(), black_box, BatchSize::SmallInput)
    });
    group.bench_function("response", |b| {
        b.iter_batched(
            || response.clone(),
            |mut downstream| {
                let status = downstream.status.as_u16();
                let replacement = esc::response_replacement(&zone.esc, matched, status);
                esc::apply_response_headers(&zone.esc, matched, &mut downstream);
                (downstream, replacement)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, phases);
criterion_main!(benches);
