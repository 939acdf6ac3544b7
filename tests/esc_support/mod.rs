//! The real `escgate` binary as a child process on ephemeral loopback ports, for tests that
//! restart it, `kill -9` it or read its log. Killed (SIGKILL) on drop, so a panicking test never
//! leaves one behind.
// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{wait_listening, DEADLINE};

/// A running `escgate --config <file>`; its output (the log is on stderr) goes to `log_path`.
pub struct EscgateProcess {
    /// The proxy listener.
    pub addr: SocketAddr,
    /// The admin listener.
    pub admin_addr: SocketAddr,
    /// Where its log is written.
    pub log_path: PathBuf,
    child: Option<Child>,
}

impl EscgateProcess {
    /// Writes `toml` (placeholders `@LISTEN@`, `@ADMIN@` replaced by fresh loopback addresses,
    /// `@STATE@` by `state_path`) to `dir/escgate-<n>.toml`, starts the binary on it and waits
    /// until both listeners accept connections.
    pub fn start(dir: &Path, toml: &str, state_path: &Path) -> EscgateProcess {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let run = NEXT.fetch_add(1, Ordering::Relaxed);
        let addr = crate::common::free_addr();
        let admin_addr = crate::common::free_addr();
        let text = toml
            .replace("@LISTEN@", &addr.to_string())
            .replace("@ADMIN@", &admin_addr.to_string())
            .replace("@STATE@", &state_path.display().to_string());
        let config_path = dir.join(format!("escgate-{run}.toml"));
        std::fs::write(&config_path, text).expect("write config");
        let log_path = dir.join(format!("escgate-{run}.log"));
        let log = std::fs::File::create(&log_path).expect("create log file");
        let child = Command::new(env!("CARGO_BIN_EXE_escgate"))
            .arg("--config")
            .arg(&config_path)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("spawn escgate");
        let mut process = EscgateProcess {
            addr,
            admin_addr,
            log_path,
            child: Some(child),
        };
        process.wait_ready();
        process
    }

    fn wait_ready(&mut self) {
        let start = Instant::now();
        for addr in [self.addr, self.admin_addr] {
            while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
                if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                    panic!(
                        "escgate exited ({status}) before listening:\n{}",
                        self.log()
                    );
                }
                assert!(
                    start.elapsed() < DEADLINE,
                    "escgate not listening on {addr}:\n{}",
                    self.log()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        wait_listening(self.addr);
    }

    /// `http://<admin>/client/v4`.
    pub fn admin_base(&self) -> String {
        format!("http://{}/client/v4", self.admin_addr)
    }

    /// Everything the process logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// SIGKILL, then reap.
    pub fn kill_9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGINT (pingora's fast shutdown), waiting at most [`DEADLINE`]; SIGKILL after that.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let interrupted = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        let start = Instant::now();
        while interrupted && start.elapsed() < DEADLINE {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("escgate did not stop on SIGINT within {DEADLINE:?}");
    }
}

impl Drop for EscgateProcess {
    fn drop(&mut self) {
        self.kill_9();
    }
}
