//! One journal record: the resulting value of the single key a [`Change`] touched.
//!
//! A record holds a value, not an edit, so replaying it twice (or over a snapshot that already
//! contains it) gives the same state: replay is idempotent and the journal needs no sequence
//! numbers.

use serde::{Deserialize, Serialize};

use super::tenant::{EscSetting, TenantState};
use super::writer::Change;
use crate::waf::WafZoneState;

/// The new value of one key of the tenant state; `None` means the key was removed (its
/// setting went back to the default). Serialized as one self-describing JSON object tagged by
/// `set` (`zone_esc`, `account_esc`, `waf_zone`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "set", rename_all = "snake_case", deny_unknown_fields)]
pub enum Record {
    /// A zone's disable-ESC setting.
    ZoneEsc {
        zone_id: String,
        esc: Option<EscSetting>,
    },
    /// An account's disable-ESC setting.
    AccountEsc {
        account_id: String,
        esc: Option<EscSetting>,
    },
    /// A zone's WAF state.
    WafZone {
        zone_id: String,
        waf: Option<Box<WafZoneState>>,
    },
}

impl Record {
    /// `state` with this record's key set to its value (removed when `None`).
    pub fn apply(&self, state: &TenantState) -> TenantState {
        match self {
            Record::ZoneEsc { zone_id, esc } => {
                state.with_zone_esc(zone_id, esc.clone().unwrap_or_default())
            }
            Record::AccountEsc { account_id, esc } => {
                state.with_account_esc(account_id, esc.clone().unwrap_or_default())
            }
            Record::WafZone { zone_id, waf } => {
                state.with_waf_zone(zone_id, waf.as_deref().cloned().unwrap_or_default())
            }
        }
    }
}

impl Change {
    /// The record that persists this change, read from `next` (the state after
    /// [`Change::apply`]), so the journal stores the outcome of a read-modify-write edit.
    pub fn record(&self, next: &TenantState) -> Record {
        match self {
            Change::SetZoneEsc { zone_id, .. } => Record::ZoneEsc {
                zone_id: zone_id.clone(),
                esc: next.zone_esc(zone_id).cloned(),
            },
            Change::SetAccountEsc { account_id, .. } => Record::AccountEsc {
                account_id: account_id.clone(),
                esc: next.account_esc(account_id).cloned(),
            },
            Change::SetWafZone { zone_id, .. } => Record::WafZone {
                zone_id: zone_id.clone(),
                waf: next.waf_zone(zone_id).map(|waf| Box::new((**waf).clone())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{EscEdit, SecretEdit};

    fn set_zone(always: Option<bool>, secret: SecretEdit) -> Change {
        Change::SetZoneEsc {
            zone_id: "z".into(),
            edit: EscEdit { always, secret },
        }
    }

    #[test]
    fn record_holds_the_merged_result_and_replays_idempotently() {
        let first = set_zone(Some(true), SecretEdit::Keep);
        let state = first.apply(&TenantState::default());
        let second = set_zone(None, SecretEdit::Set("s".into()));
        let next = second.apply(&state);
        let record = second.record(&next);
        assert_eq!(
            record,
            Record::ZoneEsc {
                zone_id: "z".into(),
                esc: Some(EscSetting {
                    always: true,
                    with_secret: Some("s".into()),
                }),
            }
        );
        let replayed = record.apply(&TenantState::default());
        assert_eq!(replayed.to_document(), next.to_document());
        assert_eq!(
            record.apply(&replayed).to_document(),
            next.to_document(),
            "applying twice changes nothing"
        );
    }

    #[test]
    fn removal_is_recorded_as_null_and_removes_on_replay() {
        let on = set_zone(Some(true), SecretEdit::Keep).apply(&TenantState::default());
        let off = Change::SetZoneEsc {
            zone_id: "z".into(),
            edit: EscEdit::reenable(),
        };
        let record = off.record(&off.apply(&on));
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(json, r#"{"set":"zone_esc","zone_id":"z","esc":null}"#);
        assert!(record.apply(&on).zone_esc("z").is_none());
    }

    #[test]
    fn every_kind_round_trips_through_json_and_unknown_fields_are_refused() {
        let waf = WafZoneState {
            next_serial: 7,
            ..Default::default()
        };
        let records = [
            Record::AccountEsc {
                account_id: "a".into(),
                esc: Some(EscSetting {
                    always: false,
                    with_secret: Some("line\nbreak".into()),
                }),
            },
            Record::WafZone {
                zone_id: "z".into(),
                waf: Some(Box::new(waf)),
            },
            Record::WafZone {
                zone_id: "z".into(),
                waf: None,
            },
        ];
        for record in records {
            let json = serde_json::to_string(&record).unwrap();
            assert!(!json.contains('\n'), "one record is one line: {json}");
            assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), record);
        }
        for bad in [
            r#"{"set":"zone_esc","zone_id":"z","esc":null,"extra":1}"#,
            r#"{"set":"zone_colour","zone_id":"z"}"#,
            r#"{"zone_id":"z","esc":null}"#,
        ] {
            assert!(serde_json::from_str::<Record>(bad).is_err(), "{bad}");
        }
    }
}
