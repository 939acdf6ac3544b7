//! Tenant state: what API callers write (ESC flags and secrets per zone/account, WAF state per zone).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::pmap::PMap;
use crate::waf::WafZoneState;

/// The disable-ESC setting of one zone or one account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EscSetting {
    /// ESC is disabled for every request in the scope.
    #[serde(default)]
    pub always: bool,
    /// A request whose `disable_esc` cookie equals this secret is served without ESC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_secret: Option<String>,
}

impl EscSetting {
    /// True when the setting changes nothing (ESC applied, no secret): such entries are not kept.
    pub fn is_default(&self) -> bool {
        !self.always && self.with_secret.is_none()
    }
}

/// All tenant state. Cheap to clone-and-modify (persistent maps), so a toggle's cost does not grow
/// with the number of zones.
#[derive(Debug, Default, Clone)]
pub struct TenantState {
    zone_esc: PMap<EscSetting>,
    account_esc: PMap<EscSetting>,
    waf: PMap<Arc<WafZoneState>>,
}

impl TenantState {
    /// The ESC setting of a zone; `None` when ESC is plainly applied (nothing written).
    pub fn zone_esc(&self, zone_id: &str) -> Option<&EscSetting> {
        self.zone_esc.get(zone_id)
    }

    /// The ESC setting of an account; `None` when ESC is plainly applied (nothing written).
    pub fn account_esc(&self, account_id: &str) -> Option<&EscSetting> {
        self.account_esc.get(account_id)
    }

    /// The WAF state of a zone, if any was written.
    pub fn waf_zone(&self, zone_id: &str) -> Option<&Arc<WafZoneState>> {
        self.waf.get(zone_id)
    }

    /// A copy with the zone's ESC setting replaced (removed when it is the default).
    pub fn with_zone_esc(&self, zone_id: &str, setting: EscSetting) -> Self {
        let mut next = self.clone();
        next.zone_esc = put_or_remove(&self.zone_esc, zone_id, setting);
        next
    }

    /// A copy with the account's ESC setting replaced (removed when it is the default).
    pub fn with_account_esc(&self, account_id: &str, setting: EscSetting) -> Self {
        let mut next = self.clone();
        next.account_esc = put_or_remove(&self.account_esc, account_id, setting);
        next
    }

    /// A copy with the zone's WAF state replaced (removed when it is the default).
    pub fn with_waf_zone(&self, zone_id: &str, state: WafZoneState) -> Self {
        let mut next = self.clone();
        next.waf = if state == WafZoneState::default() {
            self.waf.remove(zone_id)
        } else {
            self.waf.insert(zone_id, Arc::new(state))
        };
        next
    }

    /// Every zone id that has some state (ESC or WAF), each once.
    pub fn zone_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .zone_esc
            .iter()
            .map(|(k, _)| k)
            .chain(self.waf.iter().map(|(k, _)| k))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Every account id that has some state.
    pub fn account_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.account_esc.iter().map(|(k, _)| k).collect();
        ids.sort_unstable();
        ids
    }

    /// The persisted form.
    pub fn to_document(&self) -> TenantDocument {
        let mut zones: BTreeMap<String, ZoneDocument> = BTreeMap::new();
        for (id, esc) in self.zone_esc.iter() {
            zones.entry(id.to_owned()).or_default().esc = esc.clone();
        }
        for (id, waf) in self.waf.iter() {
            zones.entry(id.to_owned()).or_default().waf = (**waf).clone();
        }
        let accounts = self
            .account_esc
            .iter()
            .map(|(id, esc)| (id.to_owned(), AccountDocument { esc: esc.clone() }))
            .collect();
        TenantDocument {
            format: TenantDocument::FORMAT,
            zones,
            accounts,
            journal_from: 0,
        }
    }

    /// Builds the state from its persisted form.
    pub fn from_document(doc: TenantDocument) -> Self {
        let mut state = TenantState::default();
        for (id, zone) in doc.zones {
            state = state
                .with_zone_esc(&id, zone.esc)
                .with_waf_zone(&id, zone.waf);
        }
        for (id, account) in doc.accounts {
            state = state.with_account_esc(&id, account.esc);
        }
        state
    }

    /// Ids with state that the config no longer names (kept, not dropped; `--validate` reports
    /// them): `zones[<id>]` and `accounts[<id>]` strings.
    pub fn orphans(&self, config: &crate::config::Config) -> Vec<String> {
        let zones = self
            .zone_ids()
            .into_iter()
            .filter(|id| config.zone_by_id(id).is_none())
            .map(|id| format!("state has zone {id}, which the config does not define (kept)"));
        let accounts = self
            .account_ids()
            .into_iter()
            .filter(|id| config.account_by_id(id).is_none())
            .map(|id| format!("state has account {id}, which the config does not define (kept)"));
        zones.chain(accounts).collect()
    }
}

fn put_or_remove(map: &PMap<EscSetting>, id: &str, setting: EscSetting) -> PMap<EscSetting> {
    if setting.is_default() {
        map.remove(id)
    } else {
        map.insert(id, setting)
    }
}

/// The state file's JSON document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantDocument {
    /// Document format version, [`TenantDocument::FORMAT`].
    pub format: u32,
    #[serde(default)]
    pub zones: BTreeMap<String, ZoneDocument>,
    #[serde(default)]
    pub accounts: BTreeMap<String, AccountDocument>,
    /// The first journal segment to replay on top of this document (the file store's
    /// compaction writes it; 0, the default for files written before the journal, means
    /// every segment present).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub journal_from: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TenantDocument {
    /// The only format this build reads and writes.
    pub const FORMAT: u32 = 1;
}

/// One zone's entry in the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneDocument {
    #[serde(default, skip_serializing_if = "EscSetting::is_default")]
    pub esc: EscSetting,
    #[serde(default, skip_serializing_if = "is_default_waf")]
    pub waf: WafZoneState,
}

fn is_default_waf(state: &WafZoneState) -> bool {
    *state == WafZoneState::default()
}

/// One account's entry in the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountDocument {
    #[serde(default, skip_serializing_if = "EscSetting::is_default")]
    pub esc: EscSetting,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_round_trip_keeps_every_setting() {
        let state = TenantState::default()
            .with_zone_esc(
                "z1",
                EscSetting {
                    always: true,
                    with_secret: None,
                },
            )
            .with_zone_esc(
                "z2",
                EscSetting {
                    always: false,
                    with_secret: Some("s3cr3t".into()),
                },
            )
            .with_account_esc(
                "a1",
                EscSetting {
                    always: true,
                    with_secret: Some("x".into()),
                },
            );
        let json = serde_json::to_string(&state.to_document()).unwrap();
        let back = TenantState::from_document(serde_json::from_str(&json).unwrap());
        assert_eq!(back.to_document(), state.to_document());
        assert!(back.zone_esc("z1").unwrap().always);
        assert_eq!(
            back.zone_esc("z2").unwrap().with_secret.as_deref(),
            Some("s3cr3t")
        );
        assert!(back.account_esc("a1").unwrap().always);
    }

    #[test]
    fn default_setting_removes_the_entry() {
        let state = TenantState::default()
            .with_zone_esc(
                "z1",
                EscSetting {
                    always: true,
                    with_secret: None,
                },
            )
            .with_zone_esc("z1", EscSetting::default());
        assert!(state.zone_esc("z1").is_none());
        assert!(state.to_document().zones.is_empty());
    }

    #[test]
    fn orphans_name_ids_missing_from_config() {
        let config = crate::config::Config {
            zones: vec![crate::config::ZoneConfig {
                id: "kept".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let on = EscSetting {
            always: true,
            with_secret: None,
        };
        let state = TenantState::default()
            .with_zone_esc("kept", on.clone())
            .with_zone_esc("gone", on.clone())
            .with_account_esc("acct", on);
        let orphans = state.orphans(&config);
        assert_eq!(orphans.len(), 2, "{orphans:?}");
        assert!(orphans[0].contains("zone gone"));
        assert!(orphans[1].contains("account acct"));
    }
}
