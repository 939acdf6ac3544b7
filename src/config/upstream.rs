//! The origin peers of a zone, built at load for every (address, SNI) pair its ESC entries can
//! select. Pingora's keep-alive pool is keyed by the whole peer, so each request reuses one of
//! these instead of building a variation of its own.

use std::net::SocketAddr;
use std::time::Duration;

use pingora::upstreams::peer::HttpPeer;

/// How a zone connects to its origin(s).
#[derive(Debug, Clone)]
pub struct OriginSettings {
    pub tls: bool,
    pub verify_cert: bool,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

/// Peers indexed by `(address index, SNI index)`; index 0 of each is the zone's own origin.
#[derive(Debug, Clone, Default)]
pub struct UpstreamTable {
    peers: Vec<HttpPeer>,
    sni_count: usize,
}

impl UpstreamTable {
    /// One peer per (address, SNI) pair.
    pub fn build(addresses: &[SocketAddr], snis: &[String], settings: &OriginSettings) -> Self {
        let peers = addresses
            .iter()
            .flat_map(|address| snis.iter().map(move |sni| peer(*address, sni, settings)))
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
        self.peers.get(usize::from(address) * self.sni_count + sni)
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
