//! Tenant state: what API callers write (ESC flags and secrets per zone/account, WAF state per zone).

/// All tenant state. Cheap to clone-and-modify (persistent maps), so a toggle's cost does not grow
/// with the number of zones.
#[derive(Debug, Default, Clone)]
pub struct TenantState {}
