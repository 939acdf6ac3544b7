//! Type check and compilation of function calls.

use super::ast::{Expr, Literal, Value};
use super::compile::{invalid_wildcard, merge_each, regex_error, Checked, Compiler, Node};
use super::error::RulesError;
use super::fields::ArraySource;
use super::ir::{BoolNode, BytesNode, IntNode, JsonKey};
use super::wildcard;

/// Names of the supported functions (for the reference and for error hints).
pub const FUNCTIONS: [&str; 13] = [
    "all",
    "any",
    "concat",
    "ends_with",
    "len",
    "lookup_json_string",
    "lower",
    "regex_replace",
    "starts_with",
    "to_string",
    "upper",
    "url_decode",
    "wildcard_replace",
];

fn literal_of(arg: &Expr) -> Option<&Literal> {
    match arg {
        Expr::Value(Value::Literal(literal, _)) => Some(literal),
        _ => None,
    }
}

fn arity(name: &str, args: &[Expr], min: usize, max: usize, pos: usize) -> Result<(), RulesError> {
    if (min..=max).contains(&args.len()) {
        return Ok(());
    }
    let wanted = match (min, max) {
        (1, 1) => "1 argument".to_string(),
        (min, max) if min == max => format!("{min} arguments"),
        (min, usize::MAX) => format!("at least {min} argument{}", if min == 1 { "" } else { "s" }),
        (min, max) => format!("{min} to {max} arguments"),
    };
    Err(RulesError::new(
        format!("{name}() takes {wanted}, got {}", args.len()),
        pos,
    ))
}

fn wrong_type(name: &str, n: usize, wanted: &str, found: &Node, pos: usize) -> RulesError {
    RulesError::new(
        format!(
            "{name}() expects {wanted} as argument {n}, found {}",
            found.type_name()
        ),
        pos,
    )
}

fn literal_string<'a>(
    name: &str,
    n: usize,
    arg: &'a Expr,
    what: &str,
) -> Result<&'a [u8], RulesError> {
    match literal_of(arg) {
        Some(Literal::Str(s)) => Ok(s),
        _ => Err(RulesError::new(
            format!("{name}() expects a literal string {what} as argument {n}"),
            arg.span(),
        )),
    }
}

/// Checks that `${N}` references in `replacement` name existing capture groups.
fn check_replacement(replacement: &[u8], groups: usize, pos: usize) -> Result<(), RulesError> {
    let mut rest = replacement;
    while let Some(start) = rest.windows(2).position(|w| w == b"${") {
        let after = &rest[start + 2..];
        let Some(end) = after.iter().position(|b| *b == b'}') else {
            break;
        };
        let reference = &after[..end];
        if let Some(n) = std::str::from_utf8(reference)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            if n > groups {
                return Err(RulesError::new(
                    format!("replacement refers to group ${{{n}}} but the pattern has {groups}"),
                    pos,
                ));
            }
        }
        rest = &after[end..];
    }
    Ok(())
}

impl Compiler<'_> {
    /// A string argument (with the array it ranges over, if any).
    fn string_arg(
        &mut self,
        name: &str,
        n: usize,
        arg: &Expr,
        each: &mut Option<ArraySource>,
    ) -> Result<BytesNode, RulesError> {
        let checked = self.expr(arg)?;
        *each = merge_each(each.take(), checked.each, checked.pos)?;
        match checked.node {
            Node::Bytes(node) => Ok(node),
            other => Err(wrong_type(name, n, "a string", &other, checked.pos)),
        }
    }

    pub(crate) fn call(
        &mut self,
        name: &str,
        args: &[Expr],
        pos: usize,
    ) -> Result<Checked, RulesError> {
        let mut each = None;
        let node = match name {
            "lower" | "upper" => {
                arity(name, args, 1, 1, pos)?;
                let inner = Box::new(self.string_arg(name, 1, &args[0], &mut each)?);
                Node::Bytes(if name == "lower" {
                    BytesNode::Lower(inner)
                } else {
                    BytesNode::Upper(inner)
                })
            }
            "len" => {
                arity(name, args, 1, 1, pos)?;
                let checked = self.expr(&args[0])?;
                each = checked.each;
                Node::Int(match checked.node {
                    Node::Bytes(node) => IntNode::Len(Box::new(node)),
                    Node::Array(source) => IntNode::ArrayLen(source),
                    other => {
                        return Err(wrong_type(
                            name,
                            1,
                            "a string or an array",
                            &other,
                            checked.pos,
                        ))
                    }
                })
            }
            "starts_with" | "ends_with" => {
                arity(name, args, 2, 2, pos)?;
                let value = self.string_arg(name, 1, &args[0], &mut each)?;
                let affix = self.string_arg(name, 2, &args[1], &mut each)?;
                Node::Bool(BoolNode::affix(value, affix, name == "starts_with"))
            }
            "any" | "all" => {
                arity(name, args, 1, 1, pos)?;
                let checked = self.expr(&args[0])?;
                let (predicate, Some(source)) = (checked.node, checked.each) else {
                    return Err(RulesError::new(
                        format!(
                            "{name}() expects an array of booleans, such as {name}(http.request.headers[\"accept\"][*] contains \"json\")"
                        ),
                        checked.pos,
                    ));
                };
                let Node::Bool(predicate) = predicate else {
                    return Err(wrong_type(
                        name,
                        1,
                        "an array of booleans",
                        &predicate,
                        checked.pos,
                    ));
                };
                Node::Bool(if name == "any" {
                    BoolNode::Any(source, Box::new(predicate))
                } else {
                    BoolNode::All(source, Box::new(predicate))
                })
            }
            "concat" => {
                arity(name, args, 1, usize::MAX, pos)?;
                let mut parts = Vec::with_capacity(args.len());
                for (i, arg) in args.iter().enumerate() {
                    parts.push(self.string_arg(name, i + 1, arg, &mut each)?);
                }
                Node::Bytes(BytesNode::Concat(parts.into_boxed_slice()))
            }
            "url_decode" => {
                arity(name, args, 1, 2, pos)?;
                let source = Box::new(self.string_arg(name, 1, &args[0], &mut each)?);
                let options = match args.get(1) {
                    Some(arg) => literal_string(name, 2, arg, "of options (r, u)")?,
                    None => b"",
                };
                if let Some(bad) = options.iter().find(|c| !matches!(c, b'r' | b'u')) {
                    return Err(RulesError::new(
                        format!(
                            "url_decode() option '{}' is unknown (allowed: r, u)",
                            char::from(*bad)
                        ),
                        args[1].span(),
                    ));
                }
                Node::Bytes(BytesNode::UrlDecode {
                    source,
                    recursive: options.contains(&b'r'),
                    unicode: options.contains(&b'u'),
                })
            }
            "to_string" => {
                arity(name, args, 1, 1, pos)?;
                let checked = self.expr(&args[0])?;
                each = checked.each;
                Node::Bytes(match checked.node {
                    Node::Int(node) => BytesNode::IntToString(node),
                    Node::Bool(node) => BytesNode::BoolToString(Box::new(node)),
                    Node::Ip(node) => BytesNode::IpToString(node),
                    other => {
                        return Err(wrong_type(
                            name,
                            1,
                            "an integer, a boolean or an IP address",
                            &other,
                            checked.pos,
                        ))
                    }
                })
            }
            "lookup_json_string" => {
                arity(name, args, 2, usize::MAX, pos)?;
                let source = Box::new(self.string_arg(name, 1, &args[0], &mut each)?);
                let mut keys = Vec::with_capacity(args.len() - 1);
                for (i, arg) in args.iter().enumerate().skip(1) {
                    keys.push(match literal_of(arg) {
                        Some(Literal::Str(key)) => JsonKey::Name(String::from_utf8_lossy(key).into_owned()),
                        Some(Literal::Int(index)) if *index >= 0 => {
                            JsonKey::Index(usize::try_from(*index).unwrap_or(usize::MAX))
                        }
                        _ => {
                            return Err(RulesError::new(
                                format!("{name}() expects a literal string key or non-negative integer index as argument {}", i + 1),
                                arg.span(),
                            ))
                        }
                    });
                }
                Node::Bytes(BytesNode::LookupJson(source, keys.into_boxed_slice()))
            }
            "regex_replace" => {
                arity(name, args, 3, 3, pos)?;
                let source = Box::new(self.string_arg(name, 1, &args[0], &mut each)?);
                let pattern = literal_string(name, 2, &args[1], "regex")?;
                let regex = self.regex(pattern, args[1].span())?;
                let replacement = literal_string(name, 3, &args[2], "replacement")?;
                check_replacement(replacement, regex.captures_len() - 1, args[2].span())?;
                Node::Bytes(BytesNode::RegexReplace(source, regex, replacement.into()))
            }
            "wildcard_replace" => {
                arity(name, args, 3, 4, pos)?;
                let source = Box::new(self.string_arg(name, 1, &args[0], &mut each)?);
                let pattern = literal_string(name, 2, &args[1], "wildcard pattern")?;
                let replacement = literal_string(name, 3, &args[2], "replacement")?;
                let flags = match args.get(3) {
                    Some(arg) => literal_string(name, 4, arg, "of flags (s)")?,
                    None => b"",
                };
                if flags.iter().any(|c| *c != b's') {
                    return Err(RulesError::new(
                        "wildcard_replace() flags may only contain 's' (case-sensitive)",
                        args[3].span(),
                    ));
                }
                let pattern_pos = args[1].span();
                let regex =
                    wildcard::to_regex(pattern, !flags.is_empty(), self.limits.max_regex_size)
                        .map_err(|_| invalid_wildcard(pattern_pos))?
                        .map_err(|e| regex_error(&e, pattern_pos, self.limits.max_regex_size))?;
                check_replacement(replacement, wildcard::star_count(pattern), args[2].span())?;
                Node::Bytes(BytesNode::WildcardReplace(
                    source,
                    regex,
                    replacement.into(),
                ))
            }
            _ => return Err(RulesError::new(format!("unknown function '{name}'"), pos)),
        };
        Ok(Checked { node, each, pos })
    }
}
