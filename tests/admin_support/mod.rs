//! Starts the real admin service (pingora) alone on a loopback ephemeral port, with a config
//! built in the test, and talks HTTP to it.
// `..Default::default()` keeps these literals compiling as the config structs gain fields.
#![allow(dead_code, clippy::needless_update)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use escgate::admin::auth::hash_secret;
use escgate::config::auth::{ApiKeyEntry, ApiTokenEntry};
use escgate::config::{AccountConfig, Config, Plan, ZoneConfig};
use escgate::state::SharedSnapshot;
use pingora::services::Service as _;
use serde_json::Value;

pub const ACCOUNT_1: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
pub const ACCOUNT_2: &str = "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2";
pub const ZONE_1: &str = "01010101010101010101010101010101";
pub const ZONE_2: &str = "02020202020202020202020202020202";
pub const ZONE_3: &str = "03030303030303030303030303030303";
pub const UNKNOWN_ZONE: &str = "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f";

pub const ADMIN_EMAIL: &str = "ops@example.com";
pub const ADMIN_KEY: &str = "global-key-all-accounts";
pub const ACCOUNT_1_EMAIL: &str = "a1@example.com";
pub const ACCOUNT_1_KEY: &str = "key-account-1";
/// esc:edit on zone 1 only.
pub const ZONE_1_TOKEN: &str = "token-zone-1-edit";
pub const ZONE_1_TOKEN_ID: &str = "11111111111111111111111111111111";
/// esc:read + zone:read + account:read on account 1.
pub const ACCOUNT_1_READ_TOKEN: &str = "token-account-1-read";
/// Every permission on every account.
pub const ALL_TOKEN: &str = "token-all";

/// Two accounts, three zones, keys and tokens of every kind.
pub fn test_config(admin_listen: SocketAddr, state_path: &Path) -> Config {
    let zone = |id: &str, name: &str, account: &str, plan| ZoneConfig {
        id: id.into(),
        name: name.into(),
        account_id: account.into(),
        plan,
        debug_header: true,
        ..Default::default()
    };
    Config {
        server: escgate::config::ServerConfig {
            listen: Vec::new(),
            admin_listen: Some(admin_listen),
            threads: 1,
            state_path: state_path.to_path_buf(),
            ..Default::default()
        },
        accounts: vec![
            AccountConfig {
                id: ACCOUNT_1.into(),
                name: "Account One".into(),
            },
            AccountConfig {
                id: ACCOUNT_2.into(),
                name: "Account Two".into(),
            },
        ],
        zones: vec![
            zone(ZONE_1, "one.example", ACCOUNT_1, Plan::Enterprise),
            zone(ZONE_2, "two.example", ACCOUNT_1, Plan::Pro),
            zone(ZONE_3, "three.test", ACCOUNT_2, Plan::Business),
        ],
        api_keys: vec![
            ApiKeyEntry {
                email: ADMIN_EMAIL.into(),
                key_sha256: hash_secret(ADMIN_KEY),
                accounts: vec!["*".into()],
            },
            ApiKeyEntry {
                email: ACCOUNT_1_EMAIL.into(),
                key_sha256: hash_secret(ACCOUNT_1_KEY),
                accounts: vec![ACCOUNT_1.into()],
            },
        ],
        api_tokens: vec![
            ApiTokenEntry {
                id: ZONE_1_TOKEN_ID.into(),
                token_sha256: hash_secret(ZONE_1_TOKEN),
                permissions: vec!["esc:edit".into()],
                zones: vec![ZONE_1.into()],
                accounts: vec![],
            },
            ApiTokenEntry {
                id: "22222222222222222222222222222222".into(),
                token_sha256: hash_secret(ACCOUNT_1_READ_TOKEN),
                permissions: vec!["esc:read".into(), "zone:read".into(), "account:read".into()],
                zones: vec![],
                accounts: vec![ACCOUNT_1.into()],
            },
            ApiTokenEntry {
                id: "33333333333333333333333333333333".into(),
                token_sha256: hash_secret(ALL_TOKEN),
                permissions: escgate::admin::auth::Permission::ALL
                    .iter()
                    .map(|p| p.as_str().to_owned())
                    .collect(),
                zones: vec![],
                accounts: vec!["*".into()],
            },
        ],
        ..Default::default()
    }
}

/// A fresh directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("escgate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind ephemeral port");
    listener.local_addr().expect("local addr")
}

/// A running admin service; stopped on drop.
pub struct AdminServer {
    pub addr: SocketAddr,
    pub shared: SharedSnapshot,
    pub state_path: PathBuf,
    shutdown: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AdminServer {
    /// Starts on a fresh port with [`test_config`], state loaded from `state_path`.
    pub fn start(state_path: &Path) -> AdminServer {
        let addr = free_port();
        Self::start_with(test_config(addr, state_path))
    }

    /// Starts with `config` (its `admin_listen` and `state_path` are used).
    pub fn start_with(config: Config) -> AdminServer {
        let addr = config.server.admin_listen.expect("admin_listen");
        let state_path = config.server.state_path.clone();
        let (shared, writer) = escgate::state::open(config).expect("state loads");
        let mut service = escgate::admin::service(
            shared.clone(),
            writer,
            state_path.with_file_name("missing-config.toml"),
        );
        let (shutdown, watch) = tokio::sync::watch::channel(false);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(service.start_service(None, watch, 1));
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "admin service did not start on {addr}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        AdminServer {
            addr,
            shared,
            state_path,
            shutdown,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:port/client/v4`.
    pub fn base(&self) -> String {
        format!("http://{}/client/v4", self.addr)
    }

    /// Stops the service and waits (bounded) for its thread.
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(thread) = self.thread.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for AdminServer {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

/// Credentials of a call.
#[derive(Clone, Copy)]
pub enum Auth<'a> {
    None,
    Key(&'a str, &'a str),
    Token(&'a str),
    Raw(&'a [(&'a str, &'a str)]),
}

/// A response: status, headers we check, parsed JSON body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub json: Value,
}

impl Answer {
    /// Codes of the `errors` items.
    pub fn codes(&self) -> Vec<u64> {
        self.json["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|i| i["code"].as_u64()).collect())
            .unwrap_or_default()
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(10))
        .build()
}

/// One call; `body` is sent with `content_type` when given.
pub fn call(method: &str, url: &str, auth: Auth<'_>, body: Option<(&str, &[u8])>) -> Answer {
    let mut request = agent().request(method, url);
    match auth {
        Auth::None => {}
        Auth::Key(email, key) => {
            request = request.set("X-Auth-Email", email).set("X-Auth-Key", key)
        }
        Auth::Token(token) => request = request.set("Authorization", &format!("Bearer {token}")),
        Auth::Raw(pairs) => {
            for (k, v) in pairs {
                request = request.set(k, v);
            }
        }
    }
    let result = match body {
        Some((content_type, bytes)) => request.set("Content-Type", content_type).send_bytes(bytes),
        None => request.call(),
    };
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let status = response.status();
    let content_type = response.header("content-type").unwrap_or("").to_owned();
    let text = response.into_string().expect("body");
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} {url}: not JSON ({e}): {text:?}"));
    Answer {
        status,
        content_type,
        json,
    }
}

/// POST a JSON body.
pub fn post_json(url: &str, auth: Auth<'_>, body: &str) -> Answer {
    call(
        "POST",
        url,
        auth,
        Some(("application/json", body.as_bytes())),
    )
}

/// The global admin key.
pub fn admin() -> Auth<'static> {
    Auth::Key(ADMIN_EMAIL, ADMIN_KEY)
}
