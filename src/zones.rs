//! Host → zone, computed at config load: the exact name first, then each parent domain, so the
//! longest configured name wins (`a.b.example.com` → `b.example.com` before `example.com`).
//! Case-insensitive; a port is ignored.

use std::collections::HashMap;

use crate::hashing::FastHash;

/// Longest host name looked up; longer names (not valid DNS names) match no zone.
const MAX_HOST_LEN: usize = 253;

/// Zone names (lowercase) → index into [`crate::config::Config::zones`].
#[derive(Debug, Clone, Default)]
pub struct ZoneIndex {
    by_name: HashMap<Box<str>, u32, FastHash>,
}

impl ZoneIndex {
    /// Indexes `names` (already validated lowercase, unique) by position.
    pub fn build<'a>(names: impl IntoIterator<Item = &'a str>) -> ZoneIndex {
        let by_name = names
            .into_iter()
            .enumerate()
            .map(|(index, name)| (Box::from(name), index as u32))
            .collect();
        ZoneIndex { by_name }
    }

    /// Number of zones indexed.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// No zone indexed.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The zone serving `host` (as in a Host header: any case, optional `:port`, optional
    /// trailing dot), or `None`.
    pub fn lookup(&self, host: &str) -> Option<u32> {
        let name = strip_port(host);
        let name = name.strip_suffix('.').unwrap_or(name);
        if name.is_empty() || name.len() > MAX_HOST_LEN {
            return None;
        }
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            // Lowercase on the stack: no allocation per request.
            let mut buffer = [0u8; MAX_HOST_LEN];
            let lower = &mut buffer[..name.len()];
            lower.copy_from_slice(name.as_bytes());
            lower.make_ascii_lowercase();
            self.lookup_lowercase(std::str::from_utf8(lower).ok()?)
        } else {
            self.lookup_lowercase(name)
        }
    }

    /// The exact name, then each parent domain.
    fn lookup_lowercase(&self, mut candidate: &str) -> Option<u32> {
        loop {
            if let Some(index) = self.by_name.get(candidate) {
                return Some(*index);
            }
            match candidate.find('.') {
                Some(dot) => candidate = &candidate[dot + 1..],
                None => return None,
            }
        }
    }
}

/// `host` without its `:port` (IPv6 literals keep their brackets).
pub fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rfind(':') {
        Some(colon) => &host[..colon],
        None => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> ZoneIndex {
        ZoneIndex::build(["example.com", "b.example.com", "other.org"])
    }

    #[test]
    fn exact_then_parents_longest_wins() {
        let index = index();
        assert_eq!(index.lookup("example.com"), Some(0));
        assert_eq!(index.lookup("www.example.com"), Some(0));
        assert_eq!(index.lookup("b.example.com"), Some(1));
        assert_eq!(index.lookup("a.b.example.com"), Some(1));
        assert_eq!(index.lookup("other.org"), Some(2));
    }

    #[test]
    fn case_port_and_trailing_dot_are_ignored() {
        let index = index();
        assert_eq!(index.lookup("WWW.Example.COM:8080"), Some(0));
        assert_eq!(index.lookup("example.com."), Some(0));
    }

    #[test]
    fn unknown_and_hostile_hosts_match_nothing() {
        let index = index();
        assert_eq!(index.lookup("example.org"), None);
        assert_eq!(index.lookup("notexample.com"), None);
        assert_eq!(index.lookup(""), None);
        assert_eq!(index.lookup(":80"), None);
        assert_eq!(index.lookup("."), None);
        assert_eq!(index.lookup(&"a.".repeat(300)), None);
        assert_eq!(index.lookup("[::1]:80"), None);
        assert_eq!(index.lookup("é.example.com"), Some(0));
    }
}
