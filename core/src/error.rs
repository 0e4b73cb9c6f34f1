//! The one error type of the `nodekit` crate.

use crate::from_ai::{ArgumentsError, FromAiError};

mod agent;
mod catalog;
mod model;
mod param;
mod store;
mod vector_store;
mod workflow;

pub use agent::AgentError;
pub use catalog::CatalogError;
pub use model::{ModelError, ModelErrorKind};
pub use param::ParamError;
pub use store::{Backend, StoreError, StoreErrorKind};
pub use vector_store::VectorStoreError;
pub use workflow::WorkflowError;

/// Result with nodekit's [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in nodekit's runtime.
///
/// Messages name the node and the parameter path, show the offending value
/// (shortened), and say what was expected. They never contain credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A node's parameters do not fit its declaration.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The catalog has no such node, or two of one name.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A `$fromAI` expression in the parameters is malformed.
    #[error("node `{}`: {source}", quoted(.node))]
    FromAi {
        /// Node type or node name.
        node: String,
        /// What is wrong with the expression.
        source: FromAiError,
    },
    /// The arguments an LLM sent for a tool do not fit the tool's schema.
    #[error("{0}")]
    InvalidArguments(#[from] ArgumentsError),
    /// A message (stored or sent) cannot be read.
    #[error("invalid message: {reason}")]
    InvalidMessage {
        /// What is wrong, with the value.
        reason: String,
    },
    /// A node needs a credential the workflow did not provide.
    #[error(
        "node `{}` needs credentials of type `{credential}`; add them to the credentials file or environment",
        quoted(.node)
    )]
    MissingCredentials {
        /// The node.
        node: String,
        /// The credential type.
        credential: String,
    },
    /// A root node lacks a sub-node it needs.
    #[error("node `{}` needs {input} connected to it", quoted(.node))]
    MissingInput {
        /// The root node.
        node: String,
        /// What is missing.
        input: String,
    },
    /// A chat-history store refused a request (an invalid session id or
    /// table name, a message it cannot hold).
    #[error("{store}: {message}")]
    Store {
        /// Which store.
        store: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A chat history's database failed; the driver's error is the source
    /// ([`StoreError::kind`] tells a timeout from a lost connection).
    #[error(transparent)]
    Database(#[from] StoreError),
    /// A parameter uses an expression nodekit does not evaluate.
    #[error(
        "node `{}`: parameter `{}` uses an unsupported expression: {expression}; nodekit evaluates `$json` access and `$fromAI(...)` only",
        quoted(.node),
        quoted(.path)
    )]
    UnsupportedExpression {
        /// The node.
        node: String,
        /// The parameter path.
        path: String,
        /// The part that is not supported.
        expression: String,
    },
    /// A setting (an environment variable or a builder value) is invalid.
    #[error("setting `{name}` is {:?}, but it must be {expected}", quoted(.value))]
    InvalidSetting {
        /// The variable or builder method, e.g. `N8N_INSTANCE_AI_LAST_MESSAGES`.
        name: String,
        /// The value given, shortened.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A credential is present but cannot be used. The text never quotes
    /// the credential's values.
    #[error("the `{credential}` credential {problem}")]
    InvalidCredentials {
        /// The credential type, e.g. `postgres`.
        credential: String,
        /// What is wrong with it, e.g. `has no \`apiKey\``.
        problem: String,
    },
    /// A sub-node's model, memory or store failed while another node used
    /// it; the failure is the source.
    #[error("node `{}`: {source}", quoted(.node))]
    Node {
        /// The sub-node whose supply failed.
        node: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
    /// A node could not do its work (a refused request, a failed call).
    #[error("node `{}`: {message}", quoted(.node))]
    NodeFailed {
        /// The node.
        node: String,
        /// What went wrong.
        message: String,
    },
    /// A workflow export cannot be read or run as it is.
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
    /// The agent could not finish.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A chat model or embeddings call failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A vector store failed or refused a request.
    #[error(transparent)]
    VectorStore(#[from] VectorStoreError),
    /// A node used as a tool supplies something else, or nothing.
    #[error("node `{}` is not a tool: it supplies {supplies}", quoted(.node))]
    NotATool {
        /// The node.
        node: String,
        /// What it supplies instead: its connection type (e.g. `ai_memory`), or `nothing`.
        supplies: String,
    },
    /// A failure of a part built on the core, in its own error type: the
    /// SQL tools' `nodekit::sql::SqlToolError`, agent
    /// memory's, MCP's, `serve`'s, the n8n package's, or an outside
    /// crate's. [`Error::downcast_ref`] gives it back; its text and source
    /// are its own.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Text that should be JSON is not.
    #[error("{what} is not valid JSON: {source}")]
    Json {
        /// Which input, e.g. `--params`.
        what: String,
        /// The parser's message, with line and column.
        source: serde_json::Error,
    },
}

impl Error {
    /// `error`, a failure of a part built on the core ([`Error::Other`]).
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Other(Box::new(error))
    }

    /// The error of type `E` this is ([`Error::Other`]), if it is one.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            Error::Other(e) => e.downcast_ref(),
            _ => None,
        }
    }

    /// The model provider's error this is, also when a node carries it
    /// ([`Error::Node`]).
    pub fn model_error(&self) -> Option<&ModelError> {
        match self {
            Error::Model(e) => Some(e),
            Error::Node { source, .. } => source.model_error(),
            _ => None,
        }
    }

    /// The text a remote client of a server (`nodekit serve`, `nodekit mcp
    /// serve`) is shown: the error's own text, except that a model
    /// provider's message is left out (kind, HTTP status and error code
    /// stay). A provider may quote the client's input, and hiding a key
    /// inside text a client chooses would tell it which guesses are right;
    /// the whole text goes to the server's log instead.
    pub fn client_text(&self) -> String {
        match self {
            Error::Model(e) => e.without_message().to_string(),
            Error::Node { node, source } => {
                format!("node `{}`: {}", quoted(node), source.client_text())
            }
            other => other.to_string(),
        }
    }

    /// This error, said to have happened in node `node` unless it already
    /// names a node (or is not of the kinds a sub-node's use fails with).
    pub(crate) fn in_node(self, node: &str) -> Error {
        match self {
            Error::Model(_)
            | Error::Database(_)
            | Error::Store { .. }
            | Error::VectorStore(_)
            | Error::Other(_) => Error::Node {
                node: node.to_owned(),
                source: Box::new(self),
            },
            other => other,
        }
    }
}

/// Renders a JSON value for an error message: its kind and a shortened text.
pub fn describe_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    const MAX: usize = 60;
    let kind = match v {
        Value::Null => return "null".into(),
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} ({})", shorten(&v.to_string(), MAX))
}

/// How many characters of a name, path or value the user gave an error
/// message quotes: enough to recognise it, never a whole pasted document.
pub const QUOTE_MAX: usize = 200;

/// `s` cut to [`QUOTE_MAX`] characters, for quoting user input in a message.
pub fn quoted(s: &str) -> String {
    shorten(s, QUOTE_MAX)
}

/// A JSON parser's message with the value it quotes cut short, keeping
/// where the problem is: serde quotes a mistyped string whole.
pub fn quoted_json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&place) {
        Some(message) => format!("{}{place}", quoted(message)),
        None => quoted(&text),
    }
}

/// An error's text followed by its sources', joined with `: ` (reqwest's
/// own text alone is "error sending request").
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Cuts text to at most `max` characters, marking the cut with `…`.
pub fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_is_quoted_cut_short() {
        let long = "a".repeat(100_000);
        let unknown = |name: &str| {
            Error::from(CatalogError::UnknownNode {
                name: name.to_owned(),
                hint: String::new(),
            })
            .to_string()
        };
        assert_eq!(
            unknown(&long),
            format!("unknown node `{}…`", "a".repeat(QUOTE_MAX))
        );
        assert_eq!(
            unknown("memoryBufferWindo"),
            "unknown node `memoryBufferWindo`"
        );
        // serde quotes a mistyped string whole; the cut keeps where it is.
        let e = serde_json::from_str::<u32>(&format!("\"{long}\"")).unwrap_err();
        let text = quoted_json_error(&e);
        assert!(text.starts_with("invalid type: string \"aaa"), "{text}");
        assert!(text.ends_with("… at line 1 column 100002"), "{text}");
        assert!(text.len() < 300, "{text}");
    }
}
