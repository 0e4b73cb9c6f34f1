//! What agent memory's failures are: [`AgentMemoryError`].

use nodekit_core::error::StoreError;

/// Agent memory failed or refused a request. Messages never hold a
/// connection string or another resource's data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentMemoryError {
    /// The database failed (opening, migrating, a query); the driver's
    /// error is the source.
    #[error("agent memory: {0}")]
    Store(#[from] StoreError),
    /// A resource or thread id is empty, too long or holds a NUL.
    #[error("agent memory: the {kind} id {id:?} {problem}")]
    InvalidId {
        /// `resource` or `thread`.
        kind: &'static str,
        /// The id, shortened.
        id: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The thread does not exist (or belongs to another resource, which
    /// must look the same).
    #[error("agent memory: there is no thread `{thread}`")]
    NoThread {
        /// The thread id, shortened.
        thread: String,
    },
    /// A thread export does not fit; nothing was imported.
    #[error("agent memory: cannot import: {reason}; nothing was imported")]
    Import {
        /// What does not fit, and where.
        reason: String,
    },
    /// Semantic recall cannot index or search (an embedder's answer that
    /// does not fit, vectors of another dimension, a stopped indexer).
    #[error("agent memory: semantic recall: {reason}")]
    Recall {
        /// What is wrong.
        reason: String,
    },
    /// The observer or reflector could not use its model's answer, or its
    /// work was overtaken by another run's.
    #[error("agent memory: {reason}")]
    Observation {
        /// What is wrong.
        reason: String,
    },
    /// A thread was named with a resource it does not belong to. The owner
    /// is deliberately not named: resources must not learn about each other.
    #[error("agent memory: thread `{thread}` does not belong to resource `{resource}`")]
    ThreadOwnership {
        /// The thread id the caller gave.
        thread: String,
        /// The resource the caller gave (not the owner).
        resource: String,
    },
    /// A working-memory update expected another version than the stored one
    /// (optimistic concurrency: reread and retry).
    #[error(
        "agent memory: working memory of resource `{resource}` is at version {actual}, not the expected {expected}; reread it and retry"
    )]
    WorkingMemoryConflict {
        /// The resource.
        resource: String,
        /// The version the caller expected.
        expected: i64,
        /// The stored version (0: none yet).
        actual: i64,
    },
    /// A setting of the store is invalid (e.g. an unreadable connection URL).
    #[error("agent memory: {reason}")]
    Setting {
        /// What is wrong; never the URL itself.
        reason: String,
    },
}

impl AgentMemoryError {
    /// The database's failure under this error, if it is one.
    pub fn store_error(&self) -> Option<&StoreError> {
        match self {
            AgentMemoryError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AgentMemoryError> for nodekit_core::Error {
    fn from(e: AgentMemoryError) -> Self {
        nodekit_core::Error::other(e)
    }
}
