//! Previous WAF (managed-rule packages) and the new ruleset-based WAF, with the migration between them.
//!
//! - [`catalog`]: managed rules of both generations and the mapping between them (data in the repo).
//! - [`legacy`]: the previous WAF's per-zone model.
//! - [`migration`]: eligibility, the generated configuration, the state machine, the status.
//! - [`ruleset`]: the new WAF's entry point ruleset and its validation against the catalog.
//! - [`api`]: the HTTP handlers, independent of the HTTP server (the admin router calls
//!   [`api::handle`] and persists the returned state).

pub mod api;
pub mod catalog;
pub mod clock;
pub mod errors;
pub mod ids;
pub mod legacy;
pub mod migration;
pub mod ruleset;

use serde::{Deserialize, Serialize};

/// Everything the WAF keeps per zone in the tenant state store (previous-WAF settings, overrides,
/// firewall rules, page rules, migration state, entry point ruleset). Every field defaults, so
/// state files written by older versions load.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WafZoneState {
    /// The previous WAF (frozen once the migration is complete).
    pub legacy: legacy::LegacyWaf,
    pub migration: migration::MigrationRecord,
    /// The zone's `http_request_firewall_managed` entry point, once deployed.
    pub entrypoint: Option<ruleset::EntryPoint>,
    /// When this zone's WAF state was first written (RFC 3339).
    pub created_on: Option<String>,
    /// Source of object ids; only grows (see [`ids::object_id`]).
    pub next_serial: u64,
}

impl WafZoneState {
    /// Whether the zone has completed its migration (the previous-WAF API answers 410).
    pub fn migrated(&self) -> bool {
        self.migration.state == migration::MigrationState::Complete
    }
}
