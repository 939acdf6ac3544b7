//! The single serialized writer: typed change → next tenant state → persisted → swapped in.

use std::sync::{Arc, Mutex};

use super::tenant::{EscSetting, TenantState};
use super::{SharedSnapshot, Snapshot};
use crate::store::{Store, StoreError};
use crate::waf::WafZoneState;

/// What to do with a scope's secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretEdit {
    /// Leave the secret as it is.
    Keep,
    /// Set or replace the secret (already validated by the caller).
    Set(String),
    /// Remove the secret.
    Clear,
}

/// An edit of a disable-ESC setting, applied to the current setting under the writer's lock so
/// two concurrent POSTs (one `always`, one `with_secret`) both take effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscEdit {
    /// `Some` sets the `always` flag; `None` keeps it.
    pub always: Option<bool>,
    pub secret: SecretEdit,
}

impl EscEdit {
    /// `DELETE .../disable_esc`: clear the flag and the secret.
    pub fn reenable() -> Self {
        EscEdit {
            always: Some(false),
            secret: SecretEdit::Clear,
        }
    }

    /// The setting after this edit.
    pub fn apply(&self, current: Option<&EscSetting>) -> EscSetting {
        let current = current.cloned().unwrap_or_default();
        EscSetting {
            always: self.always.unwrap_or(current.always),
            with_secret: match &self.secret {
                SecretEdit::Keep => current.with_secret,
                SecretEdit::Set(secret) => Some(secret.clone()),
                SecretEdit::Clear => None,
            },
        }
    }
}

/// One typed change of the tenant state.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Edit a zone's disable-ESC setting.
    SetZoneEsc { zone_id: String, edit: EscEdit },
    /// Edit an account's disable-ESC setting.
    SetAccountEsc { account_id: String, edit: EscEdit },
    /// Replace a zone's WAF state (the default state removes the entry).
    SetWafZone {
        zone_id: String,
        state: Box<WafZoneState>,
    },
}

impl Change {
    /// The state after this change.
    pub fn apply(&self, current: &TenantState) -> TenantState {
        match self {
            Change::SetZoneEsc { zone_id, edit } => {
                current.with_zone_esc(zone_id, edit.apply(current.zone_esc(zone_id)))
            }
            Change::SetAccountEsc { account_id, edit } => {
                current.with_account_esc(account_id, edit.apply(current.account_esc(account_id)))
            }
            Change::SetWafZone { zone_id, state } => {
                current.with_waf_zone(zone_id, (**state).clone())
            }
        }
    }
}

/// Why a write did not happen (the published state is then unchanged).
#[derive(Debug, thiserror::Error)]
pub enum WriteError<E: std::error::Error + 'static = std::convert::Infallible> {
    /// Persisting failed: nothing was published.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The caller's change builder refused (see [`Writer::apply_with`]).
    #[error(transparent)]
    Rejected(E),
}

/// The only code path that replaces the published [`Snapshot`]. Writes are serialized by a mutex
/// that readers never touch; each write persists the next state before swapping it in, so an
/// acknowledged write survives a crash and is visible to the very next request.
#[derive(Debug)]
pub struct Writer {
    shared: SharedSnapshot,
    store: Arc<dyn Store>,
    serial: Mutex<()>,
}

impl Writer {
    /// A writer publishing into `shared` and persisting through `store`.
    pub fn new(shared: SharedSnapshot, store: Arc<dyn Store>) -> Self {
        Writer {
            shared,
            store,
            serial: Mutex::new(()),
        }
    }

    /// The snapshot handle this writer publishes into.
    pub fn shared(&self) -> &SharedSnapshot {
        &self.shared
    }

    /// Applies `change`: persists the next state, then publishes it. Blocking (fsync): call it
    /// from `spawn_blocking` in async code. Returns the published tenant state.
    pub fn apply(&self, change: Change) -> Result<Arc<TenantState>, WriteError> {
        self.apply_with(|_| Ok::<_, std::convert::Infallible>(change))
    }

    /// Like [`Writer::apply`], with the change built from the current snapshot under the write
    /// lock (read-modify-write without lost updates). `build` returning `Err` changes nothing.
    pub fn apply_with<E, F>(&self, build: F) -> Result<Arc<TenantState>, WriteError<E>>
    where
        E: std::error::Error + 'static,
        F: FnOnce(&Snapshot) -> Result<Change, E>,
    {
        // A poisoned lock only means another writer panicked; the published state is still whole.
        let _serial = self.serial.lock().unwrap_or_else(|p| p.into_inner());
        let current = self.shared.load_full();
        let change = build(&current).map_err(WriteError::Rejected)?;
        let next = Arc::new(change.apply(&current.tenant));
        self.store.commit(&change, &next)?;
        self.publish_tenant(next.clone());
        Ok(next)
    }

    /// Publishes a new operator config with the current tenant state (reload).
    pub fn replace_config(&self, config: Arc<crate::config::Config>) {
        let _serial = self.serial.lock().unwrap_or_else(|p| p.into_inner());
        self.shared.rcu(|current| Snapshot {
            config: config.clone(),
            tenant: current.tenant.clone(),
        });
    }

    fn publish_tenant(&self, tenant: Arc<TenantState>) {
        // rcu keeps whatever config a concurrent reload published.
        self.shared.rcu(|current| Snapshot {
            config: current.config.clone(),
            tenant: tenant.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::FileStore;
    use arc_swap::ArcSwap;

    fn writer(name: &str) -> (Writer, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("escgate-writer-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let shared: SharedSnapshot = Arc::new(ArcSwap::from_pointee(Snapshot::default()));
        let store = Arc::new(FileStore::new(dir.join("state.json")));
        (Writer::new(shared, store), dir)
    }

    #[test]
    fn edits_compose_and_are_published_and_persisted() {
        let (writer, dir) = writer("compose");
        writer
            .apply(Change::SetZoneEsc {
                zone_id: "z".into(),
                edit: EscEdit {
                    always: Some(true),
                    secret: SecretEdit::Keep,
                },
            })
            .unwrap();
        writer
            .apply(Change::SetZoneEsc {
                zone_id: "z".into(),
                edit: EscEdit {
                    always: None,
                    secret: SecretEdit::Set("s".into()),
                },
            })
            .unwrap();
        let published = writer.shared().load();
        let setting = published.tenant.zone_esc("z").unwrap();
        assert!(setting.always);
        assert_eq!(setting.with_secret.as_deref(), Some("s"));
        let stored = FileStore::new(dir.join("state.json")).load().unwrap();
        assert_eq!(stored.to_document(), published.tenant.to_document());

        writer
            .apply(Change::SetZoneEsc {
                zone_id: "z".into(),
                edit: EscEdit::reenable(),
            })
            .unwrap();
        assert!(writer.shared().load().tenant.zone_esc("z").is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn failed_persist_publishes_nothing() {
        let (writer, dir) = writer("fail");
        std::fs::remove_dir_all(&dir).unwrap();
        let result = writer.apply(Change::SetAccountEsc {
            account_id: "a".into(),
            edit: EscEdit {
                always: Some(true),
                secret: SecretEdit::Keep,
            },
        });
        assert!(matches!(result, Err(WriteError::Store(_))));
        assert!(writer.shared().load().tenant.account_esc("a").is_none());
    }

    #[test]
    fn reload_keeps_tenant_state() {
        let (writer, dir) = writer("reload");
        writer
            .apply(Change::SetAccountEsc {
                account_id: "a".into(),
                edit: EscEdit {
                    always: Some(true),
                    secret: SecretEdit::Keep,
                },
            })
            .unwrap();
        let config = crate::config::Config {
            accounts: vec![crate::config::AccountConfig {
                id: "a".into(),
                name: "n".into(),
            }],
            ..Default::default()
        };
        writer.replace_config(Arc::new(config));
        let snap = writer.shared().load();
        assert_eq!(snap.config.accounts.len(), 1);
        assert!(snap.tenant.account_esc("a").unwrap().always);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
