//! Evaluation of the compiled form against a borrowed request.
//!
//! Values borrow from the request or the compiled filter (`Cow::Borrowed`) and only transforms
//! that build new bytes allocate. A missing value (`None`) makes any comparison on it false.

use std::borrow::Cow;
use std::net::IpAddr;
use std::ops::ControlFlow;

use super::functions;
use super::ir::{BoolNode, BytesNode, BytesTest, IntNode, IntTest, IpNode, IpTest, Probe};
use super::RequestView;

/// What an evaluation reads: the request and the array element under `any`/`all`.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'s, 'r> {
    pub req: &'s RequestView<'r>,
    pub element: &'r [u8],
}

impl BoolNode {
    /// The hot arms stay in this small function; the rest live in [`Self::eval_other`] so
    /// the common path does not pay for their stack frame.
    pub(crate) fn eval<'r>(&'r self, scope: Scope<'_, 'r>) -> bool {
        match self {
            BoolNode::Const(b) => *b,
            BoolNode::Ssl => scope.req.tls,
            BoolNode::Not(inner) => !inner.eval(scope),
            BoolNode::And(all) => all.iter().all(|node| node.eval(scope)),
            BoolNode::Or(any) => any.iter().any(|node| node.eval(scope)),
            BoolNode::ProbeTest(probe, test) => probe.read(scope).is_some_and(|v| test.eval(v)),
            BoolNode::ProbeStartsWith(probe, lit) => {
                probe.read(scope).is_some_and(|v| v.starts_with(lit))
            }
            BoolNode::ProbeEndsWith(probe, lit) => {
                probe.read(scope).is_some_and(|v| v.ends_with(lit))
            }
            _ => self.eval_other(scope),
        }
    }

    #[inline(never)]
    fn eval_other<'r>(&'r self, scope: Scope<'_, 'r>) -> bool {
        match self {
            BoolNode::Const(_)
            | BoolNode::Ssl
            | BoolNode::Not(_)
            | BoolNode::And(_)
            | BoolNode::Or(_)
            | BoolNode::ProbeTest(..)
            | BoolNode::ProbeStartsWith(..)
            | BoolNode::ProbeEndsWith(..) => self.eval(scope),
            BoolNode::Xor(operands) => operands
                .iter()
                .fold(false, |odd, node| odd ^ node.eval(scope)),
            BoolNode::Bytes(node, test) => node.eval(scope).is_some_and(|v| test.eval(&v)),
            BoolNode::Int(node, test) => node.eval(scope).is_some_and(|v| test.eval(v)),
            BoolNode::Ip(node, test) => node.eval(scope).is_some_and(|v| test.eval(v)),
            BoolNode::StartsWith(value, prefix) => match (value.eval(scope), prefix.eval(scope)) {
                (Some(value), Some(prefix)) => value.starts_with(&prefix),
                _ => false,
            },
            BoolNode::EndsWith(value, suffix) => match (value.eval(scope), suffix.eval(scope)) {
                (Some(value), Some(suffix)) => value.ends_with(&suffix),
                _ => false,
            },
            BoolNode::Any(source, predicate) => {
                let mut found = false;
                source.visit(scope.req, &mut |element| {
                    if predicate.eval(Scope { element, ..scope }) {
                        found = true;
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
                found
            }
            BoolNode::All(source, predicate) => {
                let mut seen = false;
                let mut every = true;
                source.visit(scope.req, &mut |element| {
                    seen = true;
                    if !predicate.eval(Scope { element, ..scope }) {
                        every = false;
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
                seen && every
            }
        }
    }
}

impl BytesNode {
    pub(crate) fn eval<'r>(&'r self, scope: Scope<'_, 'r>) -> Option<Cow<'r, [u8]>> {
        Some(match self {
            BytesNode::Literal(bytes) => Cow::Borrowed(&bytes[..]),
            BytesNode::Field(field) => field.read(scope.req),
            BytesNode::Element => Cow::Borrowed(scope.element),
            BytesNode::Item(source, index) => Cow::Borrowed(source.item(scope.req, *index)?),
            BytesNode::Lower(inner) => map_owned(
                inner.eval(scope)?,
                u8::is_ascii_uppercase,
                <[u8]>::make_ascii_lowercase,
            ),
            BytesNode::Upper(inner) => map_owned(
                inner.eval(scope)?,
                u8::is_ascii_lowercase,
                <[u8]>::make_ascii_uppercase,
            ),
            BytesNode::UrlDecode {
                source,
                recursive,
                unicode,
            } => functions::url_decode(source.eval(scope)?, *recursive, *unicode),
            BytesNode::Concat(parts) => {
                let mut out = Vec::new();
                for part in parts.iter() {
                    out.extend_from_slice(&part.eval(scope)?);
                }
                Cow::Owned(out)
            }
            BytesNode::IntToString(node) => Cow::Owned(node.eval(scope)?.to_string().into_bytes()),
            BytesNode::BoolToString(node) => {
                Cow::Borrowed(if node.eval(scope) { b"true" } else { b"false" })
            }
            BytesNode::IpToString(node) => Cow::Owned(node.eval(scope)?.to_string().into_bytes()),
            BytesNode::LookupJson(source, keys) => {
                Cow::Owned(functions::lookup_json_string(&source.eval(scope)?, keys)?)
            }
            BytesNode::RegexReplace(source, regex, replacement) => {
                functions::replace_first(source.eval(scope)?, regex, replacement)
            }
            BytesNode::WildcardReplace(source, regex, replacement) => {
                functions::replace_first(source.eval(scope)?, regex, replacement)
            }
        })
    }
}

/// Applies an in-place transform, copying a borrowed value first; skips the copy when the
/// transform would not change anything.
fn map_owned<'r>(
    value: Cow<'r, [u8]>,
    changes: fn(&u8) -> bool,
    transform: fn(&mut [u8]),
) -> Cow<'r, [u8]> {
    if !value.iter().any(changes) {
        return value;
    }
    let mut owned = value.into_owned();
    transform(&mut owned);
    Cow::Owned(owned)
}

impl Probe {
    #[inline]
    fn read<'r>(&'r self, scope: Scope<'_, 'r>) -> Option<&'r [u8]> {
        match self {
            Probe::Field(field) => field.read_in_place(scope.req),
            Probe::Item(source, index) => source.item(scope.req, *index),
            Probe::Element => Some(scope.element),
        }
    }
}

impl IntNode {
    pub(crate) fn eval(&self, scope: Scope<'_, '_>) -> Option<i64> {
        match self {
            IntNode::Literal(i) => Some(*i),
            IntNode::Waf(field) => field.read(scope.req),
            IntNode::Len(inner) => i64::try_from(inner.eval(scope)?.len()).ok(),
            IntNode::ArrayLen(source) => source.len(scope.req),
        }
    }
}

impl IpNode {
    pub(crate) fn eval(&self, scope: Scope<'_, '_>) -> Option<IpAddr> {
        match self {
            // A dual-stack listener reports IPv4 clients as ::ffff:a.b.c.d.
            IpNode::Src => scope.req.src_ip.map(|ip| ip.to_canonical()),
        }
    }
}

impl BytesTest {
    fn eval(&self, value: &[u8]) -> bool {
        match self {
            BytesTest::Eq(lit) => value == &lit[..],
            BytesTest::Ne(lit) => value != &lit[..],
            BytesTest::Lt(lit) => value < &lit[..],
            BytesTest::Le(lit) => value <= &lit[..],
            BytesTest::Gt(lit) => value > &lit[..],
            BytesTest::Ge(lit) => value >= &lit[..],
            BytesTest::Contains(lit) => functions::contains(value, lit),
            BytesTest::EqIgnoreCase(lit) => value.eq_ignore_ascii_case(lit),
            BytesTest::NeIgnoreCase(lit) => !value.eq_ignore_ascii_case(lit),
            BytesTest::ContainsIgnoreCase(lit) => functions::contains_ignore_case(value, lit),
            BytesTest::Matches(regex) => regex.is_match(value),
            BytesTest::Wildcard(pattern) => pattern.matches(value),
            BytesTest::In(sorted) => sorted.binary_search_by(|item| (**item).cmp(value)).is_ok(),
        }
    }
}

impl IntTest {
    fn eval(&self, value: i64) -> bool {
        match self {
            IntTest::Eq(lit) => value == *lit,
            IntTest::Ne(lit) => value != *lit,
            IntTest::Lt(lit) => value < *lit,
            IntTest::Le(lit) => value <= *lit,
            IntTest::Gt(lit) => value > *lit,
            IntTest::Ge(lit) => value >= *lit,
            IntTest::In(ranges) => ranges
                .iter()
                .any(|(low, high)| (*low..=*high).contains(&value)),
        }
    }
}

impl IpTest {
    fn eval(&self, value: IpAddr) -> bool {
        match self {
            IpTest::Eq(lit) => value == *lit,
            IpTest::Ne(lit) => value != *lit,
            IpTest::In(nets) => nets.iter().any(|net| net.contains(value)),
        }
    }
}
