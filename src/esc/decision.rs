//! The ESC decision for one request: applied, or disabled and why.
//!
//! SHARED CONTRACT: the proxy calls [`decide`] once per request in `request_filter` and keeps the
//! [`Decision`] in its context (logs, debug header); the admin-API owner implements it.

/// Why ESC is applied or disabled for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Applied,
    ZoneAlways,
    AccountAlways,
    ZoneSecret,
    AccountSecret,
}

impl Reason {
    /// `applied`, `zone_always`, `account_always`, `zone_secret`, `account_secret`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Applied => "applied",
            Reason::ZoneAlways => "zone_always",
            Reason::AccountAlways => "account_always",
            Reason::ZoneSecret => "zone_secret",
            Reason::AccountSecret => "account_secret",
        }
    }
}

/// The outcome of [`decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub reason: Reason,
}

impl Decision {
    /// ESC customizations run for this request.
    pub fn esc_applied(self) -> bool {
        self.reason == Reason::Applied
    }
}

/// Decides for a request to `zone_id` in `account_id`, given its request headers (the
/// `disable_esc` cookie). Placeholder: always applied until the tenant state lands.
pub fn decide(
    _tenant: &crate::state::tenant::TenantState,
    _zone_id: &str,
    _account_id: &str,
    _headers: &http::HeaderMap,
) -> Decision {
    Decision {
        reason: Reason::Applied,
    }
}
