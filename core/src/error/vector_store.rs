//! What vector stores' failures are: [`VectorStoreError`].

use super::StoreError;

/// A vector store failed or refused a request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VectorStoreError {
    /// The database failed; the driver's error is the source.
    #[error("vector store: {0}")]
    Store(#[from] StoreError),
    /// A vector's length is not the store's dimension: insert and search
    /// with the embedding model the store was filled with.
    #[error(
        "vector store: the store holds {expected}-dimension vectors, but {what} has {found}: \
         insert and search with the embedding model the store was filled with"
    )]
    Dimensions {
        /// The store's dimension.
        expected: usize,
        /// The length found.
        found: usize,
        /// Which vector, e.g. `a vector` or `the query's vector`.
        what: String,
    },
    /// A request the store cannot carry out (an empty query, a filter on a
    /// key no document has, an invalid name), or a failure of its
    /// in-process index; the text says what to do.
    #[error("vector store: {reason}")]
    Refused {
        /// What is wrong, and what to do.
        reason: String,
    },
}
