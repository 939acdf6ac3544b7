//! Syntax tree of an expression, as written (before type checking).
//!
//! [`Display`](std::fmt::Display) on [`Expr`] prints canonical source text (word operators,
//! minimal parentheses) that parses back to an equal tree.

use std::net::IpAddr;

/// Byte offset of a node in the source text.
///
/// Spans never take part in equality: two trees are equal when they denote the same expression,
/// wherever its parts were written (this is what makes `parse(print(ast)) == ast` meaningful).
#[derive(Debug, Clone, Copy, Default)]
pub struct Span(pub usize);

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}
impl Eq for Span {}

/// A boolean expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// `not e` / `! e`.
    Not(Box<Expr>, Span),
    /// `lhs and|xor|or rhs`.
    Logical {
        op: LogicalOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        span: Span,
    },
    /// `value op literal`.
    Compare {
        lhs: Value,
        op: CompareOp,
        rhs: Rhs,
        span: Span,
    },
    /// A bare value used as a condition (`true`, `ssl`, `starts_with(…)`).
    Value(Value),
}

/// Logical operators, loosest binding last: `and` > `xor` > `or`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalOp {
    And,
    Xor,
    Or,
}

impl LogicalOp {
    /// Binding strength: higher binds tighter (`not` is above all of these).
    pub fn precedence(self) -> u8 {
        match self {
            LogicalOp::And => 3,
            LogicalOp::Xor => 2,
            LogicalOp::Or => 1,
        }
    }

    /// The English spelling.
    pub fn word(self) -> &'static str {
        match self {
            LogicalOp::And => "and",
            LogicalOp::Xor => "xor",
            LogicalOp::Or => "or",
        }
    }
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Matches,
    Wildcard,
    StrictWildcard,
    In,
}

impl CompareOp {
    /// The English spelling, as printed and as named in error messages.
    pub fn word(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
            CompareOp::Contains => "contains",
            CompareOp::Matches => "matches",
            CompareOp::Wildcard => "wildcard",
            CompareOp::StrictWildcard => "strict wildcard",
            CompareOp::In => "in",
        }
    }
}

/// A value: field, literal, function call, or an indexed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A field name such as `http.request.uri.path`.
    Field(String, Span),
    Literal(Literal, Span),
    /// `name(arg, …)`; arguments are expressions (`any(x[*] eq "a")`).
    Call {
        name: String,
        args: Vec<Expr>,
        span: Span,
    },
    /// `base[index]`.
    Index {
        base: Box<Value>,
        index: Index,
        span: Span,
    },
}

/// What goes between `[` and `]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Index {
    /// `["name"]`: map key.
    Key(Vec<u8>),
    /// `[0]`: array position.
    Position(u32),
    /// `[*]`: every element.
    Each,
}

/// A literal value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    Str(Vec<u8>),
    Int(i64),
    Bool(bool),
    /// An address, or a network when the prefix length is present.
    Ip(IpAddr, Option<u8>),
}

/// Right-hand side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rhs {
    Literal(Literal, Span),
    /// `{ item item … }` (only after `in`).
    List(Vec<ListItem>, Span),
}

/// One element of a `{ … }` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListItem {
    Literal(Literal),
    /// `low..high`, both inclusive.
    Range(i64, i64),
}

impl Value {
    /// Where the value starts in the source.
    pub fn span(&self) -> usize {
        match self {
            Value::Field(_, s) | Value::Literal(_, s) => s.0,
            Value::Call { span, .. } | Value::Index { span, .. } => span.0,
        }
    }
}

impl Expr {
    /// Where the expression starts in the source.
    pub fn span(&self) -> usize {
        match self {
            Expr::Not(_, s) => s.0,
            Expr::Logical { lhs, .. } => lhs.span(),
            Expr::Compare { lhs, .. } | Expr::Value(lhs) => lhs.span(),
        }
    }
}
