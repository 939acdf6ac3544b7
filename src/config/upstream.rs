//! The origin peers of a zone, built at load for every (address, SNI) pair its ESC entries can
//! select. Pingora's keep-alive pool is keyed by the whole peer, so each request reuses one of
//! these instead of building a variation of its own.
//!
//! A pingora `HttpPeer` weighs about 2.5 KiB; zones with the same origin and settings share one
//! (through [`PeerCache`]), which keeps 10,000 zones well under 64 MiB and gives them one pool.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use pingora::upstreams::peer::HttpPeer;

/// How a zone connects to its origin(s).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OriginSettings {
    pub tls: bool,
    pub verify_cert: bool,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

/// Peers already built during one config load, by everything that makes them differ.
#[derive(Debug, Default)]
pub struct PeerCache {
    peers: HashMap<(SocketAddr, String, OriginSettings), Arc<HttpPeer>>,
}

impl PeerCache {
    /// The peer for `address`, `sni` and `settings`, built on first use. Plain-HTTP peers carry
    /// no SNI (pingora only uses it for TLS), so every zone of a plain origin shares one peer.
    fn peer(&mut self, address: SocketAddr, sni: &str, settings: &OriginSettings) -> Arc<HttpPeer> {
        let sni = if settings.tls { sni } else { "" };
        self.peers
            .entry((address, sni.to_string(), settings.clone()))
            .or_insert_with(|| Arc::new(peer(address, sni, settings)))
            .clone()
    }
}

/// Peers indexed by `(address index, SNI index)`; index 0 of each is the zone's own origin.
#[derive(Debug, Clone, Default)]
pub struct UpstreamTable {
    peers: Box<[Arc<HttpPeer>]>,
    sni_count: usize,
}

impl UpstreamTable {
    /// One peer per (address, SNI) pair, shared through `cache` with identical pairs of other
    /// zones.
    pub fn build(
        addresses: &[SocketAddr],
        snis: &[String],
        settings: &OriginSettings,
        cache: &mut PeerCache,
    ) -> Self {
        let peers = addresses
            .iter()
            .flat_map(|address| snis.iter().map(move |sni| (*address, sni)))
            .map(|(address, sni)| cache.peer(address, sni, settings))
            .collect();
        UpstreamTable {
            peers,
            sni_count: snis.len(),
        }
    }

    /// The peer for this pair; `None` when the table is empty or an index is out of range.
    pub fn peer(&self, address: u16, sni: u16) -> Option<&HttpPeer> {
        let sni = usize::from(sni);
        if sni >= self.sni_count {
            return None;
        }
        self.peers
            .get(usize::from(address) * self.sni_count + sni)
            .map(|peer| &**peer)
    }
}

fn peer(address: SocketAddr, sni: &str, settings: &OriginSettings) -> HttpPeer {
    let mut peer = HttpPeer::new(address, settings.tls, sni.to_string());
    peer.options.connection_timeout = Some(settings.connect_timeout);
    peer.options.read_timeout = Some(settings.read_timeout);
    peer.options.idle_timeout = Some(Duration::from_secs(60));
    peer.options.verify_cert = settings.verify_cert;
    peer.options.verify_hostname = settings.verify_cert;
    peer
}
