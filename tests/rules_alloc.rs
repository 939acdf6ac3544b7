//! Evaluating common expressions must not allocate: a counting global allocator records the
//! allocations made by this thread while `Filter::matches` runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use escgate::rules::{Filter, Limits, RequestView, WafScores};
use http::{HeaderMap, HeaderName, HeaderValue};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: delegates every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during(f: impl FnOnce() -> bool) -> (bool, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (result, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn common_expressions_evaluate_without_allocating() {
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("x-y", "z"),
        ("x", "bab"),
        ("x", "ccc"),
        ("accept", "text/html"),
        ("cookie", "session=abc; theme=dark"),
        ("user-agent", "Mozilla/5.0"),
    ] {
        headers.append(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    let request = RequestView {
        method: "GET",
        host: "x",
        path: "/api/v1",
        query: Some("a=1&b=2"),
        tls: true,
        version: "HTTP/1.1",
        src_ip: Some("10.1.2.3".parse().unwrap()),
        headers: &headers,
        waf: WafScores::default(),
    };
    for expression in [
        "true",
        r#"starts_with(http.request.uri.path, "/api/")"#,
        r#"http.host eq "x""#,
        r#"http.request.headers["x-y"][0] eq "z""#,
        r#"any(http.request.headers["x"][*] contains "a")"#,
        r#"http.host eq "x" and starts_with(http.request.uri.path, "/api/")"#,
        r#"http.request.uri.path matches "^/api/v[0-9]$""#,
        r#"http.request.uri.path wildcard "/API/*""#,
        r#"http.request.method in {"GET" "HEAD"} and ip.src in {10.0.0.0/8}"#,
        r#"http.request.cookies["theme"][0] eq "dark""#,
        r#"http.request.uri.args["b"][0] eq "2""#,
        r#"http.user_agent contains "Mozilla" and ssl"#,
        r#"lower(http.request.uri.path) eq "/api/v1""#,
        r#"len(http.request.headers["x"]) eq 2"#,
    ] {
        let filter = Filter::compile(expression, &Limits::default()).unwrap();
        // The regex crate fills a per-thread cache on first use; measure the steady state.
        filter.matches(&request);
        let (matched, allocations) = allocations_during(|| filter.matches(&request));
        assert!(matched, "{expression} should match");
        assert_eq!(allocations, 0, "{expression} allocated");
    }
}

#[test]
fn the_counter_sees_allocations() {
    // Guards the test above against a counter that never counts.
    let (_, allocations) = allocations_during(|| *std::hint::black_box(Box::new(7u64)) == 7);
    assert!(allocations >= 1);
}
