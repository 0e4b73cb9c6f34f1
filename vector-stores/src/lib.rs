//! nodekit's persistent vector stores, behind nodekit-core's
//! [`VectorStore`](nodekit_core::vector_store::VectorStore) trait:
//!
//! - [`sqlite::SqliteVectorStore`] (feature `sqlite`): a SQLite file, by
//!   collection, vectors in sqlite-vec's format;
//! - [`pgvector::PgVectorStore`] (feature `postgres`): PostgreSQL with
//!   pgvector, in n8n's PGVector table layout.
//!
//! Users reach them through `nodekit` (features `vector-store-sqlite`,
//! `vector-store-postgres`), as `nodekit::vector_store::sqlite` and
//! `nodekit::vector_store::pgvector`.

#[cfg(feature = "postgres")]
pub mod pgvector;
#[cfg(feature = "sqlite")]
pub mod sqlite;
