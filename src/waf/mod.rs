//! Previous WAF (managed-rule packages) and the new ruleset-based WAF, with the migration between them.

use serde::{Deserialize, Serialize};

/// Everything the WAF keeps per zone in the tenant state store (previous-WAF settings, overrides,
/// firewall rules, page rules, migration state, entry point ruleset).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WafZoneState {}
