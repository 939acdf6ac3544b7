//! Tokenizer: turns expression text into tokens carrying their byte offsets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::error::RulesError;

/// One lexical token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    /// A field, function or keyword name (`http.host`, `lower`, `and`, `eq`, `true`).
    Word(String),
    /// A string literal (quoted or raw), already unescaped.
    Str(Vec<u8>),
    Int(i64),
    /// An IP address, optionally with a CIDR prefix length.
    Ip(IpAddr, Option<u8>),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Star,
    DotDot,
    /// A symbolic operator: `==`, `!=`, `<`, `<=`, `>`, `>=`, `~`, `!`, `&&`, `^^`, `||`.
    Symbol(&'static str),
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spanned {
    pub token: Token,
    pub pos: usize,
}

const SYMBOLS: [&str; 11] = ["==", "!=", "<=", ">=", "&&", "^^", "||", "<", ">", "~", "!"];

/// Splits `src` into tokens; the error names the offending character's offset.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Spanned>, RulesError> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let single = match c {
            b'(' => Some(Token::LParen),
            b')' => Some(Token::RParen),
            b'[' => Some(Token::LBracket),
            b']' => Some(Token::RBracket),
            b'{' => Some(Token::LBrace),
            b'}' => Some(Token::RBrace),
            b',' => Some(Token::Comma),
            b'*' => Some(Token::Star),
            _ => None,
        };
        if let Some(token) = single {
            tokens.push(Spanned { token, pos: start });
            i += 1;
            continue;
        }
        if c == b'"' {
            let (s, end) = lex_quoted(bytes, i)?;
            tokens.push(Spanned {
                token: Token::Str(s),
                pos: start,
            });
            i = end;
            continue;
        }
        if c == b'r' && matches!(bytes.get(i + 1), Some(b'"') | Some(b'#')) {
            let (s, end) = lex_raw(bytes, i)?;
            tokens.push(Spanned {
                token: Token::Str(s),
                pos: start,
            });
            i = end;
            continue;
        }
        if c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i = lex_word(src, i + 1, start, true, &mut tokens)?;
            continue;
        }
        if is_word_byte(c) {
            i = lex_word(src, i, start, false, &mut tokens)?;
            continue;
        }
        if let Some(sym) = SYMBOLS
            .iter()
            .find(|s| bytes[i..].starts_with(s.as_bytes()))
        {
            tokens.push(Spanned {
                token: Token::Symbol(sym),
                pos: start,
            });
            i += sym.len();
            continue;
        }
        return Err(RulesError::new(
            format!("unexpected character '{}'", char_at(src, i)),
            start,
        ));
    }
    Ok(tokens)
}

fn char_at(src: &str, i: usize) -> char {
    src.get(i..)
        .and_then(|s| s.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b':'
}

/// Lexes a run of word bytes starting at `i`: a name, an integer, a range `a..b`, or an IP/CIDR.
fn lex_word(
    src: &str,
    i: usize,
    start: usize,
    negative: bool,
    tokens: &mut Vec<Spanned>,
) -> Result<usize, RulesError> {
    let bytes = src.as_bytes();
    let mut end = i;
    while end < bytes.len() && is_word_byte(bytes[end]) {
        end += 1;
    }
    let word = &src[i..end];
    let first = bytes[i];
    if let Some(dots) = word.find("..") {
        if !first.is_ascii_digit() {
            return Err(RulesError::new(format!("invalid name '{word}'"), start));
        }
        let low = parse_int(&word[..dots], negative, start)?;
        tokens.push(Spanned {
            token: Token::Int(low),
            pos: start,
        });
        tokens.push(Spanned {
            token: Token::DotDot,
            pos: i + dots,
        });
        let high_pos = i + dots + 2;
        tokens.push(Spanned {
            token: Token::Int(parse_int(&word[dots + 2..], false, high_pos)?),
            pos: high_pos,
        });
        return Ok(end);
    }
    let looks_numeric = first.is_ascii_digit() || word.contains(':');
    if !looks_numeric {
        tokens.push(Spanned {
            token: Token::Word(word.to_string()),
            pos: start,
        });
        return Ok(end);
    }
    if negative || word.bytes().all(|b| b.is_ascii_digit()) {
        tokens.push(Spanned {
            token: Token::Int(parse_int(word, negative, start)?),
            pos: start,
        });
        return Ok(end);
    }
    let addr: IpAddr = if word.contains(':') {
        word.parse::<Ipv6Addr>().map(IpAddr::V6)
    } else {
        word.parse::<Ipv4Addr>().map(IpAddr::V4)
    }
    .map_err(|_| RulesError::new(format!("invalid number or IP address '{word}'"), start))?;
    let mut prefix = None;
    let mut next = end;
    if bytes.get(end) == Some(&b'/') {
        let digits_start = end + 1;
        let mut digits_end = digits_start;
        while digits_end < bytes.len() && bytes[digits_end].is_ascii_digit() {
            digits_end += 1;
        }
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = src[digits_start..digits_end]
            .parse::<u8>()
            .ok()
            .filter(|len| *len <= max)
            .ok_or_else(|| {
                RulesError::new(format!("invalid CIDR prefix length (0 to {max})"), end)
            })?;
        prefix = Some(len);
        next = digits_end;
    }
    tokens.push(Spanned {
        token: Token::Ip(addr, prefix),
        pos: start,
    });
    Ok(next)
}

fn parse_int(digits: &str, negative: bool, pos: usize) -> Result<i64, RulesError> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(RulesError::new(format!("invalid integer '{digits}'"), pos));
    }
    let text = if negative {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    text.parse::<i64>()
        .map_err(|_| RulesError::new(format!("integer '{text}' out of range"), pos))
}

/// Lexes `"…"` with escapes `\"`, `\\` and `\xHH`; returns the bytes and the end offset.
fn lex_quoted(bytes: &[u8], start: usize) -> Result<(Vec<u8>, usize), RulesError> {
    let mut out = Vec::new();
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Ok((out, i + 1)),
            b'\\' => {
                match bytes.get(i + 1) {
                    Some(b'"') => out.push(b'"'),
                    Some(b'\\') => out.push(b'\\'),
                    Some(b'x') => {
                        let hex = bytes.get(i + 2..i + 4).and_then(|h| {
                            std::str::from_utf8(h)
                                .ok()
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                        });
                        let byte = hex.ok_or_else(|| {
                            RulesError::new("expected two hex digits after '\\x'", i)
                        })?;
                        out.push(byte);
                        i += 4;
                        continue;
                    }
                    _ => {
                        return Err(RulesError::new(
                            "invalid escape in string (allowed: \\\" \\\\ \\xHH)",
                            i,
                        ))
                    }
                }
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Err(RulesError::new("unterminated string", start))
}

/// Lexes `r"…"` / `r#"…"#` (any number of `#`): no escapes inside.
fn lex_raw(bytes: &[u8], start: usize) -> Result<(Vec<u8>, usize), RulesError> {
    let mut i = start + 1;
    let mut hashes = 0;
    while bytes.get(i) == Some(&b'#') {
        hashes += 1;
        i += 1;
    }
    if bytes.get(i) != Some(&b'"') {
        return Err(RulesError::new("expected '\"' after r and '#'", i));
    }
    let body = i + 1;
    let mut j = body;
    while j < bytes.len() {
        if bytes[j] == b'"'
            && bytes.len() >= j + 1 + hashes
            && bytes[j + 1..j + 1 + hashes].iter().all(|b| *b == b'#')
        {
            return Ok((bytes[body..j].to_vec(), j + 1 + hashes));
        }
        j += 1;
    }
    Err(RulesError::new("unterminated raw string", start))
}
