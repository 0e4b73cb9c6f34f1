//! Why a workflow cannot be served as a chat service: [`ServeError`].

use nodekit_core::error::quoted;

/// Serving a workflow over HTTP ([`crate`]) cannot start, or a
/// message could not be answered to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address cannot be listened on.
    #[error("serve: cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A setting or credential the server needs is missing or unusable.
    #[error("serve: {problem}")]
    Setup {
        /// What is wrong and what to do (never a secret's value).
        problem: String,
    },
    /// The server stopped before a streamed answer was finished (the
    /// shutdown's grace period ran out).
    #[error("serve: the server is stopping; the answer was cut off: send the message again")]
    Stopping,
    /// The workflow has nothing to answer a chat message with.
    #[error("serve: workflow `{}` has no root node to run (such as an AI Agent)", quoted(.workflow))]
    NothingToServe {
        /// The workflow's name.
        workflow: String,
    },
}

impl From<ServeError> for nodekit_core::Error {
    fn from(e: ServeError) -> Self {
        nodekit_core::Error::other(e)
    }
}
