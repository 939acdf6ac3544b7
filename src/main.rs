//! The `escgate` command: run the proxy, validate a config, or hash an admin secret.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sha2::{Digest, Sha256};

/// pingora allocates many small short-lived objects per request (header maps, buffers, task
/// state); mimalloc serves them from thread-local pages instead of glibc's arenas.
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

/// Allocator options have to be set before the first allocation, which the Rust runtime makes
/// before `main`: run as an ELF constructor.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CONFIGURE_ALLOCATOR: extern "C" fn() = escgate::memory::configure_allocator;

#[derive(Parser)]
#[command(
    name = "escgate",
    version,
    about = "Edge reverse proxy with ESC customizations"
)]
struct Cli {
    /// Config file (TOML).
    #[arg(long, default_value = escgate::config::DEFAULT_CONFIG_PATH)]
    config: PathBuf,
    /// Check the config file and the state it names (snapshot plus journal), and exit: 0 when
    /// the config is valid (with a warning per zone/account the state holds but the config no
    /// longer defines), else every error and 1 (an unreadable or invalid state file is an error).
    #[arg(long)]
    validate: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Read a secret from stdin and print its lowercase hex SHA-256 (for `key_sha256` and
    /// `token_sha256`). One trailing newline is ignored.
    HashSecret,
}

fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    if let Some(Command::HashSecret) = cli.command {
        let mut secret = String::new();
        std::io::stdin().read_to_string(&mut secret)?;
        let secret = secret.strip_suffix('\n').unwrap_or(&secret);
        let secret = secret.strip_suffix('\r').unwrap_or(secret);
        println!("{}", hex::encode(Sha256::digest(secret.as_bytes())));
        return Ok(ExitCode::SUCCESS);
    }
    if cli.validate {
        return Ok(validate(&cli.config));
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        // Logs go to stderr (journald under systemd), colored only on a terminal.
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // Building parses the config and loads the state: transient peaks several times the size of
    // what stays (see `memory`).
    let app = match escgate::memory::releasing_transient(|| escgate::app::build(&cli.config)) {
        Ok(app) => app,
        Err(errors) => {
            for error in &errors.0 {
                eprintln!("{error}");
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    tracing::info!(config = %cli.config.display(), "escgate starting");
    app.run();
    Ok(ExitCode::SUCCESS)
}

/// `--validate`: every config error, then the state at `server.state_path` (snapshot plus
/// journal segments, read without modifying them) checked against the config. Orphaned state is
/// kept by the server, so it only warns.
fn validate(config_path: &std::path::Path) -> ExitCode {
    use escgate::store::{FileStore, Store};
    let config = match escgate::config::load_file(config_path) {
        Ok(config) => config,
        Err(errors) => {
            for error in &errors.0 {
                eprintln!("{error}");
            }
            return ExitCode::FAILURE;
        }
    };
    let state_path = &config.server.state_path;
    let tenant = match FileStore::new(state_path).load() {
        Ok(tenant) => tenant,
        Err(error) => {
            eprintln!("server.state_path: {error}");
            return ExitCode::FAILURE;
        }
    };
    for orphan in tenant.orphans(&config) {
        eprintln!("warning: {}: {orphan}", state_path.display());
    }
    println!("{}: valid", config_path.display());
    ExitCode::SUCCESS
}
