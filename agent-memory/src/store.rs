//! The storage tier: threads, messages, working memory, observations, plans,
//! events and embeddings in SQLite or PostgreSQL, scoped by resource and
//! thread (see the [module docs](super)).

#[cfg(feature = "sqlite")]
use std::path::Path;

#[cfg(feature = "postgres")]
use nodekit_db::postgres::Postgres;
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "sqlite")]
use serde_json::json;
#[cfg(feature = "sqlite")]
use sqlx::sqlite::SqlitePool;
use sqlx::types::Json;
use sqlx::{ColumnIndex, Decode, Row, Type};

use super::AgentMemoryError;
#[cfg(feature = "sqlite")]
use super::db::Pools;
pub use super::db::{
    Backend, DEFAULT_SQLITE_PATH, Db, Durability, MAX_ID_CHARS, StoredMessage, ThreadInfo,
};
use super::db::{
    check_id, db_err, in_write_tx, no_thread, now_ms, on_reader, ownership, thread_from_row,
};
use nodekit_core::error::{Error, Result, shorten};
use nodekit_core::memory::langchain::Tokenizer;
use nodekit_core::message::{Message, Role};

/// Tokens added to every message's count for the role and the framing a chat
/// API wraps around it (OpenAI's cookbook counts 3 to 4): the observer's
/// thresholds are about what a model receives, not the bare text.
pub const MESSAGE_OVERHEAD_TOKENS: i64 = 4;

/// The agent-memory store. Cheap to clone (the pools are shared).
///
/// ```
/// use nodekit::agent_memory::Store;
/// use nodekit::message::Message;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// let path = std::env::temp_dir().join(format!("nodekit-docs-{}.db", std::process::id()));
/// let store = Store::open_sqlite(&path).await?;
/// // A thread belongs to one resource (user); naming it with another is refused.
/// store.append("ada", "t1", &[Message::human("Hi"), Message::ai("Hello!")]).await?;
/// let recent = store.recent("ada", "t1", 10).await?;
/// assert_eq!(recent.len(), 2);
/// assert_eq!(recent[1].message.text(), "Hello!");
/// // Another resource reads nothing there, and cannot write there.
/// assert!(store.recent("bob", "t1", 10).await?.is_empty());
/// assert!(store.append("bob", "t1", &[Message::human("Hi")]).await.is_err());
/// store.close().await;
/// # std::fs::remove_file(&path).ok();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Store {
    db: Db,
    tokenizer: Tokenizer,
}

/// A resource's working memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingMemory {
    /// The markdown text.
    pub content: String,
    /// 1 after the first update, then one more per update.
    pub version: i64,
    /// Last update, Unix milliseconds.
    pub updated_at: i64,
}

/// One observation of the observational tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// Row id.
    #[serde(skip)]
    pub id: i64,
    /// The generation: 0 until the first reflection; the reflector writes
    /// generation + 1, and observations made after it join that generation.
    pub generation: i64,
    /// The observation text.
    pub content: String,
    /// Tokens of `content`, counted when written.
    pub token_count: i64,
    /// First message seq it covers.
    pub first_seq: i64,
    /// Last message seq it covers.
    pub last_seq: i64,
    /// When it was written, Unix milliseconds.
    pub created_at: i64,
    /// Computed ahead in the background and not yet part of the observation
    /// block (async buffering); activated when the observer's (or, for a
    /// buffered reflection, the reflector's) threshold is crossed.
    #[serde(default)]
    pub buffered: bool,
}

/// The `buffered` column of `nodekit_am_observations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    /// Part of its generation (shown when that generation is the newest).
    Active = 0,
    /// An observation computed ahead ([`Store::add_buffered_observation`]).
    Buffered = 1,
    /// A reflection computed ahead ([`Store::add_buffered_reflection`]).
    BufferedReflection = 2,
}

/// Where a thread's observations stand ([`Store::observation_marks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObservationMarks {
    /// The last message seq an active observation covers (0: none).
    pub observed_through: i64,
    /// The last message seq any observation covers, buffered ones included.
    pub covered_through: i64,
    /// The newest active generation.
    pub generation: i64,
    /// Whether a reflection of that generation, computed ahead, waits for
    /// [`Store::activate_reflection`].
    pub reflection_buffered: bool,
}

/// One entry of a thread's event history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Row id (increasing).
    #[serde(skip)]
    pub id: i64,
    /// What happened, e.g. `tool_call` or `plan_updated`.
    pub kind: String,
    /// Details.
    pub payload: Value,
    /// When, Unix milliseconds.
    pub created_at: i64,
}

/// Inside a write transaction: creates the thread for `resource` if it does
/// not exist, checks it belongs to `resource`, adds `add` to its `last_seq`
/// and returns the new `last_seq`. The UPDATE takes the thread row's lock on
/// PostgreSQL, so appends to one thread queue here and seqs never collide.
macro_rules! claim_thread {
    ($tx:ident, $resource:expr, $thread:expr, $now:expr, $add:expr) => {{
        // One statement: creates the thread or adds to its last seq, and
        // answers nothing when it belongs to another resource.
        let row = sqlx::query(
            "INSERT INTO nodekit_am_threads (id, resource_id, last_seq, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (id) DO UPDATE
               SET last_seq = nodekit_am_threads.last_seq + excluded.last_seq,
                   updated_at = excluded.updated_at
               WHERE nodekit_am_threads.resource_id = excluded.resource_id
             RETURNING last_seq",
        )
        .bind($thread)
        .bind($resource)
        .bind($add)
        .bind($now)
        .fetch_optional(&mut *$tx)
        .await
        .map_err(db_err)?;
        match row {
            Some(row) => row.try_get::<i64, _>("last_seq").map_err(db_err)?,
            None => return Err(ownership($resource, $thread)),
        }
    }};
}

/// Inside a write transaction: the `last_seq` of the thread if it exists for
/// `resource` (its `updated_at` set to `$now`, which takes the row's lock on
/// PostgreSQL), `None` if there is no such thread; an ownership error if it
/// belongs to another resource. For writes derived from a thread's messages
/// (observations, reflections): they never create a thread, so one deleted
/// while they were being computed stays deleted.
macro_rules! existing_thread {
    ($tx:ident, $resource:expr, $thread:expr, $now:expr) => {{
        let last: Option<i64> = sqlx::query_scalar(
            "UPDATE nodekit_am_threads SET updated_at = $3 WHERE id = $1 AND resource_id = $2 RETURNING last_seq",
        )
        .bind($thread)
        .bind($resource)
        .bind($now)
        .fetch_optional(&mut *$tx)
        .await
        .map_err(db_err)?;
        if last.is_none() {
            let owner: Option<String> = sqlx::query_scalar("SELECT resource_id FROM nodekit_am_threads WHERE id = $1")
                .bind($thread)
                .fetch_optional(&mut *$tx)
                .await
                .map_err(db_err)?;
            if owner.is_some() {
                return Err(ownership($resource, $thread));
            }
        }
        last
    }};
}

/// Inside a transaction: deletes the thread's buffered reflection.
macro_rules! drop_waiting_reflection {
    ($tx:ident, $resource:expr, $thread:expr) => {
        sqlx::query(
            "DELETE FROM nodekit_am_observations WHERE thread_id = $1 AND resource_id = $2 AND buffered = 2",
        )
        .bind($thread)
        .bind($resource)
        .execute(&mut *$tx)
        .await
        .map_err(db_err)?
    };
}

/// Inside a transaction: the active observations of generation `$from`
/// covering messages after `$last_seq` (made after a reflection read its
/// input) move to generation `$to`, after the reflection.
macro_rules! move_after_reflection {
    ($tx:ident, $resource:expr, $thread:expr, $from:expr, $to:expr, $last_seq:expr) => {
        sqlx::query(
            "UPDATE nodekit_am_observations SET generation = $3
             WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0 AND generation = $4 AND first_seq > $5",
        )
        .bind($thread)
        .bind($resource)
        .bind($to)
        .bind($from)
        .bind($last_seq)
        .execute(&mut *$tx)
        .await
        .map_err(db_err)?
    };
}

/// Inside a transaction: the thread's newest active observation generation.
macro_rules! newest_generation {
    ($tx:ident, $resource:expr, $thread:expr) => {{
        let g: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(MAX(generation), 0) AS BIGINT) FROM nodekit_am_observations
             WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0",
        )
        .bind($thread)
        .bind($resource)
        .fetch_one(&mut *$tx)
        .await
        .map_err(db_err)?;
        g
    }};
}

fn observation_from_row<R>(row: &R) -> Result<Observation>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(Observation {
        id: row.try_get("id").map_err(db_err)?,
        generation: row.try_get("generation").map_err(db_err)?,
        content: row.try_get("content").map_err(db_err)?,
        token_count: row.try_get("token_count").map_err(db_err)?,
        first_seq: row.try_get("first_seq").map_err(db_err)?,
        last_seq: row.try_get("last_seq").map_err(db_err)?,
        created_at: row.try_get("created_at").map_err(db_err)?,
        buffered: row.try_get::<i64, _>("buffered").map_err(db_err)? != 0,
    })
}

fn event_from_row<R>(row: &R) -> Result<Event>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Json<Value>: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(Event {
        id: row.try_get("id").map_err(db_err)?,
        kind: row.try_get("kind").map_err(db_err)?,
        payload: row.try_get::<Json<Value>, _>("payload").map_err(db_err)?.0,
        created_at: row.try_get("created_at").map_err(db_err)?,
    })
}

fn wm_from_row<R>(row: &R) -> Result<WorkingMemory>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(WorkingMemory {
        content: row.try_get("content").map_err(db_err)?,
        version: row.try_get("version").map_err(db_err)?,
        updated_at: row.try_get("updated_at").map_err(db_err)?,
    })
}

/// Tokens of a message as a model receives it: its text, the names and
/// arguments of its tool calls, and [`MESSAGE_OVERHEAD_TOKENS`]. Images are
/// not counted (providers price them separately).
pub fn message_tokens(tokenizer: Tokenizer, message: &Message) -> i64 {
    let mut n = tokenizer.count(&message.text());
    for call in &message.tool_calls {
        n += tokenizer.count(&call.name) + tokenizer.count(&call.args.to_string());
    }
    i64::try_from(n)
        .unwrap_or(i64::MAX)
        .saturating_add(MESSAGE_OVERHEAD_TOKENS)
}

impl Store {
    #[cfg(feature = "sqlite")]
    /// Opens (creating if needed) the SQLite file at `path` in WAL mode with
    /// a busy timeout, one writing and four reading connections, and
    /// migrates it; writes survive a power loss ([`Durability::PowerLoss`]).
    pub async fn open_sqlite(path: impl AsRef<Path>) -> Result<Store> {
        Self::open_sqlite_with(path, Durability::PowerLoss).await
    }

    #[cfg(feature = "sqlite")]
    /// [`Store::open_sqlite`] with the durability of its writes chosen.
    pub async fn open_sqlite_with(path: impl AsRef<Path>, durability: Durability) -> Result<Store> {
        Ok(Self::new(Db::open_sqlite(path, durability).await?))
    }

    #[cfg(feature = "sqlite")]
    /// Uses one existing SQLite pool for reads and writes (tests, in-memory
    /// databases); migrates it. Give it WAL mode and a busy timeout yourself.
    pub async fn from_sqlite_pool(pool: SqlitePool) -> Result<Store> {
        Self::from_sqlite_pools(pool.clone(), pool).await
    }

    #[cfg(feature = "sqlite")]
    /// Uses existing SQLite pools ([`Db::from_sqlite_pools`]).
    pub async fn from_sqlite_pools(read: SqlitePool, write: SqlitePool) -> Result<Store> {
        Ok(Self::new(Db::from_sqlite_pools(read, write).await?))
    }

    #[cfg(feature = "postgres")]
    /// The store in `pg`'s database; connects and migrates
    /// ([`Db::postgres`]).
    pub async fn postgres(pg: &Postgres) -> Result<Store> {
        Ok(Self::new(Db::postgres(pg).await?))
    }

    /// The store on an opened database.
    pub fn new(db: Db) -> Store {
        Store {
            db,
            tokenizer: Tokenizer::Cl100kBase,
        }
    }

    /// This store counting tokens with `tokenizer` (default `cl100k_base`).
    pub fn with_tokenizer(mut self, tokenizer: Tokenizer) -> Store {
        self.tokenizer = tokenizer;
        self
    }

    /// The tokenizer messages are counted with.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// The database under this store (semantic recall is built on it:
    /// [`Recall::new`](super::recall::Recall::new)).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Which database this store uses.
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Closes the pools, waiting for open connections to finish.
    pub async fn close(&self) {
        self.db.close().await;
    }
}

// The store's methods, by what they work on. Declared after the macros
// above, which they use.
mod messages;
mod observations;
mod resource;
mod threads;
mod transfer;

#[cfg(all(test, feature = "sqlite"))]
mod tests;
