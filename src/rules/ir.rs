//! The compiled, type-checked form of an expression: plain data, built once, evaluated by
//! [`super::eval`]. Literal operands are pre-processed here (regexes built, lists sorted,
//! wildcard patterns split) so evaluation only reads.

use std::net::IpAddr;

use regex::bytes::Regex;

use super::fields::{ArraySource, BytesField, WafField};
use super::wildcard::WildcardPattern;

/// A boolean node; a missing operand makes a comparison false.
#[derive(Debug, Clone)]
pub(crate) enum BoolNode {
    Const(bool),
    Ssl,
    Not(Box<BoolNode>),
    /// `and` chain: true when every operand is.
    And(Box<[BoolNode]>),
    /// `or` chain: true when some operand is.
    Or(Box<[BoolNode]>),
    /// `xor` chain: true when an odd number of operands are.
    Xor(Box<[BoolNode]>),
    Bytes(BytesNode, BytesTest),
    Int(IntNode, IntTest),
    Ip(IpNode, IpTest),
    StartsWith(BytesNode, BytesNode),
    EndsWith(BytesNode, BytesNode),
    /// Fast forms of `Bytes`, `StartsWith`, `EndsWith` for values read in place (no `Cow`).
    ProbeTest(Probe, BytesTest),
    ProbeStartsWith(Probe, Box<[u8]>),
    ProbeEndsWith(Probe, Box<[u8]>),
    /// `any(…)`: the predicate holds for some element of the array (read via `Element`).
    Any(ArraySource, Box<BoolNode>),
    /// `all(…)`: the array is non-empty and the predicate holds for every element.
    All(ArraySource, Box<BoolNode>),
}

/// A string-valued node (strings are byte strings, as in Cloudflare's engine).
#[derive(Debug, Clone)]
pub(crate) enum BytesNode {
    Literal(Box<[u8]>),
    Field(BytesField),
    /// The array element currently visited by the enclosing `any`/`all`.
    Element,
    /// `array[i]`: missing when the array is shorter.
    Item(ArraySource, u32),
    Lower(Box<BytesNode>),
    Upper(Box<BytesNode>),
    UrlDecode {
        source: Box<BytesNode>,
        recursive: bool,
        unicode: bool,
    },
    Concat(Box<[BytesNode]>),
    IntToString(IntNode),
    BoolToString(Box<BoolNode>),
    IpToString(IpNode),
    LookupJson(Box<BytesNode>, Box<[JsonKey]>),
    /// Replaces the first match of the regex.
    RegexReplace(Box<BytesNode>, Regex, Box<[u8]>),
    /// Replaces the whole source when the anchored regex (built from the wildcard) matches.
    WildcardReplace(Box<BytesNode>, Regex, Box<[u8]>),
}

/// A string read in place from the request: a plain field, an array item or the element.
#[derive(Debug, Clone)]
pub(crate) enum Probe {
    Field(BytesField),
    Item(ArraySource, u32),
    Element,
}

impl Probe {
    /// The probe for `node`, when `node` reads a value without building it.
    pub(crate) fn of(node: &BytesNode) -> Option<Probe> {
        match node {
            BytesNode::Field(field) if field.borrows() => Some(Probe::Field(*field)),
            BytesNode::Item(source, index) => Some(Probe::Item(source.clone(), *index)),
            BytesNode::Element => Some(Probe::Element),
            _ => None,
        }
    }
}

impl BoolNode {
    /// `node` compared by `test`, in its fastest form: a probe read in place, and
    /// `lower(x) eq "abc"`-style comparisons folded into case-insensitive tests on `x`.
    pub(crate) fn bytes_test(node: BytesNode, test: BytesTest) -> BoolNode {
        let (node, test) = match (node, test) {
            (BytesNode::Lower(inner), BytesTest::Eq(lit))
                if !lit.iter().any(u8::is_ascii_uppercase) =>
            {
                (*inner, BytesTest::EqIgnoreCase(lit))
            }
            (BytesNode::Lower(inner), BytesTest::Ne(lit))
                if !lit.iter().any(u8::is_ascii_uppercase) =>
            {
                (*inner, BytesTest::NeIgnoreCase(lit))
            }
            (BytesNode::Lower(inner), BytesTest::Contains(lit))
                if !lit.iter().any(u8::is_ascii_uppercase) =>
            {
                (*inner, BytesTest::ContainsIgnoreCase(lit))
            }
            (BytesNode::Upper(inner), BytesTest::Eq(lit))
                if !lit.iter().any(u8::is_ascii_lowercase) =>
            {
                (*inner, BytesTest::EqIgnoreCase(lit))
            }
            (BytesNode::Upper(inner), BytesTest::Ne(lit))
                if !lit.iter().any(u8::is_ascii_lowercase) =>
            {
                (*inner, BytesTest::NeIgnoreCase(lit))
            }
            (node, test) => (node, test),
        };
        match Probe::of(&node) {
            Some(probe) => BoolNode::ProbeTest(probe, test),
            None => BoolNode::Bytes(node, test),
        }
    }

    /// `starts_with` / `ends_with`, probing in place when the affix is a literal.
    pub(crate) fn affix(value: BytesNode, affix: BytesNode, prefix: bool) -> BoolNode {
        match (Probe::of(&value), affix) {
            (Some(probe), BytesNode::Literal(lit)) if prefix => {
                BoolNode::ProbeStartsWith(probe, lit)
            }
            (Some(probe), BytesNode::Literal(lit)) => BoolNode::ProbeEndsWith(probe, lit),
            (_, affix) if prefix => BoolNode::StartsWith(value, affix),
            (_, affix) => BoolNode::EndsWith(value, affix),
        }
    }
}

/// One step of a `lookup_json_string` path.
#[derive(Debug, Clone)]
pub(crate) enum JsonKey {
    Name(String),
    Index(usize),
}

/// An integer-valued node; `None` at run time means missing.
#[derive(Debug, Clone)]
pub(crate) enum IntNode {
    Literal(i64),
    Waf(WafField),
    Len(Box<BytesNode>),
    ArrayLen(ArraySource),
}

/// An IP-valued node.
#[derive(Debug, Clone)]
pub(crate) enum IpNode {
    Src,
}

/// A string comparison with its literal operand.
#[derive(Debug, Clone)]
pub(crate) enum BytesTest {
    Eq(Box<[u8]>),
    Ne(Box<[u8]>),
    Lt(Box<[u8]>),
    Le(Box<[u8]>),
    Gt(Box<[u8]>),
    Ge(Box<[u8]>),
    Contains(Box<[u8]>),
    /// `lower(x) eq "abc"` compiled as a case-insensitive test on `x` (no lowercase copy).
    EqIgnoreCase(Box<[u8]>),
    NeIgnoreCase(Box<[u8]>),
    ContainsIgnoreCase(Box<[u8]>),
    Matches(Regex),
    Wildcard(WildcardPattern),
    /// Sorted, for binary search.
    In(Box<[Box<[u8]>]>),
}

/// An integer comparison with its literal operand.
#[derive(Debug, Clone)]
pub(crate) enum IntTest {
    Eq(i64),
    Ne(i64),
    Lt(i64),
    Le(i64),
    Gt(i64),
    Ge(i64),
    /// Inclusive ranges (single values are `(v, v)`).
    In(Box<[(i64, i64)]>),
}

/// An IP comparison with its literal operand.
#[derive(Debug, Clone)]
pub(crate) enum IpTest {
    Eq(IpAddr),
    Ne(IpAddr),
    In(Box<[IpNet]>),
}

/// An address and prefix length (a plain address is a full-length prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IpNet {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl IpNet {
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_eq(u32::from(net).into(), u32::from(ip).into(), self.prefix, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_eq(u128::from(net), u128::from(ip), self.prefix, 128)
            }
            _ => false,
        }
    }
}

fn prefix_eq(net: u128, ip: u128, prefix: u8, bits: u32) -> bool {
    let prefix = u32::from(prefix).min(bits);
    if prefix == 0 {
        return true;
    }
    let shift = bits - prefix;
    (net >> shift) == (ip >> shift)
}
