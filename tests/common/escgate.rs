//! escgate running in-process from a TOML string, on ephemeral loopback ports.

use std::net::SocketAddr;
use std::path::PathBuf;

use escgate::state::SharedSnapshot;

use super::{free_addr, temp_dir, wait_listening};

/// The account id the [`Escgate::config`] helpers use.
pub const ACCOUNT_ID: &str = "01a7362d577a6c3019a474fd6f485823";
/// The zone id the [`Escgate::config`] helpers use for their first zone.
pub const ZONE_ID: &str = "023e105f4ecef8ad9ca31a8372d0c353";

/// A running escgate; stops (fast shutdown) and joins its thread on drop.
pub struct Escgate {
    /// The proxy listener.
    pub addr: SocketAddr,
    /// The admin listener named in the config (`@ADMIN@`).
    pub admin_addr: SocketAddr,
    /// The config file it was started from (rewrite it and call reload to test reloads).
    pub config_path: PathBuf,
    /// Its working directory (state file lives here as `state.json`).
    pub dir: PathBuf,
    /// The snapshot handle of the running server.
    pub shared: SharedSnapshot,
    /// The tenant-state writer of the running server (what the admin API writes through).
    pub writer: std::sync::Arc<escgate::state::Writer>,
    stop: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Escgate {
    /// Starts escgate from `toml`, after replacing the placeholders `@LISTEN@` and `@ADMIN@`
    /// (fresh `127.0.0.1:port` addresses) and `@STATE@` (a state file in a fresh directory).
    /// Waits for the proxy (and the admin API, when the config names `@ADMIN@`) to listen.
    pub fn start(toml: &str) -> Escgate {
        let addr = free_addr();
        let admin_addr = free_addr();
        let dir = temp_dir("escgate");
        let state_path = dir.join("state.json");
        let text = toml
            .replace("@LISTEN@", &addr.to_string())
            .replace("@ADMIN@", &admin_addr.to_string())
            .replace("@STATE@", &state_path.display().to_string());
        let config_path = dir.join("escgate.toml");
        std::fs::write(&config_path, &text).expect("write config");
        let app = escgate::app::build(&config_path)
            .unwrap_or_else(|errors| panic!("test config rejected:\n{errors}"));
        let shared = app.shared.clone();
        let writer = app.writer.clone();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let thread = std::thread::spawn(move || app.run_until(stopped));
        wait_listening(addr);
        if toml.contains("@ADMIN@") {
            wait_listening(admin_addr);
        }
        Escgate {
            addr,
            admin_addr,
            config_path,
            dir,
            shared,
            writer,
            stop,
            thread: Some(thread),
        }
    }

    /// A complete config without admin API: `[server]` on the placeholders with short shutdown
    /// times, one account, then `zones` (TOML for `[[zones]]` tables) appended.
    pub fn config(zones: &str) -> String {
        Self::config_with_server_keys("", zones)
    }

    /// [`Escgate::config`] plus `admin_listen = "@ADMIN@"` (start then waits for the admin API).
    pub fn config_with_admin(zones: &str) -> String {
        Self::config_with_server_keys("admin_listen = \"@ADMIN@\"", zones)
    }

    /// [`Escgate::config`] with `server_keys` (lines) added to `[server]`.
    pub fn config_with_server_keys(server_keys: &str, zones: &str) -> String {
        format!(
            r#"[server]
listen = "@LISTEN@"
{server_keys}
threads = 1
state_path = "@STATE@"
grace_period_seconds = 0
graceful_shutdown_timeout_seconds = 1

[[accounts]]
id = "{ACCOUNT_ID}"
name = "Test account"

{zones}"#
        )
    }

    /// One `[[zones]]` table for `name` in front of `origin`, with `extra` lines (zone keys and
    /// `[[zones.esc]]` tables) appended.
    pub fn zone(id: &str, name: &str, origin: SocketAddr, extra: &str) -> String {
        format!(
            r#"[[zones]]
id = "{id}"
name = "{name}"
account_id = "{ACCOUNT_ID}"
origin = "{origin}"
{extra}
"#
        )
    }

    /// [`Escgate::start`] with one zone `example.com` (id [`ZONE_ID`]) and `extra` lines.
    pub fn with_zone(origin: SocketAddr, extra: &str) -> Escgate {
        Escgate::start(&Escgate::config(&Escgate::zone(
            ZONE_ID,
            "example.com",
            origin,
            extra,
        )))
    }
}

impl Drop for Escgate {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
