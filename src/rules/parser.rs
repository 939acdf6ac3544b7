//! Recursive-descent parser: tokens → [`Expr`].
//!
//! Precedence, tightest first: comparison, `not`, `and`, `xor`, `or`; binary operators are
//! left-associative.

use super::ast::{CompareOp, Expr, Index, ListItem, Literal, LogicalOp, Rhs, Span, Value};
use super::error::RulesError;
use super::lexer::{tokenize, Spanned, Token};
use super::Limits;

/// Words that cannot name a field or function.
pub(crate) const KEYWORDS: [&str; 17] = [
    "and", "or", "xor", "not", "eq", "ne", "lt", "le", "gt", "ge", "contains", "matches",
    "wildcard", "strict", "in", "true", "false",
];

/// Parses `src` into a syntax tree, enforcing the length and depth caps of `limits`.
pub fn parse(src: &str, limits: &Limits) -> Result<Expr, RulesError> {
    if src.len() > limits.max_len {
        return Err(RulesError::new(
            format!(
                "expression is {} bytes, longer than the limit of {} bytes",
                src.len(),
                limits.max_len
            ),
            limits.max_len,
        ));
    }
    let tokens = tokenize(src)?;
    let mut parser = Parser {
        tokens,
        next: 0,
        end: src.len(),
        depth: 0,
        max_depth: limits.max_depth,
    };
    if parser.tokens.is_empty() {
        return Err(RulesError::new("empty expression", 0));
    }
    let expr = parser.expr()?;
    if let Some(extra) = parser.peek() {
        return Err(RulesError::new(
            format!(
                "unexpected {} after the end of the expression",
                describe(&extra.token)
            ),
            extra.pos,
        ));
    }
    Ok(expr)
}

struct Parser {
    tokens: Vec<Spanned>,
    next: usize,
    end: usize,
    depth: usize,
    max_depth: usize,
}

fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) => format!("'{w}'"),
        Token::Str(_) => "string".into(),
        Token::Int(i) => format!("integer {i}"),
        Token::Ip(..) => "IP address".into(),
        Token::LParen => "'('".into(),
        Token::RParen => "')'".into(),
        Token::LBracket => "'['".into(),
        Token::RBracket => "']'".into(),
        Token::LBrace => "'{'".into(),
        Token::RBrace => "'}'".into(),
        Token::Comma => "','".into(),
        Token::Star => "'*'".into(),
        Token::DotDot => "'..'".into(),
        Token::Symbol(s) => format!("'{s}'"),
    }
}

impl Parser {
    fn peek(&self) -> Option<&Spanned> {
        self.tokens.get(self.next)
    }

    fn peek_token(&self) -> Option<&Token> {
        self.peek().map(|s| &s.token)
    }

    fn pos(&self) -> usize {
        self.peek().map_or(self.end, |s| s.pos)
    }

    fn bump(&mut self) -> Option<Spanned> {
        let token = self.tokens.get(self.next).cloned();
        self.next += 1;
        token
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek_token(), Some(Token::Word(w)) if w == word)
    }

    fn unexpected(&self, wanted: &str) -> RulesError {
        match self.peek() {
            Some(s) => RulesError::new(
                format!("expected {wanted}, found {}", describe(&s.token)),
                s.pos,
            ),
            None => RulesError::new(
                format!("expected {wanted}, found end of expression"),
                self.end,
            ),
        }
    }

    fn expect(&mut self, token: Token, wanted: &str) -> Result<(), RulesError> {
        if self.peek_token() == Some(&token) {
            self.next += 1;
            Ok(())
        } else {
            Err(self.unexpected(wanted))
        }
    }

    fn enter(&mut self) -> Result<(), RulesError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(RulesError::new(
                format!("expression nested deeper than {} levels", self.max_depth),
                self.pos(),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn expr(&mut self) -> Result<Expr, RulesError> {
        self.binary(LogicalOp::Or)
    }

    fn logical_op(&self) -> Option<LogicalOp> {
        match self.peek_token()? {
            Token::Word(w) if w == "and" => Some(LogicalOp::And),
            Token::Word(w) if w == "xor" => Some(LogicalOp::Xor),
            Token::Word(w) if w == "or" => Some(LogicalOp::Or),
            Token::Symbol("&&") => Some(LogicalOp::And),
            Token::Symbol("^^") => Some(LogicalOp::Xor),
            Token::Symbol("||") => Some(LogicalOp::Or),
            _ => None,
        }
    }

    /// Parses a left-associative chain of operators of precedence `level` and tighter.
    fn binary(&mut self, level: LogicalOp) -> Result<Expr, RulesError> {
        let tighter = match level {
            LogicalOp::Or => Some(LogicalOp::Xor),
            LogicalOp::Xor => Some(LogicalOp::And),
            LogicalOp::And => None,
        };
        let operand = |p: &mut Parser| match tighter {
            Some(t) => p.binary(t),
            None => p.unary(),
        };
        let mut lhs = operand(self)?;
        while self.logical_op() == Some(level) {
            let span = Span(self.pos());
            self.next += 1;
            let rhs = operand(self)?;
            lhs = Expr::Logical {
                op: level,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, RulesError> {
        self.enter()?;
        let result = self.unary_inner();
        self.leave();
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, RulesError> {
        let pos = self.pos();
        if self.is_word("not") || self.peek_token() == Some(&Token::Symbol("!")) {
            self.next += 1;
            return Ok(Expr::Not(Box::new(self.unary()?), Span(pos)));
        }
        if self.peek_token() == Some(&Token::LParen) {
            self.next += 1;
            let inner = self.expr()?;
            self.expect(Token::RParen, "')'")?;
            return Ok(inner);
        }
        self.comparison()
    }

    fn compare_op(&mut self) -> Option<CompareOp> {
        let op = match self.peek_token()? {
            Token::Symbol("==") => CompareOp::Eq,
            Token::Symbol("!=") => CompareOp::Ne,
            Token::Symbol("<") => CompareOp::Lt,
            Token::Symbol("<=") => CompareOp::Le,
            Token::Symbol(">") => CompareOp::Gt,
            Token::Symbol(">=") => CompareOp::Ge,
            Token::Symbol("~") => CompareOp::Matches,
            Token::Word(w) => match w.as_str() {
                "eq" => CompareOp::Eq,
                "ne" => CompareOp::Ne,
                "lt" => CompareOp::Lt,
                "le" => CompareOp::Le,
                "gt" => CompareOp::Gt,
                "ge" => CompareOp::Ge,
                "contains" => CompareOp::Contains,
                "matches" => CompareOp::Matches,
                "wildcard" => CompareOp::Wildcard,
                "in" => CompareOp::In,
                "strict" => CompareOp::StrictWildcard,
                _ => return None,
            },
            _ => return None,
        };
        self.next += 1;
        Some(op)
    }

    fn comparison(&mut self) -> Result<Expr, RulesError> {
        let lhs = self.value()?;
        let op_pos = self.pos();
        let Some(op) = self.compare_op() else {
            return Ok(Expr::Value(lhs));
        };
        if op == CompareOp::StrictWildcard && !self.is_word("wildcard") {
            return Err(self.unexpected("'wildcard' after 'strict'"));
        }
        if op == CompareOp::StrictWildcard {
            self.next += 1;
        }
        let rhs_pos = self.pos();
        let rhs = if self.peek_token() == Some(&Token::LBrace) {
            self.next += 1;
            Rhs::List(self.list_items()?, Span(rhs_pos))
        } else {
            let literal = self.literal().ok_or_else(|| {
                self.unexpected(&format!("a literal value on the right of '{}'", op.word()))
            })?;
            self.next += 1;
            Rhs::Literal(literal, Span(rhs_pos))
        };
        Ok(Expr::Compare {
            lhs,
            op,
            rhs,
            span: Span(op_pos),
        })
    }

    /// The literal at the cursor, without consuming it.
    fn literal(&self) -> Option<Literal> {
        match self.peek_token()? {
            Token::Str(s) => Some(Literal::Str(s.clone())),
            Token::Int(i) => Some(Literal::Int(*i)),
            Token::Ip(addr, prefix) => Some(Literal::Ip(*addr, *prefix)),
            Token::Word(w) if w == "true" => Some(Literal::Bool(true)),
            Token::Word(w) if w == "false" => Some(Literal::Bool(false)),
            _ => None,
        }
    }

    fn list_items(&mut self) -> Result<Vec<ListItem>, RulesError> {
        let mut items = Vec::new();
        loop {
            match self.peek_token() {
                Some(Token::RBrace) => {
                    self.next += 1;
                    return Ok(items);
                }
                Some(Token::Comma) if !items.is_empty() => {
                    self.next += 1;
                }
                Some(Token::Int(low))
                    if self.tokens.get(self.next + 1).map(|s| &s.token) == Some(&Token::DotDot) =>
                {
                    let low = *low;
                    let pos = self.pos();
                    self.next += 2;
                    let Some(Token::Int(high)) = self.peek_token().cloned() else {
                        return Err(self.unexpected("an integer after '..'"));
                    };
                    self.next += 1;
                    if high < low {
                        return Err(RulesError::new(format!("empty range {low}..{high}"), pos));
                    }
                    items.push(ListItem::Range(low, high));
                }
                _ => match self.literal() {
                    Some(literal) => {
                        self.next += 1;
                        items.push(ListItem::Literal(literal));
                    }
                    None => return Err(self.unexpected("a list item or '}'")),
                },
            }
        }
    }

    fn value(&mut self) -> Result<Value, RulesError> {
        let mut value = self.primary()?;
        while self.peek_token() == Some(&Token::LBracket) {
            let span = Span(self.pos());
            self.next += 1;
            let index = match self.bump().map(|s| s.token) {
                Some(Token::Str(key)) => Index::Key(key),
                Some(Token::Star) => Index::Each,
                Some(Token::Int(i)) => Index::Position(u32::try_from(i).map_err(|_| {
                    RulesError::new(format!("invalid array index {i}"), span.0 + 1)
                })?),
                _ => {
                    self.next -= 1;
                    return Err(self.unexpected("a string key, an integer index or '*'"));
                }
            };
            self.expect(Token::RBracket, "']'")?;
            value = Value::Index {
                base: Box::new(value),
                index,
                span,
            };
        }
        Ok(value)
    }

    fn primary(&mut self) -> Result<Value, RulesError> {
        let pos = self.pos();
        if let Some(literal) = self.literal() {
            self.next += 1;
            return Ok(Value::Literal(literal, Span(pos)));
        }
        let Some(Token::Word(name)) = self.peek_token().cloned() else {
            return Err(self.unexpected("a field, function or literal"));
        };
        if KEYWORDS.contains(&name.as_str()) {
            return Err(self.unexpected("a field, function or literal"));
        }
        self.next += 1;
        if self.peek_token() != Some(&Token::LParen) {
            return Ok(Value::Field(name, Span(pos)));
        }
        self.next += 1;
        self.enter()?;
        let mut args = Vec::new();
        if self.peek_token() == Some(&Token::RParen) {
            self.next += 1;
        } else {
            loop {
                args.push(self.expr()?);
                match self.peek_token() {
                    Some(Token::Comma) => self.next += 1,
                    Some(Token::RParen) => {
                        self.next += 1;
                        break;
                    }
                    _ => return Err(self.unexpected("',' or ')'")),
                }
            }
        }
        self.leave();
        Ok(Value::Call {
            name,
            args,
            span: Span(pos),
        })
    }
}
