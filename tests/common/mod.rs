//! Shared end-to-end harness: escgate in-process on ephemeral loopback ports, a test origin that
//! echoes what it received (plain or TLS), and a tiny HTTP/1.1 client. Everything started here
//! stops when its handle is dropped; every wait has a deadline.
// Each test binary uses a different part of the harness.
#![allow(dead_code, unused_imports)]

pub mod client;
pub mod escgate;
pub mod origin;

pub use client::{get, request, Response};
pub use escgate::{Escgate, ACCOUNT_ID, ZONE_ID};
pub use origin::{Echo, TestOrigin};

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Longest any harness wait lasts.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A loopback address with a port that was free a moment ago (bound, read, released).
pub fn free_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local address")
}

/// Waits until `addr` accepts TCP connections; panics after [`DEADLINE`].
pub fn wait_listening(addr: SocketAddr) {
    let start = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            start.elapsed() < DEADLINE,
            "{addr} not listening after {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `check` until it returns true; panics with `what` after [`DEADLINE`].
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh directory under the system temp dir, for config and state files.
pub fn temp_dir(label: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "escgate-test-{}-{label}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// First value of header `name` in (name, value) pairs (names as received, lowercase).
pub fn first_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Every value of header `name` in (name, value) pairs, in order.
pub fn headers_named<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect()
}
