//! Hot reload: through the library call (as the admin API does) and through SIGHUP on the real
//! binary; valid files swap in atomically, invalid ones change nothing.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{eventually, get, Escgate, TestOrigin, ZONE_ID};

fn tagged_zone(origin: std::net::SocketAddr, version: &str) -> String {
    Escgate::config(&Escgate::zone(
        ZONE_ID,
        "example.com",
        origin,
        &format!(
            r#"
[[zones.esc]]
request_headers = {{ set = {{ "x-config" = "{version}" }} }}
response_headers = {{ set = {{ "x-config" = "{version}" }} }}
"#
        ),
    ))
}

/// The config text of a running escgate with its placeholders filled, as it is on disk.
fn rewrite(escgate: &Escgate, from: &str, to: &str) {
    let text = std::fs::read_to_string(&escgate.config_path).unwrap();
    assert!(text.contains(from), "config holds {from}");
    std::fs::write(&escgate.config_path, text.replace(from, to)).unwrap();
}

#[test]
fn valid_reload_swaps_in_and_requests_in_flight_finish_on_the_old_config() {
    let origin = TestOrigin::start();
    let escgate = Escgate::start(&tagged_zone(origin.addr, "one"));
    assert_eq!(
        get(escgate.addr, "example.com", "/")
            .echo()
            .header("x-config"),
        Some("one")
    );

    let addr = escgate.addr;
    let slow = std::thread::spawn(move || get(addr, "example.com", "/slow/700"));
    eventually("the slow request to reach the origin", || {
        origin.requests() >= 2
    });
    rewrite(&escgate, "\"one\"", "\"two\"");
    escgate::config::reload(&escgate.writer, &escgate.config_path).expect("valid reload");

    let fresh = get(escgate.addr, "example.com", "/");
    assert_eq!(fresh.echo().header("x-config"), Some("two"));
    assert_eq!(fresh.header("x-config"), Some("two"));
    let in_flight = slow.join().unwrap();
    assert_eq!(
        in_flight.header("x-config"),
        Some("one"),
        "old snapshot to the end"
    );
}

#[test]
fn invalid_reload_is_rejected_and_the_old_config_keeps_serving() {
    let origin = TestOrigin::start();
    let escgate = Escgate::start(&tagged_zone(origin.addr, "one"));
    rewrite(
        &escgate,
        "[[zones.esc]]",
        "[[zones.esc]]\nredirect = { to = \"/x\", status = 300 }",
    );
    let errors =
        escgate::config::reload(&escgate.writer, &escgate.config_path).expect_err("invalid file");
    assert_eq!(
        errors.0,
        ["zones[0].esc[0].redirect.status: 301 or 302 or 303 or 307 or 308 expected, got 300"]
    );
    let response = get(escgate.addr, "example.com", "/");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("x-config"), Some("one"));
}

/// The real binary, stopped with SIGINT (fast shutdown) on drop.
struct Binary(Child);

impl Drop for Binary {
    fn drop(&mut self) {
        signal(&self.0, "INT");
        let deadline = std::time::Instant::now() + common::DEADLINE;
        while self.0.try_wait().ok().flatten().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = self.0.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.wait();
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name}");
}

#[test]
fn sighup_reloads_the_binary_and_keeps_serving_on_a_bad_file() {
    let origin = TestOrigin::start();
    let dir = common::temp_dir("sighup");
    let listen = common::free_addr();
    let path = dir.join("escgate.toml");
    let text = tagged_zone(origin.addr, "one")
        .replace("@LISTEN@", &listen.to_string())
        .replace("@STATE@", &dir.join("state.json").display().to_string());
    std::fs::write(&path, &text).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_escgate"))
        .arg("--config")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start escgate");
    let binary = Binary(child);
    common::wait_listening(listen);
    let version = || {
        get(listen, "example.com", "/")
            .header("x-config")
            .map(str::to_string)
    };
    assert_eq!(version().as_deref(), Some("one"));

    std::fs::write(&path, text.replace("\"one\"", "\"two\"")).unwrap();
    signal(&binary.0, "HUP");
    eventually("SIGHUP reload", || version().as_deref() == Some("two"));

    std::fs::write(
        &path,
        text.replace("name = \"example.com\"", "name = \"bad name\""),
    )
    .unwrap();
    signal(&binary.0, "HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        version().as_deref(),
        Some("two"),
        "bad file ignored, still serving"
    );
    drop(binary);
    let _ = std::fs::remove_dir_all(dir);
}
