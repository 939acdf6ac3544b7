//! Header edits (`set`, `add`, `remove`) on pingora's request and response headers.

use bytes::Bytes;
use http::header::InvalidHeaderName;
use http::{HeaderName, HeaderValue};
use pingora::http::{RequestHeader, ResponseHeader};

/// `{ set, add, remove }` with names and values parsed at load. Applied as remove, then set,
/// then add, so an entry can replace a header and add a second value in one go.
#[derive(Debug, Clone, Default)]
pub struct HeaderEdits {
    pub set: Vec<(WireName, HeaderValue)>,
    pub add: Vec<(WireName, HeaderValue)>,
    pub remove: Vec<HeaderName>,
}

/// A header name to write, spelled as given (as in the config, or the usual title case for the
/// names escgate writes itself): the origin or client sees that spelling. Held as shared bytes
/// because pingora uses a `Bytes` name as it is, but copies the text of a `HeaderName` into a new
/// buffer on every insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireName(Bytes);

impl WireName {
    /// A valid header name as given, or why it is not one.
    pub fn parse(name: &str) -> Result<WireName, InvalidHeaderName> {
        HeaderName::from_bytes(name.as_bytes())?;
        Ok(WireName(Bytes::copy_from_slice(name.as_bytes())))
    }

    /// The name as a `'static` text, for names known at compile time (not checked: use a valid
    /// header name).
    pub const fn from_static(name: &'static str) -> WireName {
        WireName(Bytes::from_static(name.as_bytes()))
    }

    /// The name to pass to pingora's `insert_header`/`append_header`: a shared handle, no copy.
    pub fn to_bytes(&self) -> Bytes {
        self.0.clone()
    }
}

/// `Cookie`, as escgate writes it upstream.
pub const COOKIE: WireName = WireName::from_static("Cookie");
/// `Via`, as escgate writes it upstream.
pub const VIA: WireName = WireName::from_static("Via");

/// The header operations pingora's request and response headers share.
pub trait EditableHeaders {
    fn insert(&mut self, name: &WireName, value: &HeaderValue);
    fn append(&mut self, name: &WireName, value: &HeaderValue);
    fn remove(&mut self, name: &HeaderName);
}

// Inserting a parsed name and value cannot fail: pingora only errors on unparsable input.
macro_rules! editable_pingora_headers {
    ($($header:ty),+) => {$(
        impl EditableHeaders for $header {
            fn insert(&mut self, name: &WireName, value: &HeaderValue) {
                let _ = self.insert_header(name.to_bytes(), value.clone());
            }
            fn append(&mut self, name: &WireName, value: &HeaderValue) {
                let _ = self.append_header(name.to_bytes(), value.clone());
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
