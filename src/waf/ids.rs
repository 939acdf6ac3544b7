//! Identifiers for objects created through the WAF API.

use sha2::{Digest, Sha256};

/// A 32-hex id, unique per zone and kind: derived from the zone id, the kind and a per-zone serial
/// that only grows, so ids are never reused even after deletes and stay stable across restarts.
pub fn object_id(zone_id: &str, kind: &str, serial: u64) -> String {
    let digest = Sha256::digest(format!("{zone_id}/{kind}/{serial}").as_bytes());
    hex::encode(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_and_distinct() {
        let a = object_id("z", "override", 1);
        let b = object_id("z", "override", 2);
        let c = object_id("y", "override", 1);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
