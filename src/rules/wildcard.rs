//! `wildcard` / `strict wildcard` patterns: `*` matches zero or more bytes; `\*` and `\\` are a
//! literal `*` and `\`. The whole value must match. `wildcard` ignores ASCII case.

use regex::bytes::{Regex, RegexBuilder};

/// A wildcard pattern split at its `*`s.
#[derive(Debug, Clone)]
pub(crate) struct WildcardPattern {
    /// Literal pieces between stars; `segments.len() == stars + 1`. Lowercased when
    /// case-insensitive.
    segments: Box<[Box<[u8]>]>,
    case_sensitive: bool,
}

/// Splits `pattern` at unescaped `*`; `Err` holds the offset of a bad escape.
pub(crate) fn split(pattern: &[u8]) -> Result<Vec<Vec<u8>>, usize> {
    let mut segments = vec![Vec::new()];
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' => match pattern.get(i + 1) {
                Some(&c @ (b'*' | b'\\')) => {
                    push_last(&mut segments, c);
                    i += 2;
                    continue;
                }
                _ => return Err(i),
            },
            b'*' => segments.push(Vec::new()),
            c => push_last(&mut segments, c),
        }
        i += 1;
    }
    Ok(segments)
}

fn push_last(segments: &mut [Vec<u8>], byte: u8) {
    if let Some(last) = segments.last_mut() {
        last.push(byte);
    }
}

impl WildcardPattern {
    /// Compiles `pattern`; `Err` holds the offset of a bad escape.
    pub(crate) fn new(pattern: &[u8], case_sensitive: bool) -> Result<Self, usize> {
        let segments = split(pattern)?
            .into_iter()
            .map(|mut s| {
                if !case_sensitive {
                    s.make_ascii_lowercase();
                }
                s.into_boxed_slice()
            })
            .collect();
        Ok(WildcardPattern {
            segments,
            case_sensitive,
        })
    }

    fn eq(&self, value: &[u8], segment: &[u8]) -> bool {
        if self.case_sensitive {
            value == segment
        } else {
            value.eq_ignore_ascii_case(segment)
        }
    }

    /// Leftmost position of `needle` (already lowercased when case-insensitive) in
    /// `haystack`: a scan for the first byte (either case), then a compare of the rest.
    fn find(&self, haystack: &[u8], needle: &[u8]) -> Option<usize> {
        let Some((&first, rest)) = needle.split_first() else {
            return Some(0);
        };
        let last_start = haystack.len().checked_sub(needle.len())?;
        let other_case = if self.case_sensitive {
            first
        } else {
            first.to_ascii_uppercase()
        };
        let mut from = 0;
        while from <= last_start {
            let offset = haystack[from..=last_start]
                .iter()
                .position(|&b| b == first || b == other_case)?;
            let at = from + offset;
            if self.eq(&haystack[at + 1..at + needle.len()], rest) {
                return Some(at);
            }
            from = at + 1;
        }
        None
    }

    /// Whether the whole `value` matches. Leftmost placement of each middle segment is optimal
    /// for `*`-only patterns, so this is linear in the number of segments (no backtracking).
    pub(crate) fn matches(&self, value: &[u8]) -> bool {
        let (first, rest) = match self.segments.split_first() {
            Some(split) => split,
            None => return value.is_empty(),
        };
        let Some((last, middle)) = rest.split_last() else {
            return value.len() == first.len() && self.eq(value, first);
        };
        if value.len() < first.len() + last.len()
            || !self.eq(&value[..first.len()], first)
            || !self.eq(&value[value.len() - last.len()..], last)
        {
            return false;
        }
        let mut window = &value[first.len()..value.len() - last.len()];
        for segment in middle.iter() {
            match self.find(window, segment) {
                Some(at) => window = &window[at + segment.len()..],
                None => return false,
            }
        }
        true
    }
}

/// Builds the anchored regex used by `wildcard_replace`: each `*` becomes a lazy capture group.
pub(crate) fn to_regex(
    pattern: &[u8],
    case_sensitive: bool,
    size_limit: usize,
) -> Result<Result<Regex, regex::Error>, usize> {
    let segments = split(pattern)?;
    let mut source = String::from(if case_sensitive {
        "(?s-u)^"
    } else {
        "(?is-u)^"
    });
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            source.push_str("(.*?)");
        }
        for &b in segment {
            if b.is_ascii_alphanumeric() {
                source.push(b as char);
            } else {
                source.push_str(&format!("\\x{b:02x}"));
            }
        }
    }
    source.push('$');
    Ok(RegexBuilder::new(&source)
        .size_limit(size_limit)
        .dfa_size_limit(size_limit)
        .build())
}

/// Number of `*` in a pattern already known to be valid.
pub(crate) fn star_count(pattern: &[u8]) -> usize {
    split(pattern).map_or(0, |s| s.len() - 1)
}
