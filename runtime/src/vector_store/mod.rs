//! Vector stores: the [`VectorStore`] trait, [`DocumentStore`], filters
//! and the in-process store (from `nodekit-core`, where the whole story
//! is told), and the stores on SQLite (sqlite-vec) and PostgreSQL
//! (pgvector, n8n's layout) from `nodekit-vector-stores`.

pub use nodekit_core::vector_store::*;

#[cfg(feature = "vector-store-postgres")]
pub use nodekit_vector_stores::pgvector;
#[cfg(feature = "vector-store-sqlite")]
pub use nodekit_vector_stores::sqlite;
