//! Assembling and running escgate: one pingora [`Server`] with the proxy service, the admin API,
//! the optional demo origin and the SIGHUP reloader, all sharing one snapshot.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pingora::server::configuration::ServerConf;
use pingora::server::{RunArgs, Server, ShutdownSignal, ShutdownSignalWatch, ShutdownWatch};
use pingora::services::background::{background_service, BackgroundService};

use crate::config::{self, Config, ConfigErrors};
use crate::proxy::EscProxy;
use crate::state::{SharedSnapshot, Writer};
use crate::store::StoreError;

/// Why escgate could not be built.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The config file is invalid (every problem listed).
    #[error("{0}")]
    Config(#[from] ConfigErrors),
    /// The tenant state store could not be opened.
    #[error("tenant state store: {0}")]
    Store(#[from] StoreError),
}

/// A built, not yet running, escgate.
pub struct App {
    /// The pingora server holding every service.
    pub server: Server,
    /// The snapshot the services read; swap it to change what they serve.
    pub shared: SharedSnapshot,
    /// The single writer of tenant state (admin API changes go through it).
    pub writer: Arc<Writer>,
    /// The file reloads read.
    pub config_path: PathBuf,
}

/// Loads `config_path`, opens the tenant state store it names and builds the server.
pub fn build(config_path: &Path) -> Result<App, AppError> {
    let config = config::load_file(config_path)?;
    build_with(config, config_path.to_path_buf())
}

/// Builds the server around an already loaded config (read again from `config_path` on reload).
pub fn build_with(config: Config, config_path: PathBuf) -> Result<App, AppError> {
    let server_conf = pingora_conf(&config);
    let mut server = Server::new_with_opt_and_conf(None, server_conf);
    server.bootstrap();
    let conf = server.configuration.clone();

    let demo_origin = config.demo_origin;
    let listen = config.server.listen.clone();
    let admin_listen = config.server.admin_listen;
    let (shared, writer) = crate::state::open(config)?;

    let mut proxy = pingora::proxy::http_proxy_service_with_name(
        &conf,
        EscProxy::new(shared.clone()),
        "escgate proxy",
    );
    for address in &listen {
        proxy.add_tcp(&address.to_string());
    }
    server.add_service(proxy);

    if let Some(address) = demo_origin {
        server.add_service(crate::demo_origin::service(address));
    }

    server.add_service(background_service(
        "config reloader",
        SighupReloader {
            shared: shared.clone(),
            path: config_path.clone(),
        },
    ));

    if admin_listen.is_some() {
        server.add_service(crate::admin::service(
            shared.clone(),
            writer.clone(),
            config_path.clone(),
        ));
    }

    Ok(App {
        server,
        shared,
        writer,
        config_path,
    })
}

fn pingora_conf(config: &Config) -> ServerConf {
    let server = &config.server;
    ServerConf {
        threads: server.threads,
        work_stealing: server.work_stealing,
        grace_period_seconds: Some(server.grace_period_seconds),
        graceful_shutdown_timeout_seconds: Some(server.graceful_shutdown_timeout_seconds),
        upstream_keepalive_pool_size: server.upstream_keepalive_pool_size,
        ..ServerConf::default()
    }
}

impl App {
    /// Runs until SIGINT (fast), SIGTERM (graceful) or SIGQUIT (graceful upgrade), as pingora does.
    pub fn run(self) {
        self.server.run(RunArgs::default());
    }

    /// Runs until `stop` becomes `true` (or its sender is dropped), then shuts down at once.
    /// For embedding escgate, e.g. in tests.
    pub fn run_until(self, stop: tokio::sync::watch::Receiver<bool>) {
        self.server.run(RunArgs {
            shutdown_signal: Box::new(StopWatch(stop)),
        });
    }
}

struct StopWatch(tokio::sync::watch::Receiver<bool>);

#[async_trait]
impl ShutdownSignalWatch for StopWatch {
    async fn recv(&self) -> ShutdownSignal {
        let mut stop = self.0.clone();
        let _ = stop.wait_for(|stop| *stop).await;
        ShutdownSignal::FastShutdown
    }
}

/// Reloads the config file on SIGHUP; an invalid file is logged and the old config kept.
struct SighupReloader {
    shared: SharedSnapshot,
    path: PathBuf,
}

#[async_trait]
impl BackgroundService for SighupReloader {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangup = match signal(SignalKind::hangup()) {
            Ok(hangup) => hangup,
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGHUP; reload by signal is off");
                return;
            }
        };
        loop {
            tokio::select! {
                received = hangup.recv() => {
                    if received.is_none() {
                        return;
                    }
                    reload_and_log(&self.shared, &self.path);
                }
                _ = shutdown.changed() => return,
            }
        }
    }
}

/// [`config::reload`], logging the outcome (each error on its own line).
pub fn reload_and_log(shared: &SharedSnapshot, path: &Path) -> bool {
    match config::reload(shared, path) {
        Ok(()) => {
            tracing::info!(path = %path.display(), "config reloaded");
            true
        }
        Err(errors) => {
            for error in &errors.0 {
                tracing::error!(path = %path.display(), %error, "config rejected");
            }
            tracing::error!(path = %path.display(), "reload failed; the previous config keeps serving");
            false
        }
    }
}
