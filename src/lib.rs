//! escgate: an edge reverse proxy on pingora.
//!
//! Data flow of a proxied request, one module per step:
//! request → [`zones`] (Host → zone) → [`esc::decision`] (ESC applied or disabled)
//! → [`esc`] request customizations → [`proxy`] upstream → [`esc`] response customizations.
//!
//! Operator config ([`config`]) and tenant state ([`state`], persisted by [`store`]) are compiled
//! together into one immutable snapshot that the hot path reads without locks.
#![deny(unsafe_code)]

pub mod admin;
pub mod app;
pub mod config;
pub mod demo_origin;
pub mod esc;
pub mod hashing;
pub mod memory;
pub mod proxy;
pub mod rules;
pub mod state;
pub mod store;
pub mod waf;
pub mod zones;
