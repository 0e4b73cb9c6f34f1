//! Agent memory: what an AI agent remembers about a user and a conversation,
//! in the manner of Mastra's `@mastra/memory`, with n8n's settings.
//!
//! # Tiers
//!
//! | tier | scope | stored in |
//! | --- | --- | --- |
//! | 1. storage | — | a SQLite file ([`store::DEFAULT_SQLITE_PATH`], WAL) or PostgreSQL |
//! | 2. recent messages | thread | `nodekit_am_messages`: one row per message, `seq` 1, 2, 3... per thread, the message in LangChain's stored form ([`Message::to_stored`](nodekit_core::message::Message::to_stored)), its token count computed once when written |
//! | 3. working memory | resource | `nodekit_am_working_memory`: one markdown text per resource, with a version that grows by one per update |
//! | 4. observational memory | thread | `nodekit_am_observations`: compressed history, by generation, each row covering the messages `first_seq..=last_seq`, buffered or active ([`observe`]) |
//! | 5. semantic recall | thread | `nodekit_am_embeddings`: one row per indexed message, and the database's vector index (sqlite-vec on SQLite, pgvector on PostgreSQL); searches run in memory over each thread's vectors, exactly up to [`recall::EXACT_LIMIT`] messages and through an HNSW graph past it ([`recall::resident`]) |
//! | 6. plans | thread | `nodekit_am_plans`: one JSON plan per thread |
//! | event history | thread | `nodekit_am_events`: kind + JSON payload, in order |
//!
//! Threads themselves live in `nodekit_am_threads` (owner, title, JSON
//! metadata, the last seq handed out).
//!
//! # Layers
//!
//! [`db`] opens and migrates the database and holds what every tier reads
//! (threads, messages). [`store`] (tiers 2, 3, 4, 6 and events) and
//! [`recall`] (tier 5) are both built on it and do not use each other:
//! `Store::new(db)` and `Recall::new(&db)` share one [`Db`], and
//! [`context`], [`agent`] and [`observe`] put them together.
//!
//! # Scoping
//!
//! Two keys, as in Mastra: the *resource* (the user) and the *thread* (one
//! conversation). Working memory belongs to a resource and is shared by all
//! its threads; everything else belongs to a thread, and a thread belongs to
//! exactly one resource, fixed by its first write. Every [`Store`] method
//! takes the resource id and every query filters on it
//! (`WHERE resource_id = ? AND thread_id = ?`), so no call can return another
//! resource's rows, even with a guessed thread id.
//!
//! - **Reads never create a thread.** Reading an unknown thread returns
//!   nothing (an empty list, `None`, 0) and claims nothing, and reading
//!   another resource's thread looks the same.
//! - **A thread is created by its first write** (an append, a plan, an
//!   event, a title). A write to another resource's thread is an
//!   [`AgentMemoryError::ThreadOwnership`], whose
//!   message never names the owner.
//! - **A deleted thread stays deleted.** Work derived from its messages
//!   that is still in flight (the observer's observations and reflections,
//!   recall's vectors) never creates a thread: it finds no thread, or no
//!   messages, and stores nothing.
//!
//! # Storage
//!
//! The schema is created and migrated when a store opens, by sqlx migrations
//! embedded in the binary (`migrations/{sqlite,postgres}` of this crate,
//! tracked in `_nodekit_am_migrations` so a host database's own sqlx
//! migrations are not disturbed). Both databases have the same tables and
//! behave the same; times are Unix milliseconds.
//!
//! On SQLite one connection writes and several read (WAL lets readers run
//! beside the writer); every write transaction starts with `BEGIN IMMEDIATE`
//! so writers in other processes queue on the busy timeout instead of failing
//! halfway through. `synchronous = FULL`: a write that returned `Ok` survives
//! a crash of the process and of the machine.

// Without a database feature (`sqlite`, `postgres`) the crate is empty.
#![cfg(any(feature = "sqlite", feature = "postgres"))]

pub mod agent;
pub mod config;
pub mod context;
pub mod db;
pub mod observe;
pub mod plan;
pub mod recall;
pub mod store;
pub mod working_memory;

mod error;
pub use agent::ThreadMemory;
pub use config::{MemoryConfig, Storage};
pub use context::{
    AssembleOptions, AssembledContext, ContextPart, PartKind, assemble, assemble_with,
};
pub use db::Db;
pub use error::AgentMemoryError;
pub use observe::Observer;
pub use recall::{IndexKind, Recall, RecallCache, RecallIndex, Recaller};
pub use store::{
    DEFAULT_SQLITE_PATH, Durability, Event, Observation, ObservationMarks, Store, StoredMessage,
    ThreadInfo, WorkingMemory,
};

/// Opens the store `config` names, creating or migrating its tables.
pub async fn open(config: &MemoryConfig) -> nodekit_core::Result<Store> {
    match &config.storage {
        #[cfg(feature = "sqlite")]
        Storage::Sqlite { path } => Store::open_sqlite(path).await,
        #[cfg(feature = "postgres")]
        Storage::Postgres { url, schema } => {
            let config: nodekit_db::postgres::PostgresConfig =
                url.parse()
                    .map_err(|_| nodekit_core::Error::InvalidSetting {
                        name: "PostgreSQL connection".into(),
                        value: "***".into(),
                        expected: "postgres://user:password@host:port/database".into(),
                    })?;
            let options = config.options()?;
            let pg = nodekit_db::postgres::Postgres::from_options(if schema.is_empty() {
                options
            } else {
                options.options([("search_path", schema.as_str())])
            });
            Store::postgres(&pg).await
        }
        #[allow(unreachable_patterns)]
        other => Err(nodekit_core::Error::InvalidSetting {
            name: "agent-memory storage".into(),
            value: match other {
                Storage::Sqlite { .. } => "SQLite".into(),
                Storage::Postgres { .. } => "PostgreSQL".into(),
            },
            expected: format!(
                "the database this program was built for ({}); the other needs the feature agent-memory-sqlite or agent-memory-postgres",
                if cfg!(feature = "sqlite") {
                    "SQLite"
                } else {
                    "PostgreSQL"
                }
            ),
        }),
    }
}
