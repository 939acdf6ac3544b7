//! The compile error type shared by every stage (lexer, parser, type check, compile).

/// A compile error: what is wrong and where (byte offset in the expression).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at {position}")]
pub struct RulesError {
    /// What is wrong, naming the offending field, function, operator or type.
    pub message: String,
    /// Byte offset in the expression where the problem starts.
    pub position: usize,
}

impl RulesError {
    pub(crate) fn new(message: impl Into<String>, position: usize) -> Self {
        RulesError {
            message: message.into(),
            position,
        }
    }
}
