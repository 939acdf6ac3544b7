//! Rules engine hot paths: what one filter costs per request, and what compiling one costs at
//! config load.
//!
//! Compared: compile of a 3-clause expression (target < 20 µs); evaluation of `true` (the
//! floor); of the 2-clause host + path-prefix expression every zone rule resembles (target
//! < 60 ns); of a 20-clause expression with a regex and header-map lookups, all clauses true so
//! every one is evaluated (target < 1 µs). The request is a typical browser request with 9
//! header lines.

use std::hint::black_box;

// Measured with the allocator the escgate binary ships with.
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use escgate::rules::{Filter, Limits, RequestView, WafScores};
use http::{HeaderMap, HeaderName, HeaderValue};

const THREE_CLAUSES: &str = r#"http.host eq "example.com" and starts_with(http.request.uri.path, "/api/") and not ip.src in {10.0.0.0/8 192.168.0.0/16}"#;

const TWO_CLAUSES: &str =
    r#"http.host eq "example.com" and starts_with(http.request.uri.path, "/api/")"#;

const TWENTY_CLAUSES: &str = r#"http.host eq "example.com"
 and starts_with(http.request.uri.path, "/api/")
 and http.request.method in {"GET" "HEAD" "POST"}
 and not ip.src in {10.0.0.0/8 192.168.0.0/16 172.16.0.0/12}
 and http.request.uri.path matches "^/api/v[0-9]+/users$"
 and http.request.headers["x-api-key"][0] eq "Secret-Key"
 and any(http.request.headers["accept"][*] contains "json")
 and http.user_agent contains "Mozilla"
 and not http.request.uri.path contains ".."
 and ssl
 and http.request.version eq "HTTP/1.1"
 and not http.referer wildcard "*://evil.*"
 and http.request.uri.query ne ""
 and http.request.uri.args["id"][0] eq "5"
 and http.request.cookies["session"][0] ne ""
 and not http.request.uri.path in {"/api/admin" "/api/internal"}
 and ends_with(http.request.uri.path, "/users")
 and len(http.host) lt 64
 and lower(http.request.method) eq "get"
 and http.x_forwarded_for ne "203.0.113.9""#;

fn headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in [
        (
            "user-agent",
            "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
        ),
        ("accept", "text/html,application/xhtml+xml"),
        ("accept", "application/json"),
        ("accept-language", "en-US,en;q=0.5"),
        ("accept-encoding", "gzip, deflate, br"),
        ("cookie", "session=abc123; theme=dark"),
        ("x-forwarded-for", "198.51.100.1"),
        ("referer", "https://www.example.org/start"),
        ("x-api-key", "Secret-Key"),
    ] {
        headers.append(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    headers
}

fn view(headers: &HeaderMap) -> RequestView<'_> {
    RequestView {
        method: "GET",
        host: "example.com",
        path: "/api/v1/users",
        query: Some("id=5&name=Bob"),
        tls: true,
        version: "HTTP/1.1",
        src_ip: Some("198.51.100.7".parse().unwrap()),
        headers,
        waf: WafScores::default(),
    }
}

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let headers = headers();
    let request = view(&headers);

    c.bench_function("compile 3-clause", |b| {
        b.iter(|| Filter::compile(black_box(THREE_CLAUSES), &limits).unwrap())
    });
    for (name, expression) in [
        ("eval true", "true"),
        ("eval 2-clause", TWO_CLAUSES),
        ("eval 20-clause", TWENTY_CLAUSES),
    ] {
        let filter = Filter::compile(expression, &limits).unwrap();
        assert!(
            filter.matches(&request),
            "{name} must match the bench request"
        );
        c.bench_function(name, |b| b.iter(|| filter.matches(black_box(&request))));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
