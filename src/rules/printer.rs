//! Canonical source text of a syntax tree: word operators, minimal parentheses, quoted strings.

use std::fmt::{self, Display, Formatter, Write};

use super::ast::{Expr, Index, ListItem, Literal, Rhs, Value};

/// Binding strength of an expression node when printed (`not` and atoms bind tightest).
fn precedence(expr: &Expr) -> u8 {
    match expr {
        Expr::Logical { op, .. } => op.precedence(),
        Expr::Not(..) | Expr::Compare { .. } | Expr::Value(_) => 4,
    }
}

fn write_operand(f: &mut Formatter<'_>, expr: &Expr, parenthesize: bool) -> fmt::Result {
    if parenthesize {
        write!(f, "({expr})")
    } else {
        write!(f, "{expr}")
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Not(inner, _) => {
                f.write_str("not ")?;
                write_operand(f, inner, precedence(inner) < 4)
            }
            Expr::Logical { op, lhs, rhs, .. } => {
                let own = op.precedence();
                // Left-associative: an equal-precedence right operand needs parentheses.
                write_operand(f, lhs, precedence(lhs) < own)?;
                write!(f, " {} ", op.word())?;
                write_operand(f, rhs, precedence(rhs) <= own)
            }
            Expr::Compare { lhs, op, rhs, .. } => write!(f, "{lhs} {} {rhs}", op.word()),
            Expr::Value(value) => write!(f, "{value}"),
        }
    }
}

impl Display for Value {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Value::Field(name, _) => f.write_str(name),
            Value::Literal(literal, _) => write!(f, "{literal}"),
            Value::Call { name, args, .. } => {
                write!(f, "{name}(")?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_char(')')
            }
            Value::Index { base, index, .. } => {
                write!(f, "{base}[")?;
                match index {
                    Index::Key(key) => write_string(f, key)?,
                    Index::Position(i) => write!(f, "{i}")?,
                    Index::Each => f.write_char('*')?,
                }
                f.write_char(']')
            }
        }
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Str(bytes) => write_string(f, bytes),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Ip(addr, None) => write!(f, "{addr}"),
            Literal::Ip(addr, Some(len)) => write!(f, "{addr}/{len}"),
        }
    }
}

impl Display for Rhs {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Rhs::Literal(literal, _) => write!(f, "{literal}"),
            Rhs::List(items, _) => {
                f.write_char('{')?;
                for item in items {
                    match item {
                        ListItem::Literal(literal) => write!(f, " {literal}")?,
                        ListItem::Range(low, high) => write!(f, " {low}..{high}")?,
                    }
                }
                f.write_str(" }")
            }
        }
    }
}

/// Writes a quoted string: printable ASCII as is, `"` and `\` escaped, other bytes as `\xHH`.
fn write_string(f: &mut Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    f.write_char('"')?;
    for &b in bytes {
        match b {
            b'"' => f.write_str("\\\"")?,
            b'\\' => f.write_str("\\\\")?,
            b' '..=b'~' => f.write_char(b as char)?,
            _ => write!(f, "\\x{b:02x}")?,
        }
    }
    f.write_char('"')
}
