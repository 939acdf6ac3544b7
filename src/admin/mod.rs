//! Admin API under `/client/v4` (Cloudflare v4 compatible).

pub mod envelope;
