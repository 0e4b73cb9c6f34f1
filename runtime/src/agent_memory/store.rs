//! The storage tier: threads, messages, working memory, observations, plans,
//! events and embeddings in SQLite or PostgreSQL, scoped by resource and
//! thread (see the [module docs](super)).

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use sqlx::types::Json;
use sqlx::{ColumnIndex, Decode, Row, SqlSafeStr, Type};

use super::recall::RecallIndex;
use super::recall::resident::{Cache, RecallCache};
use crate::error::{Error, Result, shorten};
use crate::memory::langchain::Tokenizer;
use crate::message::{Message, Role};

/// The SQLite file used when nothing else is configured (n8n's
/// `file:instance-ai-memory.db`), relative to the working directory.
pub const DEFAULT_SQLITE_PATH: &str = "instance-ai-memory.db";

/// Longest resource or thread id accepted, in characters.
pub const MAX_ID_CHARS: usize = 255;

/// Tokens added to every message's count for the role and the framing a chat
/// API wraps around it (OpenAI's cookbook counts 3 to 4): the observer's
/// thresholds are about what a model receives, not the bare text.
pub const MESSAGE_OVERHEAD_TOKENS: i64 = 4;

/// How long a SQLite writer waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How far back [`Store::recent`] looks for the tool call of a tool result at
/// the start of its window before giving up on it (messages).
const MAX_TOOL_CALL_LOOKBACK: i64 = 1000;

/// The table sqlx records applied migrations in: not `_sqlx_migrations`, so
/// a host database that runs its own sqlx migrations is left alone.
const MIGRATIONS_TABLE: &str = "_nodekit_am_migrations";

const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/agent_memory/sqlite/0001_init.sql"),
    ),
    (
        2,
        "observations_buffer",
        include_str!("../../migrations/agent_memory/sqlite/0002_observations_buffer.sql"),
    ),
    (
        3,
        "recall",
        include_str!("../../migrations/agent_memory/sqlite/0003_recall.sql"),
    ),
];
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/agent_memory/postgres/0001_init.sql"),
    ),
    (
        2,
        "observations_buffer",
        include_str!("../../migrations/agent_memory/postgres/0002_observations_buffer.sql"),
    ),
    (
        3,
        "recall",
        include_str!("../../migrations/agent_memory/postgres/0003_recall.sql"),
    ),
    (
        4,
        "embeddings_order",
        include_str!("../../migrations/agent_memory/postgres/0004_embeddings_order.sql"),
    ),
];

/// The embedded migrations for one database (the workspace's sqlx has no
/// `macros` feature, so no `sqlx::migrate!`).
fn migrator(migrations: &[(i64, &'static str, &'static str)]) -> Migrator {
    let list = migrations
        .iter()
        .map(|&(version, description, sql)| {
            Migration::new(
                version,
                description.into(),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        })
        .collect();
    let mut m = Migrator::with_migrations(list);
    m.dangerous_set_table_name(MIGRATIONS_TABLE);
    m
}

/// Which database a [`Store`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

#[derive(Debug)]
enum Db {
    /// `write` has one connection: SQLite allows one writer at a time, and
    /// queueing in the pool is cheaper than spinning on `SQLITE_BUSY`.
    Sqlite {
        read: SqlitePool,
        write: SqlitePool,
        durability: Durability,
    },
    Postgres(PgPool),
}

/// The pools of a [`Store`], for the sibling modules (semantic recall).
pub(crate) enum Pools<'a> {
    Sqlite {
        read: &'a SqlitePool,
        write: &'a SqlitePool,
        durability: Durability,
    },
    Postgres(&'a PgPool),
}

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
    db: Arc<Db>,
    tokenizer: Tokenizer,
    cache: Arc<Cache>,
    /// The recall index once known: it never changes afterwards.
    recall_index: Arc<OnceLock<RecallIndex>>,
    /// Longest thread searched exactly by semantic recall.
    exact_limit: i64,
}

/// One thread (conversation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    /// The thread id.
    pub id: String,
    /// The resource (user) it belongs to.
    pub resource_id: String,
    /// A title, if one was set.
    #[serde(default)]
    pub title: Option<String>,
    /// Free JSON metadata (for example an agent's iteration log).
    #[serde(default = "empty_object")]
    pub metadata: Value,
    /// The last message seq handed out (0: none yet).
    #[serde(default)]
    pub last_seq: i64,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Last write to the thread, Unix milliseconds.
    pub updated_at: i64,
}

fn empty_object() -> Value {
    json!({})
}

/// A message as stored: its place in the thread and its token count.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Row id, unique in the database (embeddings refer to it).
    pub id: i64,
    /// The thread.
    pub thread_id: String,
    /// Position in the thread: 1, 2, 3... without gaps.
    pub seq: i64,
    /// The message.
    pub message: Message,
    /// Tokens, counted once when the message was written.
    pub token_count: i64,
    /// When it was written, Unix milliseconds.
    pub created_at: i64,
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

fn db_err(e: impl std::fmt::Display) -> Error {
    Error::AgentMemory {
        what: e.to_string(),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Checks a resource or thread id: ids are bound as parameters, so any text
/// is safe; these limits keep keys sane and error messages short.
pub(crate) fn check_id(kind: &str, id: &str) -> Result<()> {
    let problem = if id.is_empty() {
        "is empty"
    } else if id.chars().count() > MAX_ID_CHARS {
        "is longer than 255 characters"
    } else if id.contains('\0') {
        "contains a NUL character"
    } else {
        return Ok(());
    };
    Err(Error::AgentMemory {
        what: format!("the {kind} id {:?} {problem}", shorten(id, 60)),
    })
}

fn ownership(resource: &str, thread: &str) -> Error {
    Error::ThreadOwnership {
        thread: shorten(thread, 80),
        resource: shorten(resource, 80),
    }
}

/// The error for a thread that does not exist, or belongs to another
/// resource where that must look the same.
fn no_thread(thread: &str) -> Error {
    Error::AgentMemory {
        what: format!("there is no thread `{}`", shorten(thread, 80)),
    }
}

/// Runs `$body` with `$pool` bound to the reading pool of either database.
/// A macro rather than generic code: each arm is type-checked for its own
/// database, which spares a wall of sqlx trait bounds.
macro_rules! on_reader {
    ($store:expr, $pool:ident => $body:expr) => {
        match &*$store.db {
            Db::Sqlite { read: $pool, .. } => $body,
            Db::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` with `$tx` bound to a write transaction (`BEGIN IMMEDIATE`
/// on SQLite: take the write lock first, so the transaction never has to
/// upgrade a read lock, which fails at once when another process wrote).
macro_rules! in_write_tx {
    ($store:expr, $tx:ident => $body:expr) => {
        match &*$store.db {
            Db::Sqlite { write, .. } => {
                #[allow(unused_mut)]
                let mut $tx = write.begin_with("BEGIN IMMEDIATE").await.map_err(db_err)?;
                $body
            }
            Db::Postgres(pool) => {
                #[allow(unused_mut)]
                let mut $tx = pool.begin().await.map_err(db_err)?;
                $body
            }
        }
    };
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

fn thread_from_row<R>(row: &R) -> Result<ThreadInfo>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Json<Value>: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(ThreadInfo {
        id: row.try_get("id").map_err(db_err)?,
        resource_id: row.try_get("resource_id").map_err(db_err)?,
        title: row.try_get("title").map_err(db_err)?,
        metadata: row.try_get::<Json<Value>, _>("metadata").map_err(db_err)?.0,
        last_seq: row.try_get("last_seq").map_err(db_err)?,
        created_at: row.try_get("created_at").map_err(db_err)?,
        updated_at: row.try_get("updated_at").map_err(db_err)?,
    })
}

/// A message row with its stored JSON as written (exports keep it verbatim).
struct RawMessage {
    id: i64,
    thread_id: String,
    seq: i64,
    content: Value,
    token_count: i64,
    created_at: i64,
}

fn raw_from_row<R>(row: &R) -> Result<RawMessage>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Json<Value>: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(RawMessage {
        id: row.try_get("id").map_err(db_err)?,
        thread_id: row.try_get("thread_id").map_err(db_err)?,
        seq: row.try_get("seq").map_err(db_err)?,
        content: row.try_get::<Json<Value>, _>("content").map_err(db_err)?.0,
        token_count: row.try_get("token_count").map_err(db_err)?,
        created_at: row.try_get("created_at").map_err(db_err)?,
    })
}

impl RawMessage {
    /// The decoded message; a row that cannot be read is skipped with a
    /// warning (as the chat histories do) so one bad row does not make the
    /// whole thread unusable.
    fn decode(self) -> Option<StoredMessage> {
        match Message::from_stored(&self.content) {
            Ok(message) => Some(StoredMessage {
                id: self.id,
                thread_id: self.thread_id,
                seq: self.seq,
                message,
                token_count: self.token_count,
                created_at: self.created_at,
            }),
            Err(e) => {
                tracing::warn!(id = self.id, seq = self.seq, error = %e, "skipping an agent-memory message that cannot be read");
                None
            }
        }
    }
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

/// Tool results in `window` (oldest first) whose tool call is not in it.
/// `any` is set for leading results without a call id (legacy function
/// results), which belong to the nearest AI message before them.
fn unmatched_results(window: &[StoredMessage]) -> (HashSet<String>, bool) {
    let mut calls = HashSet::new();
    let mut missing = HashSet::new();
    let mut any = false;
    let mut seen_ai = false;
    for m in window {
        match m.message.role {
            Role::Ai => {
                seen_ai = true;
                calls.extend(m.message.tool_calls.iter().map(|c| c.id.clone()));
            }
            Role::Tool | Role::Function => match &m.message.tool_call_id {
                Some(id) if !calls.contains(id) => {
                    missing.insert(id.clone());
                }
                Some(_) => {}
                None if !seen_ai => any = true,
                None => {}
            },
            _ => {}
        }
    }
    (missing, any)
}

/// What a SQLite store's acknowledged write survives. Both keep the
/// database consistent after any crash; they differ in whether the last
/// writes before a power loss are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// WAL mode with `synchronous = FULL`: each commit reaches the disk
    /// (`fsync`) before it is acknowledged, so an acknowledged message
    /// survives the process being killed (`kill -9`) and a power loss or
    /// operating-system crash. The default.
    #[default]
    PowerLoss,
    /// WAL mode with `synchronous = NORMAL`: commits reach the operating
    /// system, not the disk, so an acknowledged message survives the
    /// process being killed, but the last ones before a power loss or
    /// operating-system crash may be lost. Saves one `fsync` a write
    /// (0.2 to 0.35 ms on the benchmark machine). Mastra's LibSQL store
    /// runs this way.
    ProcessCrash,
}

impl Durability {
    fn synchronous(self) -> SqliteSynchronous {
        match self {
            Durability::PowerLoss => SqliteSynchronous::Full,
            Durability::ProcessCrash => SqliteSynchronous::Normal,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` in WAL mode with
    /// a busy timeout, one writing and four reading connections, and
    /// migrates it; writes survive a power loss ([`Durability::PowerLoss`]).
    pub async fn open_sqlite(path: impl AsRef<Path>) -> Result<Store> {
        Self::open_sqlite_with(path, Durability::PowerLoss).await
    }

    /// [`Store::open_sqlite`] with the durability of its writes chosen.
    pub async fn open_sqlite_with(path: impl AsRef<Path>, durability: Durability) -> Result<Store> {
        super::recall::register_sqlite_vec();
        let path = path.as_ref();
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(durability.synchronous())
            .busy_timeout(BUSY_TIMEOUT);
        let cannot = |e: sqlx::Error| Error::AgentMemory {
            what: format!("cannot open {}: {e}", path.display()),
        };
        let write = crate::sqlite::pool_options(1)
            .acquire_timeout(BUSY_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(cannot)?;
        // Migrate before the readers connect: the file then has its schema.
        Self::migrate_sqlite(&write).await?;
        let read = crate::sqlite::pool_options(4)
            .connect_with(options)
            .await
            .map_err(cannot)?;
        // The same file by any path: one recall cache.
        let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Self::new(Db::Sqlite {
            read,
            write,
            durability,
        })
        .with_shared_cache(format!("sqlite:{}", identity.display())))
    }

    /// Uses one existing SQLite pool for reads and writes (tests, in-memory
    /// databases); migrates it. Give it WAL mode and a busy timeout yourself.
    pub async fn from_sqlite_pool(pool: SqlitePool) -> Result<Store> {
        Self::from_sqlite_pools(pool.clone(), pool).await
    }

    /// Uses existing SQLite pools, `write` ideally with one connection; migrates.
    /// Semantic recall needs sqlite-vec in every connection: call
    /// [`register_sqlite_vec`](super::recall::register_sqlite_vec) before
    /// the pools connect.
    pub async fn from_sqlite_pools(read: SqlitePool, write: SqlitePool) -> Result<Store> {
        super::recall::register_sqlite_vec();
        Self::migrate_sqlite(&write).await?;
        Ok(Self::new(Db::Sqlite {
            read,
            write,
            durability: Durability::PowerLoss,
        }))
    }

    /// Connects to PostgreSQL and migrates. The options decide the database
    /// and, through `search_path`, the schema the tables go into.
    pub async fn open_postgres(options: PgConnectOptions) -> Result<Store> {
        // Server, database, user and options (the search_path, hence the schema).
        let identity = format!(
            "postgres:{}:{}/{}?{}&{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default(),
            options.get_username(),
            options.get_options().unwrap_or_default()
        );
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .map_err(|e| Error::AgentMemory {
                what: format!("cannot connect to PostgreSQL: {e}"),
            })?;
        Ok(Self::from_postgres_pool(pool)
            .await?
            .with_shared_cache(identity))
    }

    /// Connects to `postgres://user:password@host:port/db`; errors never show the URL.
    pub async fn open_postgres_url(url: &str) -> Result<Store> {
        let options = PgConnectOptions::from_str(url).map_err(|_| Error::AgentMemory {
            what: "the PostgreSQL connection URL cannot be read".into(),
        })?;
        Self::open_postgres(options).await
    }

    /// Uses an existing PostgreSQL pool; migrates (under sqlx's advisory
    /// lock, so concurrent starts are safe).
    pub async fn from_postgres_pool(pool: PgPool) -> Result<Store> {
        migrator(POSTGRES_MIGRATIONS)
            .run(&pool)
            .await
            .map_err(|e| Error::AgentMemory {
                what: format!("cannot migrate the PostgreSQL schema: {e}"),
            })?;
        Ok(Self::new(Db::Postgres(pool)))
    }

    fn new(db: Db) -> Store {
        Store {
            db: Arc::new(db),
            tokenizer: Tokenizer::Cl100kBase,
            cache: Arc::default(),
            recall_index: Arc::default(),
            exact_limit: super::recall::EXACT_LIMIT,
        }
    }

    /// SQLite has no migration lock: two processes opening a new file at
    /// once can collide (`database is locked`, or the second inserting an
    /// applied version). The migrations are idempotent and sqlx skips applied
    /// ones, so a few retries settle it.
    async fn migrate_sqlite(pool: &SqlitePool) -> Result<()> {
        let m = migrator(SQLITE_MIGRATIONS);
        let mut attempt = 0;
        loop {
            match m.run(pool).await {
                Ok(()) => return Ok(()),
                Err(e) if attempt < 10 => {
                    attempt += 1;
                    tracing::debug!(error = %e, attempt, "retrying the agent-memory migration");
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                Err(e) => {
                    return Err(Error::AgentMemory {
                        what: format!("cannot migrate the SQLite schema: {e}"),
                    });
                }
            }
        }
    }

    /// This store counting tokens with `tokenizer` (default `cl100k_base`).
    pub fn with_tokenizer(mut self, tokenizer: Tokenizer) -> Store {
        self.tokenizer = tokenizer;
        self
    }

    /// This store searching threads of more than `limit` messages through
    /// an in-memory graph, shorter ones exactly (default
    /// [`EXACT_LIMIT`](super::recall::EXACT_LIMIT); see [`super::recall::resident`]).
    pub fn with_exact_limit(mut self, limit: i64) -> Store {
        self.exact_limit = limit.max(0);
        self
    }

    /// Longest thread semantic recall searches exactly.
    pub fn exact_limit(&self) -> i64 {
        self.exact_limit
    }

    /// The tokenizer messages are counted with.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// The pools, for the sibling modules.
    pub(crate) fn pools(&self) -> Pools<'_> {
        match &*self.db {
            Db::Sqlite {
                read,
                write,
                durability,
            } => Pools::Sqlite {
                read,
                write,
                durability: *durability,
            },
            Db::Postgres(pool) => Pools::Postgres(pool),
        }
    }

    /// The recall index, once a vector was written (cached: it never changes).
    pub(crate) fn cached_recall_index(&self) -> &OnceLock<RecallIndex> {
        &self.recall_index
    }

    /// The vectors this process keeps for recall ([`super::recall::resident`]).
    pub(crate) fn cache(&self) -> &Cache {
        &self.cache
    }

    pub(crate) fn cache_arc(&self) -> Arc<Cache> {
        self.cache.clone()
    }

    /// This store sharing the recall cache of every store of this process
    /// on the database `identity` names.
    fn with_shared_cache(mut self, identity: String) -> Store {
        self.cache = super::recall::resident::shared(identity);
        self
    }

    /// What this process holds in memory for this database's recall
    /// ([`super::recall::resident`]).
    pub fn recall_cache(&self) -> RecallCache {
        self.cache.stats()
    }

    /// Bounds the memory this process keeps for this database's recall to
    /// `bytes` (default [`DEFAULT_CACHE_BYTES`](super::recall::DEFAULT_CACHE_BYTES));
    /// shared by every store of this process on the same database.
    pub fn with_recall_cache_bytes(self, bytes: usize) -> Store {
        self.cache.set_budget(bytes);
        self
    }

    /// Which database this store uses.
    pub fn backend(&self) -> Backend {
        match &*self.db {
            Db::Sqlite { .. } => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Closes the pools, waiting for open connections to finish.
    pub async fn close(&self) {
        match &*self.db {
            Db::Sqlite { read, write, .. } => {
                read.close().await;
                write.close().await;
            }
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

// The store's methods, by what they work on. Declared after the macros
// above, which they use.
mod messages;
mod observations;
mod resource;
mod threads;
mod transfer;

#[cfg(test)]
mod tests;
