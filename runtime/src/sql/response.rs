//! The answers a SQL tool gives the model: success and error shapes, with
//! errors sorted into categories an LLM can act on.

use serde::Serialize;

/// The category of a failed request (connection, authentication, table,
/// column, syntax, constraint, permission and timeout errors, plus `invalid_input`
/// for arguments refused before any SQL is written and `query_error` for
/// database errors that fit no other category).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The database cannot be reached.
    ConnectionError,
    /// The credentials were refused.
    AuthenticationError,
    /// The table does not exist or the tool may not use it.
    InvalidTable,
    /// A column does not exist in the table.
    InvalidColumn,
    /// The SQL or filter could not be parsed.
    SyntaxError,
    /// A unique, foreign-key, not-null or check constraint refused the change.
    ConstraintViolation,
    /// The request needs something the tool is not allowed to do.
    PermissionDenied,
    /// The statement ran past its time limit.
    Timeout,
    /// An argument is malformed, too large or out of range.
    InvalidInput,
    /// Any other database error.
    QueryError,
}

/// A refused or failed request, safe to show the model: no credentials, no
/// statement text, no bound values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The category.
    pub error_type: ErrorType,
    /// What went wrong, in one sentence.
    pub message: String,
    /// How to fix the request, when we know.
    pub suggestion: Option<String>,
    /// The database's SQLSTATE (PostgreSQL) or extended result code (SQLite).
    pub sql_state: Option<String>,
}

impl ToolError {
    /// An error of `error_type` saying `message`.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        ToolError {
            error_type,
            message: message.into(),
            suggestion: None,
            sql_state: None,
        }
    }

    /// Adds a recovery suggestion.
    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// Shorthand for [`ErrorType::InvalidInput`].
    pub fn invalid_input(message: impl Into<String>) -> Self {
        ToolError::new(ErrorType::InvalidInput, message)
    }

    /// Shorthand for [`ErrorType::PermissionDenied`].
    pub fn denied(message: impl Into<String>) -> Self {
        ToolError::new(ErrorType::PermissionDenied, message)
    }

    /// Shorthand for [`ErrorType::SyntaxError`].
    pub fn syntax(message: impl Into<String>) -> Self {
        ToolError::new(ErrorType::SyntaxError, message)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}
