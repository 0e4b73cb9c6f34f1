//! The answers a SQL tool gives the model: success and error shapes, with
//! errors sorted into categories an LLM can act on.

use serde::Serialize;

/// The category of a failed request: the eight a workflow can branch on.
/// Finer detail is in [`Reason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The database cannot be reached, or is in no state to answer.
    ConnectionError,
    /// The credentials were refused.
    AuthenticationError,
    /// The table does not exist or the tool may not use it.
    InvalidTable,
    /// A column does not exist in the table, or cannot be read.
    InvalidColumn,
    /// The request is malformed: SQL or a filter that does not parse, or an
    /// argument that is empty, too long, too complex or of the wrong shape.
    SyntaxError,
    /// A value does not fit: a unique, foreign-key, not-null or check
    /// constraint refused the change, or a value is of the wrong type or out
    /// of its column's range.
    ConstraintViolation,
    /// The request needs something the tool is not allowed to do.
    PermissionDenied,
    /// The statement ran past its time limit, or waited for another
    /// transaction; retrying may succeed.
    Timeout,
}

/// Why a request failed, finer than its [`ErrorType`] (`reason` in the
/// answer; absent where the category says it all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Something needed is empty: the statement, a filter, the rows, a name.
    Empty,
    /// An argument is longer than allowed.
    TooLong,
    /// An argument has too many parts (tokens, terms, names, rows, values)
    /// or is nested too deeply.
    TooComplex,
    /// An argument holds a NUL or another control character.
    ControlCharacter,
    /// An argument is not in the form asked for: a quote left open, words
    /// where none belong, a name given twice, a function given the wrong
    /// arguments.
    Malformed,
    /// A limit or offset is not a whole number in its range.
    OutOfRange,
    /// An update or delete without conditions that pick rows.
    NoFilter,
    /// A value's type does not fit its column.
    WrongType,
    /// An upsert's conflict columns are not a primary key or a unique
    /// constraint of the table.
    NotUnique,
    /// The database refused a value: out of range, too long, not in the
    /// column's format (a data exception).
    BadValue,
    /// The transaction conflicted with another one (deadlock,
    /// serialization failure).
    Conflict,
    /// The database ran out of a resource or hit one of its limits.
    Resources,
    /// A result column has a type the tool cannot read.
    Unreadable,
    /// The database failed in a way no finer reason names.
    Database,
}

/// A refused or failed request, safe to show the model: no credentials, no
/// statement text, no bound values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The category.
    pub error_type: ErrorType,
    /// The finer cause, when the category does not say it all.
    pub reason: Option<Reason>,
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
            reason: None,
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

    /// Adds the finer cause.
    pub fn because(mut self, reason: Reason) -> Self {
        self.reason = Some(reason);
        self
    }

    /// Shorthand for [`ErrorType::PermissionDenied`].
    pub fn denied(message: impl Into<String>) -> Self {
        ToolError::new(ErrorType::PermissionDenied, message)
    }

    /// Shorthand for [`ErrorType::SyntaxError`].
    pub fn syntax(message: impl Into<String>) -> Self {
        ToolError::new(ErrorType::SyntaxError, message)
    }

    /// A malformed argument: [`ErrorType::SyntaxError`] because of `reason`.
    pub fn malformed(reason: Reason, message: impl Into<String>) -> Self {
        ToolError::syntax(message).because(reason)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}
