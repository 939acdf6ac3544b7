//! The minimal pingora 0.9.1 reverse proxy that `benches/load/run.sh` measures escgate against.
//!
//! It does exactly the header work of the load benchmark's ESC entry and nothing else: five
//! request-header sets, the Host switch, the forwarding headers every proxy adds (escgate's own
//! function, as nginx and haproxy do in the benchmark) and two response-header sets, to one
//! keep-alive origin with escgate's default timeouts, on one worker thread. escgate's CPU per
//! request minus this binary's is the cost of escgate's own logic (zone lookup, ESC decision,
//! cookie scan), so keep this file free of extra work.
//!
//! With `--passthrough` it does no work at all (no header edit, no forwarding header): the floor
//! any pingora-based proxy starts from, which bounds what escgate can reach against nginx.
//!
//! Usage: `pingora_baseline --listen 127.0.0.1:18084 --origin 127.0.0.1:18081 [--passthrough]`.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::time::Duration;

use async_trait::async_trait;
use clap::Parser;
use escgate::proxy::forwarding;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::{HttpPeer, ProxyHttp, Result, Session};
use pingora::server::configuration::ServerConf;
use pingora::server::Server;

/// The allocator escgate ships with, so that escgate's CPU minus this binary's isolates escgate's
/// own logic (mimalloc alone takes ~17% off pingora's CPU per request here).
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

/// The same edits as the `[[zones.esc]]` entry in `benches/load/escgate.toml`.
const REQUEST_HEADER_SETS: [(&str, &str); 5] = [
    ("x-esc-1", "one"),
    ("x-esc-2", "two"),
    ("x-esc-3", "three"),
    ("x-esc-4", "four"),
    ("x-esc-5", "five"),
];
const UPSTREAM_HOST: &str = "origin.internal";
const RESPONSE_HEADER_SETS: [(&str, &str); 2] = [
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
];

/// Command line of the baseline proxy.
#[derive(Parser, Debug)]
#[command(about = "Minimal pingora proxy doing the load benchmark's header work")]
struct Args {
    /// Address the proxy listens on.
    #[arg(long)]
    listen: SocketAddr,
    /// Plain-HTTP origin every request goes to.
    #[arg(long)]
    origin: SocketAddr,
    /// Worker threads of the proxy service.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Forward untouched: no header work at all (pingora's own cost per request).
    #[arg(long)]
    passthrough: bool,
}

/// Forwards everything to one origin, applying the fixed header edits.
struct BaselineProxy {
    /// Built once: the keep-alive pool key is the whole peer, so every request reuses it.
    origin: Box<HttpPeer>,
}

#[async_trait]
impl ProxyHttp for BaselineProxy {
    type CTX = ();

    fn new_ctx(&self) -> Self::CTX {}

    async fn upstream_peer(&self, _session: &mut Session, _ctx: &mut ()) -> Result<Box<HttpPeer>> {
        Ok(self.origin.clone())
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        _ctx: &mut (),
    ) -> Result<()> {
        let client_ip = forwarding::client_ip(session);
        forwarding::add_forwarding_headers(upstream_request, client_ip, false);
        for (name, value) in REQUEST_HEADER_SETS {
            upstream_request.insert_header(name, value)?;
        }
        upstream_request.insert_header("host", UPSTREAM_HOST)?;
        Ok(())
    }

    async fn response_filter(
        &self,
        _session: &mut Session,
        upstream_response: &mut ResponseHeader,
        _ctx: &mut (),
    ) -> Result<()> {
        for (name, value) in RESPONSE_HEADER_SETS {
            upstream_response.insert_header(name, value)?;
        }
        Ok(())
    }
}

/// Forwards everything to one origin untouched: only the hook pingora cannot do without.
struct PassthroughProxy {
    origin: Box<HttpPeer>,
}

#[async_trait]
impl ProxyHttp for PassthroughProxy {
    type CTX = ();

    fn new_ctx(&self) -> Self::CTX {}

    async fn upstream_peer(&self, _session: &mut Session, _ctx: &mut ()) -> Result<Box<HttpPeer>> {
        Ok(self.origin.clone())
    }
}

fn main() {
    let args = Args::parse();
    let conf = ServerConf {
        threads: args.threads,
        // A benchmark run stops its servers right away; pingora's defaults wait 300 s.
        grace_period_seconds: Some(0),
        graceful_shutdown_timeout_seconds: Some(1),
        ..ServerConf::default()
    };
    let mut server = Server::new_with_opt_and_conf(None, conf);
    server.bootstrap();
    // The origin timeouts escgate sets by default (connect 5 s, read 30 s, idle 60 s); nginx and
    // haproxy time their upstreams out too. pingora arms a timer for every guarded read.
    let mut origin = HttpPeer::new(args.origin, false, String::new());
    origin.options.connection_timeout = Some(Duration::from_secs(5));
    origin.options.read_timeout = Some(Duration::from_secs(30));
    origin.options.idle_timeout = Some(Duration::from_secs(60));
    let origin = Box::new(origin);
    if args.passthrough {
        serve(server, &args.listen, PassthroughProxy { origin })
    } else {
        serve(server, &args.listen, BaselineProxy { origin })
    }
}

fn serve<P>(mut server: Server, listen: &SocketAddr, proxy: P) -> !
where
    P: ProxyHttp + Send + Sync + 'static,
    P::CTX: Send + Sync,
{
    let mut service = pingora::proxy::http_proxy_service(&server.configuration, proxy);
    service.add_tcp(&listen.to_string());
    server.add_service(service);
    server.run_forever()
}
