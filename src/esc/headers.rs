//! Header edits (`set`, `add`, `remove`) on pingora's request and response headers.

use http::{HeaderName, HeaderValue};
use pingora::http::{RequestHeader, ResponseHeader};

/// `{ set, add, remove }` with names and values parsed at load. Applied as remove, then set,
/// then add, so an entry can replace a header and add a second value in one go.
#[derive(Debug, Clone, Default)]
pub struct HeaderEdits {
    pub set: Vec<(HeaderName, HeaderValue)>,
    pub add: Vec<(HeaderName, HeaderValue)>,
    pub remove: Vec<HeaderName>,
}

/// The header operations pingora's request and response headers share.
pub trait EditableHeaders {
    fn insert(&mut self, name: &HeaderName, value: &HeaderValue);
    fn append(&mut self, name: &HeaderName, value: &HeaderValue);
    fn remove(&mut self, name: &HeaderName);
}

// Inserting a parsed name and value cannot fail: pingora only errors on unparsable input.
macro_rules! editable_pingora_headers {
    ($($header:ty),+) => {$(
        impl EditableHeaders for $header {
            fn insert(&mut self, name: &HeaderName, value: &HeaderValue) {
                let _ = self.insert_header(name, value.clone());
            }
            fn append(&mut self, name: &HeaderName, value: &HeaderValue) {
                let _ = self.append_header(name, value.clone());
            }
            fn remove(&mut self, name: &HeaderName) {
                self.remove_header(name);
            }
        }
    )+};
}
editable_pingora_headers!(RequestHeader, ResponseHeader);

impl HeaderEdits {
    /// Applies the edits to `headers`.
    pub fn apply(&self, headers: &mut impl EditableHeaders) {
        for name in &self.remove {
            headers.remove(name);
        }
        for (name, value) in &self.set {
            headers.insert(name, value);
        }
        for (name, value) in &self.add {
            headers.append(name, value);
        }
    }
}
