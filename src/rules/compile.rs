//! Type check and compilation: syntax tree → [`BoolNode`].
//!
//! Every value is checked and lowered in one pass. A value under `[*]` is compiled as an
//! element expression (reading [`BytesNode::Element`]) together with the array it ranges over;
//! `any`/`all` close over that array, which is how `any(lower(x[*])[*] eq "a")` evaluates
//! element by element without building an array.

use std::net::IpAddr;

use regex::bytes::{Regex, RegexBuilder};

use super::ast::{CompareOp, Expr, Index, ListItem, Literal, LogicalOp, Rhs, Value};
use super::error::RulesError;
use super::fields::{self, ArraySource, FieldKind, MapField};
use super::ir::{BoolNode, BytesNode, BytesTest, IntNode, IntTest, IpNet, IpNode, IpTest};
use super::wildcard::WildcardPattern;
use super::Limits;

/// The result of compiling a whole expression.
pub(crate) struct Compiled {
    pub root: BoolNode,
    /// Names of the fields the expression reads, sorted, without duplicates.
    pub fields: Vec<String>,
}

/// Type-checks and compiles `expr`, which must be a boolean expression.
pub(crate) fn compile(expr: &Expr, limits: &Limits) -> Result<Compiled, RulesError> {
    let mut compiler = Compiler {
        limits,
        fields: Vec::new(),
    };
    let checked = compiler.expr(expr)?;
    if checked.each.is_some() {
        return Err(RulesError::new(
            "a comparison on [*] gives an array of booleans: wrap it in any() or all()",
            checked.pos,
        ));
    }
    let root = match checked.node {
        Node::Bool(root) => root,
        other => {
            return Err(RulesError::new(
                format!("expected a boolean expression, found {}", other.type_name()),
                checked.pos,
            ))
        }
    };
    let mut fields = compiler.fields;
    fields.sort();
    fields.dedup();
    Ok(Compiled { root, fields })
}

/// A compiled value of some type.
pub(crate) enum Node {
    Bool(BoolNode),
    Int(IntNode),
    Bytes(BytesNode),
    Ip(IpNode),
    Array(ArraySource),
    Map(MapField),
}

impl Node {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Bytes(_) => "a string",
            Node::Ip(_) => "an IP address",
            Node::Array(_) => "an array of strings",
            Node::Map(_) => "a map of string arrays",
        }
    }
}

/// A compiled value, the array it ranges over when it is under `[*]`, and its position.
pub(crate) struct Checked {
    pub node: Node,
    pub each: Option<ArraySource>,
    pub pos: usize,
}

pub(crate) struct Compiler<'l> {
    pub limits: &'l Limits,
    fields: Vec<String>,
}

/// Combines the `[*]` arrays of two operands: at most one distinct array per expression.
pub(crate) fn merge_each(
    a: Option<ArraySource>,
    b: Option<ArraySource>,
    pos: usize,
) -> Result<Option<ArraySource>, RulesError> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => Err(RulesError::new(
            "one expression cannot range over two different [*] arrays",
            pos,
        )),
        (a, b) => Ok(a.or(b)),
    }
}

impl Compiler<'_> {
    pub(crate) fn expr(&mut self, expr: &Expr) -> Result<Checked, RulesError> {
        match expr {
            Expr::Value(value) => self.value(value),
            Expr::Not(inner, span) => {
                let checked = self.expr(inner)?;
                let (node, each) = self.boolean(checked, "not")?;
                Ok(Checked {
                    node: Node::Bool(BoolNode::Not(Box::new(node))),
                    each,
                    pos: span.0,
                })
            }
            Expr::Logical { op, .. } => self.logical(*op, expr),
            Expr::Compare { lhs, op, rhs, span } => self.compare(lhs, *op, rhs, span.0),
        }
    }

    fn boolean(
        &mut self,
        checked: Checked,
        operator: &str,
    ) -> Result<(BoolNode, Option<ArraySource>), RulesError> {
        match checked.node {
            Node::Bool(node) => Ok((node, checked.each)),
            other => Err(RulesError::new(
                format!(
                    "'{operator}' needs boolean operands, found {}",
                    other.type_name()
                ),
                checked.pos,
            )),
        }
    }

    /// Compiles a chain `a op b op c …` (left-deep in the tree) into one flat node.
    fn logical(&mut self, op: LogicalOp, expr: &Expr) -> Result<Checked, RulesError> {
        let mut operands = Vec::new();
        let mut cursor = expr;
        while let Expr::Logical {
            op: inner,
            lhs,
            rhs,
            ..
        } = cursor
        {
            if *inner != op {
                break;
            }
            operands.push(&**rhs);
            cursor = lhs;
        }
        operands.push(cursor);
        operands.reverse();
        let pos = expr.span();
        let mut each = None;
        let mut nodes = Vec::with_capacity(operands.len());
        for operand in operands {
            let checked = self.expr(operand)?;
            let operand_pos = checked.pos;
            let (node, operand_each) = self.boolean(checked, op.word())?;
            each = merge_each(each, operand_each, operand_pos)?;
            nodes.push(node);
        }
        let node = match op {
            LogicalOp::And => BoolNode::And(nodes.into_boxed_slice()),
            LogicalOp::Or => BoolNode::Or(nodes.into_boxed_slice()),
            LogicalOp::Xor => BoolNode::Xor(nodes.into_boxed_slice()),
        };
        Ok(Checked {
            node: Node::Bool(node),
            each,
            pos,
        })
    }

    pub(crate) fn value(&mut self, value: &Value) -> Result<Checked, RulesError> {
        let pos = value.span();
        let node = match value {
            Value::Field(name, _) => {
                let kind = fields::lookup(name)
                    .ok_or_else(|| RulesError::new(format!("unknown field '{name}'"), pos))?;
                self.fields.push(name.clone());
                match kind {
                    FieldKind::Bytes(field) => Node::Bytes(BytesNode::Field(field)),
                    FieldKind::Int(field) => Node::Int(IntNode::Waf(field)),
                    FieldKind::SrcIp => Node::Ip(IpNode::Src),
                    FieldKind::Ssl => Node::Bool(BoolNode::Ssl),
                    FieldKind::Array(source) => Node::Array(source),
                    FieldKind::Map(map) => Node::Map(map),
                }
            }
            Value::Literal(literal, _) => match literal {
                Literal::Str(s) => Node::Bytes(BytesNode::Literal(s.clone().into_boxed_slice())),
                Literal::Int(i) => Node::Int(IntNode::Literal(*i)),
                Literal::Bool(b) => Node::Bool(BoolNode::Const(*b)),
                Literal::Ip(..) => {
                    return Err(RulesError::new(
                        "an IP address literal can only appear on the right of a comparison",
                        pos,
                    ))
                }
            },
            Value::Index { base, index, span } => return self.index(base, index, span.0),
            Value::Call { name, args, .. } => return self.call(name, args, pos),
        };
        Ok(Checked {
            node,
            each: None,
            pos,
        })
    }

    fn index(&mut self, base: &Value, index: &Index, pos: usize) -> Result<Checked, RulesError> {
        let base = self.value(base)?;
        let (node, each) = match (base.node, index) {
            (Node::Map(map), Index::Key(key)) => (Node::Array(map.values(key)), base.each),
            (Node::Map(_), _) => {
                return Err(RulesError::new(
                    "a map is indexed with a string key, such as [\"name\"]",
                    pos,
                ))
            }
            (Node::Array(source), Index::Position(i)) => {
                (Node::Bytes(BytesNode::Item(source, *i)), base.each)
            }
            (Node::Array(source), Index::Each) => (Node::Bytes(BytesNode::Element), Some(source)),
            (Node::Array(_), Index::Key(_)) => {
                return Err(RulesError::new(
                    "an array is indexed with an integer or [*]",
                    pos,
                ))
            }
            // Cloudflare writes `lower(x[*])[*]`: the result is already element-wise.
            (node @ Node::Bytes(_), Index::Each) if base.each.is_some() => (node, base.each),
            (other, _) => {
                return Err(RulesError::new(
                    format!("cannot index {}", other.type_name()),
                    pos,
                ))
            }
        };
        Ok(Checked {
            node,
            each,
            pos: base.pos,
        })
    }

    fn compare(
        &mut self,
        lhs: &Value,
        op: CompareOp,
        rhs: &Rhs,
        op_pos: usize,
    ) -> Result<Checked, RulesError> {
        let checked = self.value(lhs)?;
        let node = match checked.node {
            Node::Bytes(node) => BoolNode::bytes_test(node, self.bytes_test(op, rhs, op_pos)?),
            Node::Int(node) => BoolNode::Int(node, int_test(op, rhs, op_pos)?),
            Node::Ip(node) => BoolNode::Ip(node, ip_test(op, rhs, op_pos)?),
            Node::Bool(node) => bool_test(node, op, rhs, op_pos)?,
            other => {
                return Err(RulesError::new(
                    format!(
                        "cannot compare {}: pick an element with [0] or [*]",
                        other.type_name()
                    ),
                    checked.pos,
                ))
            }
        };
        Ok(Checked {
            node: Node::Bool(node),
            each: checked.each,
            pos: checked.pos,
        })
    }

    fn bytes_test(
        &mut self,
        op: CompareOp,
        rhs: &Rhs,
        op_pos: usize,
    ) -> Result<BytesTest, RulesError> {
        if op == CompareOp::In {
            let (items, pos) = list(op, rhs)?;
            let mut strings = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    ListItem::Literal(Literal::Str(s)) => {
                        strings.push(s.clone().into_boxed_slice())
                    }
                    _ => return Err(RulesError::new("expected only strings in the list", pos)),
                }
            }
            strings.sort();
            strings.dedup();
            return Ok(BytesTest::In(strings.into_boxed_slice()));
        }
        let (literal, pos) = match rhs {
            Rhs::Literal(Literal::Str(s), span) => (s, span.0),
            Rhs::Literal(_, span) | Rhs::List(_, span) => {
                return Err(expected_on_right("a string", op, span.0))
            }
        };
        let owned = || literal.clone().into_boxed_slice();
        Ok(match op {
            CompareOp::Eq => BytesTest::Eq(owned()),
            CompareOp::Ne => BytesTest::Ne(owned()),
            CompareOp::Lt => BytesTest::Lt(owned()),
            CompareOp::Le => BytesTest::Le(owned()),
            CompareOp::Gt => BytesTest::Gt(owned()),
            CompareOp::Ge => BytesTest::Ge(owned()),
            CompareOp::Contains => BytesTest::Contains(owned()),
            CompareOp::Matches => BytesTest::Matches(self.regex(literal, pos)?),
            CompareOp::Wildcard | CompareOp::StrictWildcard => BytesTest::Wildcard(
                WildcardPattern::new(literal, op == CompareOp::StrictWildcard)
                    .map_err(|_| invalid_wildcard(pos))?,
            ),
            CompareOp::In => unreachable_in(op_pos)?,
        })
    }

    /// Builds a regex from a literal, under the configured size cap.
    pub(crate) fn regex(&self, pattern: &[u8], pos: usize) -> Result<Regex, RulesError> {
        let pattern = std::str::from_utf8(pattern)
            .map_err(|_| RulesError::new("a regex must be valid UTF-8", pos))?;
        RegexBuilder::new(pattern)
            .size_limit(self.limits.max_regex_size)
            .dfa_size_limit(self.limits.max_regex_size)
            .build()
            .map_err(|e| regex_error(&e, pos, self.limits.max_regex_size))
    }
}

/// `in` is handled before the literal match; this keeps that match exhaustive without panics.
fn unreachable_in<T>(pos: usize) -> Result<T, RulesError> {
    Err(RulesError::new(
        "'in' needs a list such as { \"a\" \"b\" }",
        pos,
    ))
}

pub(crate) fn invalid_wildcard(pos: usize) -> RulesError {
    RulesError::new(
        "invalid escape in wildcard pattern (allowed: \\* and \\\\)",
        pos,
    )
}

/// Maps a regex build error to a message naming the cap or the syntax problem.
pub(crate) fn regex_error(error: &regex::Error, pos: usize, cap: usize) -> RulesError {
    let message = match error {
        regex::Error::CompiledTooBig(_) => {
            format!("regex too large: its compiled form exceeds the limit of {cap} bytes")
        }
        regex::Error::Syntax(text) => {
            let detail = text
                .lines()
                .find_map(|line| line.trim().strip_prefix("error: "))
                .unwrap_or("syntax error");
            format!("invalid regex: {detail}")
        }
        _ => "invalid regex".to_string(),
    };
    RulesError::new(message, pos)
}

fn expected_on_right(what: &str, op: CompareOp, pos: usize) -> RulesError {
    RulesError::new(
        format!("expected {what} on the right of '{}'", op.word()),
        pos,
    )
}

fn not_defined(op: CompareOp, type_name: &str, pos: usize) -> RulesError {
    RulesError::new(
        format!("operator '{}' is not defined for {type_name}", op.word()),
        pos,
    )
}

fn list(op: CompareOp, rhs: &Rhs) -> Result<(&[ListItem], usize), RulesError> {
    match rhs {
        Rhs::List(items, span) => Ok((items, span.0)),
        Rhs::Literal(_, span) => Err(expected_on_right("a list { … }", op, span.0)),
    }
}

fn int_test(op: CompareOp, rhs: &Rhs, op_pos: usize) -> Result<IntTest, RulesError> {
    if op == CompareOp::In {
        let (items, pos) = list(op, rhs)?;
        let mut ranges = Vec::with_capacity(items.len());
        for item in items {
            match item {
                ListItem::Literal(Literal::Int(i)) => ranges.push((*i, *i)),
                ListItem::Range(low, high) => ranges.push((*low, *high)),
                _ => {
                    return Err(RulesError::new(
                        "expected only integers and ranges in the list",
                        pos,
                    ))
                }
            }
        }
        return Ok(IntTest::In(ranges.into_boxed_slice()));
    }
    let value = match rhs {
        Rhs::Literal(Literal::Int(i), _) => *i,
        Rhs::Literal(_, span) | Rhs::List(_, span) => {
            if matches!(
                op,
                CompareOp::Contains
                    | CompareOp::Matches
                    | CompareOp::Wildcard
                    | CompareOp::StrictWildcard
            ) {
                return Err(not_defined(op, "integers", op_pos));
            }
            return Err(expected_on_right("an integer", op, span.0));
        }
    };
    Ok(match op {
        CompareOp::Eq => IntTest::Eq(value),
        CompareOp::Ne => IntTest::Ne(value),
        CompareOp::Lt => IntTest::Lt(value),
        CompareOp::Le => IntTest::Le(value),
        CompareOp::Gt => IntTest::Gt(value),
        CompareOp::Ge => IntTest::Ge(value),
        _ => return Err(not_defined(op, "integers", op_pos)),
    })
}

fn ip_test(op: CompareOp, rhs: &Rhs, op_pos: usize) -> Result<IpTest, RulesError> {
    match op {
        CompareOp::In => {
            let (items, pos) = list(op, rhs)?;
            let mut nets = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    ListItem::Literal(Literal::Ip(addr, prefix)) => nets.push(match prefix {
                        Some(prefix) => IpNet {
                            addr: *addr,
                            prefix: *prefix,
                        },
                        None => {
                            let addr = addr.to_canonical();
                            IpNet {
                                addr,
                                prefix: if addr.is_ipv4() { 32 } else { 128 },
                            }
                        }
                    }),
                    _ => {
                        return Err(RulesError::new(
                            "expected only IP addresses and CIDR ranges in the list",
                            pos,
                        ))
                    }
                }
            }
            Ok(IpTest::In(nets.into_boxed_slice()))
        }
        CompareOp::Eq | CompareOp::Ne => {
            let addr: IpAddr = match rhs {
                Rhs::Literal(Literal::Ip(addr, None), _) => addr.to_canonical(),
                Rhs::Literal(Literal::Ip(_, Some(_)), span) => {
                    return Err(RulesError::new(
                        "a CIDR range is only allowed in a list after 'in', such as ip.src in { 10.0.0.0/8 }",
                        span.0,
                    ))
                }
                Rhs::Literal(_, span) | Rhs::List(_, span) => {
                    return Err(expected_on_right("an IP address", op, span.0))
                }
            };
            Ok(if op == CompareOp::Eq {
                IpTest::Eq(addr)
            } else {
                IpTest::Ne(addr)
            })
        }
        _ => Err(not_defined(op, "IP addresses", op_pos)),
    }
}

fn bool_test(
    node: BoolNode,
    op: CompareOp,
    rhs: &Rhs,
    op_pos: usize,
) -> Result<BoolNode, RulesError> {
    let value = match rhs {
        Rhs::Literal(Literal::Bool(b), _) => *b,
        Rhs::Literal(_, span) | Rhs::List(_, span) => {
            if !matches!(op, CompareOp::Eq | CompareOp::Ne) {
                return Err(not_defined(op, "booleans", op_pos));
            }
            return Err(expected_on_right("a boolean", op, span.0));
        }
    };
    let wanted = match op {
        CompareOp::Eq => value,
        CompareOp::Ne => !value,
        _ => return Err(not_defined(op, "booleans", op_pos)),
    };
    Ok(if wanted {
        node
    } else {
        BoolNode::Not(Box::new(node))
    })
}
