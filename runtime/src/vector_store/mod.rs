//! Vector stores: the [`VectorStore`] trait, [`DocumentStore`], filters
//! and the in-process store (from `nodekit-core`, where the whole story
//! is told), and the stores on SQLite (sqlite-vec) and PostgreSQL
//! (pgvector, n8n's layout).

pub use nodekit_core::vector_store::*;

#[cfg(feature = "vector-store-postgres")]
pub mod pgvector;
#[cfg(feature = "vector-store-sqlite")]
pub mod sqlite;
