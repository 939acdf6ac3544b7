//! Per-request state shared by the pingora phases.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::config::ZoneConfig;
use crate::esc::decision::Decision;
use crate::esc::FeatureSet;
use crate::state::Snapshot;

/// What escgate answered by itself, for the access log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalAnswer {
    UnknownHost,
    Redirect,
}

/// One request's context. The snapshot is loaded once, so every phase sees the same version
/// even if a reload swaps in another one meanwhile.
#[derive(Debug)]
pub struct RequestCtx {
    pub snapshot: Arc<Snapshot>,
    /// Index into `snapshot.config.zones`.
    pub zone: Option<u32>,
    pub decision: Option<Decision>,
    /// Bit `i` set: ESC entry `i` of the zone matched (always 0 when ESC is disabled).
    pub matched: u64,
    /// Selected origin address and SNI in the zone's upstream table.
    pub address: u16,
    pub sni: u16,
    /// Edge features switched off by `feature_exceptions`.
    pub features_off: FeatureSet,
    /// The matched ESC `redirect`: status and `Location`, answered in `request_filter`.
    pub redirect: Option<(http::StatusCode, http::HeaderValue)>,
    pub local_answer: Option<LocalAnswer>,
    /// Body that replaces the origin's (custom error, status redirect).
    pub replacement_body: Option<Bytes>,
    /// A bodiless origin error is being replaced through `fail_to_proxy` (not a real failure).
    pub replaced_by_error: bool,
    pub upstream_started: Option<Instant>,
    pub upstream_time: Option<Duration>,
}

impl RequestCtx {
    /// A context reading `snapshot`.
    pub fn new(snapshot: Arc<Snapshot>) -> RequestCtx {
        RequestCtx {
            snapshot,
            zone: None,
            decision: None,
            matched: 0,
            address: 0,
            sni: 0,
            features_off: FeatureSet::default(),
            redirect: None,
            local_answer: None,
            replacement_body: None,
            replaced_by_error: false,
            upstream_started: None,
            upstream_time: None,
        }
    }

    /// The zone of this request, once routed.
    pub fn zone_config(&self) -> Option<&ZoneConfig> {
        self.snapshot.config.zones.get(self.zone? as usize)
    }

    /// The WAF must not run for this request (`feature_exceptions = ["waf"]`).
    pub fn waf_exempt(&self) -> bool {
        self.features_off.contains(FeatureSet::WAF)
    }

    /// ESC customizations run for this request.
    pub fn esc_applied(&self) -> bool {
        self.decision.is_some_and(|d| d.esc_applied())
    }
}
