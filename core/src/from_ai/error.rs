//! Error types; the leading sentence of each `$fromAI` message is n8n's own text so
//! people who know n8n recognise it, followed by a hint on how to fix the input.

use std::fmt;

/// Longest piece of user text quoted back in an error, so a 1 MiB parameter does
/// not produce a 1 MiB error message.
const MAX_QUOTED_CHARS: usize = 500;

/// Error raised while parsing, collecting or substituting `$fromAI` calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FromAiError {
    /// The third argument is not one of `string`, `number`, `boolean`, `json`.
    #[error(
        "Failed to parse $fromAI arguments: {}: Error: Invalid type: {ty}{}. Use one of: string, number, boolean, json",
        quote(.args),
        at(.path)
    )]
    InvalidType {
        /// Parameter path (`a.b[0]`), empty for a bare string.
        path: String,
        /// The text between the call's parentheses.
        args: String,
        /// The type as written.
        ty: String,
    },
    /// A `$fromAI(` without its closing parenthesis.
    #[error(
        "Unbalanced parentheses while parsing $fromAI call: {}{}. Close the call with `)` and check that every quote is closed",
        quote(.text),
        at(.path)
    )]
    UnbalancedParentheses {
        /// Parameter path, empty for a bare string.
        path: String,
        /// The text from the first argument to the end of the string.
        text: String,
    },
    /// `$fromAI()` with an empty first argument.
    #[error(
        "You must specify a key when using $fromAI(){}. Invalid parameter key, must be between 1 and 64 characters long and only contain letters, numbers, underscores, and hyphens",
        at(.path)
    )]
    MissingKey {
        /// Parameter path, empty for a bare string.
        path: String,
    },
    /// The key does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error(
        "Parameter key `{}` is invalid{}. Invalid parameter key, must be between 1 and 64 characters long and only contain letters, numbers, underscores, and hyphens",
        quote(.key),
        at(.path)
    )]
    InvalidKey {
        /// Parameter path, empty for a bare string.
        path: String,
        /// The offending key.
        key: String,
    },
    /// A key n8n refuses at run time because it names a JavaScript object internal.
    #[error(
        "Invalid parameter key `{key}`{}: n8n reserves this name (it resolves to a JavaScript object internal). Rename the $fromAI key",
        at(.path)
    )]
    ReservedKey {
        /// Parameter path.
        path: String,
        /// The reserved key, e.g. `constructor`.
        key: String,
    },
    /// The same key used twice with a different description or type.
    #[error(
        "Duplicate key '{key}' found with different description or type (first in parameter `{first_path}`, again in parameter `{path}`). Ensure all $fromAI() calls with the same key have consistent descriptions and types"
    )]
    DuplicateKey {
        /// The duplicated key.
        key: String,
        /// Where the key was first defined.
        first_path: String,
        /// Where the conflicting definition is.
        path: String,
    },
    /// A `{{ }}` block that is not exactly one `$fromAI(...)` call with literal arguments.
    #[error(
        "Unsupported expression in parameter `{path}`: {{{{{}}}}}: {reason}. Only `{{{{ $fromAI('key', 'description', 'type', default) }}}}` with literal arguments can be resolved; JavaScript expressions are not evaluated"
    , quote(.expression))]
    UnsupportedExpression {
        /// Parameter path.
        path: String,
        /// The code between `{{` and `}}`.
        expression: String,
        /// Why it was rejected.
        reason: String,
    },
    /// Parameter JSON nested deeper than the limit.
    #[error(
        "Parameter JSON is nested more than {limit} levels deep at `{path}`. Flatten the parameters; deeper nesting is refused to protect the stack"
    )]
    TooDeep {
        /// Path of the first value beyond the limit.
        path: String,
        /// The nesting limit.
        limit: usize,
    },
    /// A string longer than the parser accepts.
    #[error(
        "Parameter text is {len} bytes{}, more than the {limit} bytes $fromAI parsing accepts. Shorten the value",
        at(.path)
    )]
    TooLong {
        /// Parameter path, empty for a bare string.
        path: String,
        /// Length in bytes.
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// `$fromAI(` calls nested so deeply in one string that parsing would be quadratic.
    #[error(
        "Too many nested $fromAI( calls in one value{}: parsing would rescan the text more than {factor} times. Do not nest $fromAI calls inside each other's arguments"
    , at(.path))]
    TooComplex {
        /// Parameter path, empty for a bare string.
        path: String,
        /// How many times the text may be rescanned.
        factor: usize,
    },
    /// The LLM's arguments do not match the schema.
    #[error(transparent)]
    InvalidArguments(#[from] ArgumentsError),
}

/// Error from `FromAiType::from_str` for a name that is not one of the four types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid type: {0}. Use one of: string, number, boolean, json")]
pub struct ParseTypeError(pub String);

/// One thing wrong with the LLM's arguments, located by JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentProblem {
    /// JSON pointer into the arguments (`/limit`), `/` for the whole object.
    pub path: String,
    /// What is wrong, e.g. `"ten" is not of type "number"`.
    pub message: String,
}

/// Arguments rejected by the schema; `Display` is written for an LLM to correct its call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ArgumentsError {
    /// Every problem found, in validation order.
    pub problems: Vec<ArgumentProblem>,
    /// Human-readable summary of the expected arguments.
    pub expected: String,
}

impl fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "The tool arguments are invalid. Fix every problem below and call the tool again."
        )?;
        writeln!(f, "Problems:")?;
        for p in &self.problems {
            writeln!(f, "- {}: {}", p.path, p.message)?;
        }
        f.write_str(&self.expected)
    }
}

/// Suffix naming the parameter, empty when parsing a bare string.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" (in parameter `{path}`)")
    }
}

/// Quotes user text back, shortened so error messages stay readable.
pub(crate) fn quote(text: &str) -> String {
    truncate_chars(text, MAX_QUOTED_CHARS)
}

/// Cuts `text` to `max` characters on a character boundary, saying how much was dropped.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}… ({rest} more characters)", &text[..cut])
        }
    }
}
