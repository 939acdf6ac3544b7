//! Run-time helpers of the functions and operators that need more than one line.

use std::borrow::Cow;

use regex::bytes::Regex;

use super::ir::JsonKey;

/// Substring search (`contains`); the empty needle is contained in everything.
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if haystack.len() < needle.len() {
        return false;
    }
    let last_start = haystack.len() - needle.len();
    let mut start = 0;
    while start <= last_start {
        match haystack[start..=last_start]
            .iter()
            .position(|b| *b == first)
        {
            None => return false,
            Some(offset) => {
                let at = start + offset;
                if &haystack[at + 1..at + needle.len()] == rest {
                    return true;
                }
                start = at + 1;
            }
        }
    }
    false
}

/// `contains` after ASCII lowercasing `haystack`; `needle` is already lowercase.
pub(crate) fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex_run(bytes: &[u8]) -> Option<u32> {
    bytes
        .iter()
        .try_fold(0u32, |acc, b| Some(acc * 16 + u32::from(hex_value(*b)?)))
}

/// One decoding pass: `%HH` → byte, `+` → space, with `unicode` also `%uHHHH` → UTF-8.
/// Malformed escapes are kept as written.
fn decode_once(input: &[u8], unicode: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                if unicode && matches!(input.get(i + 1), Some(b'u' | b'U')) {
                    let code = input
                        .get(i + 2..i + 6)
                        .and_then(hex_run)
                        .and_then(char::from_u32);
                    if let Some(c) = code {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        i += 6;
                        continue;
                    }
                }
                match input.get(i + 1..i + 3).and_then(hex_run) {
                    Some(byte) => {
                        out.push(byte as u8);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// `url_decode`: borrowed when there is nothing to decode; `recursive` decodes until stable.
pub(crate) fn url_decode(value: Cow<'_, [u8]>, recursive: bool, unicode: bool) -> Cow<'_, [u8]> {
    let needs = |v: &[u8]| v.iter().any(|b| *b == b'%' || *b == b'+');
    if !needs(&value) {
        return value;
    }
    let mut current = decode_once(&value, unicode);
    // Each effective pass shrinks the value, so this ends; the cap bounds pathological input.
    let mut passes = 1;
    while recursive && passes < 16 && current.contains(&b'%') {
        let next = decode_once(&current, unicode);
        if next == current {
            break;
        }
        current = next;
        passes += 1;
    }
    Cow::Owned(current)
}

/// `lookup_json_string`: the string at `keys` in the JSON document, or missing.
pub(crate) fn lookup_json_string(document: &[u8], keys: &[JsonKey]) -> Option<Vec<u8>> {
    let root: serde_json::Value = serde_json::from_slice(document).ok()?;
    let mut node = &root;
    for key in keys {
        node = match key {
            JsonKey::Name(name) => node.as_object()?.get(name)?,
            JsonKey::Index(i) => node.as_array()?.get(*i)?,
        };
    }
    node.as_str().map(|s| s.as_bytes().to_vec())
}

/// Replaces the first match of `regex` (expanding `${N}`); the source unchanged when none.
pub(crate) fn replace_first<'r>(
    source: Cow<'r, [u8]>,
    regex: &Regex,
    replacement: &[u8],
) -> Cow<'r, [u8]> {
    match source {
        Cow::Borrowed(bytes) => regex.replacen(bytes, 1, replacement),
        Cow::Owned(bytes) => match regex.replacen(&bytes, 1, replacement) {
            Cow::Borrowed(_) => Cow::Owned(bytes),
            Cow::Owned(replaced) => Cow::Owned(replaced),
        },
    }
}
