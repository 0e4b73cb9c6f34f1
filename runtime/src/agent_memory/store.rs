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
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::types::Json;
use sqlx::{ColumnIndex, Decode, Row, SqlSafeStr, Type};

use super::recall::RecallIndex;
use super::recall::ann::Graphs;
use crate::error::{Error, Result, shorten};
use crate::memory::langchain::Tokenizer;
use crate::message::{Message, Role};

/// The SQLite file used when nothing else is configured (the seed's
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
    },
    Postgres(PgPool),
}

/// The pools of a [`Store`], for the sibling modules (semantic recall).
pub(crate) enum Pools<'a> {
    Sqlite {
        read: &'a SqlitePool,
        write: &'a SqlitePool,
    },
    Postgres(&'a PgPool),
}

/// The agent-memory store. Cheap to clone (the pools are shared).
#[derive(Debug, Clone)]
pub struct Store {
    db: Arc<Db>,
    tokenizer: Tokenizer,
    graphs: Arc<Graphs>,
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
    /// Free JSON metadata (the seed keeps the iteration log here).
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

/// The export format's name and version, checked on import.
const EXPORT_FORMAT: &str = "nodekit-agent-memory-thread";
const EXPORT_VERSION: i64 = 1;

/// One message in an export: the stored JSON exactly as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportedMessage {
    seq: i64,
    message: Value,
    token_count: Option<i64>,
    created_at: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThreadExport {
    format: String,
    version: i64,
    thread: ThreadInfo,
    messages: Vec<ExportedMessage>,
    #[serde(default)]
    plan: Option<Value>,
    #[serde(default)]
    observations: Vec<Observation>,
    #[serde(default)]
    events: Vec<Event>,
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
        sqlx::query(
            "INSERT INTO nodekit_am_threads (id, resource_id, last_seq, created_at, updated_at)
             VALUES ($1, $2, 0, $3, $3) ON CONFLICT (id) DO NOTHING",
        )
        .bind($thread)
        .bind($resource)
        .bind($now)
        .execute(&mut *$tx)
        .await
        .map_err(db_err)?;
        let row = sqlx::query(
            "UPDATE nodekit_am_threads SET last_seq = last_seq + $3, updated_at = $4
             WHERE id = $1 AND resource_id = $2 RETURNING last_seq",
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

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` in WAL mode with
    /// a busy timeout, one writing and four reading connections, and migrates it.
    pub async fn open_sqlite(path: impl AsRef<Path>) -> Result<Store> {
        super::recall::register_sqlite_vec();
        let path = path.as_ref();
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT);
        let cannot = |e: sqlx::Error| Error::AgentMemory {
            what: format!("cannot open {}: {e}", path.display()),
        };
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(BUSY_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(cannot)?;
        // Migrate before the readers connect: the file then has its schema.
        Self::migrate_sqlite(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(cannot)?;
        // The same file by any path: one set of graphs.
        let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Self::new(Db::Sqlite { read, write })
            .with_shared_graphs(format!("sqlite:{}", identity.display())))
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
        Ok(Self::new(Db::Sqlite { read, write }))
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
            .with_shared_graphs(identity))
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
            graphs: Arc::default(),
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
    /// [`EXACT_LIMIT`](super::recall::EXACT_LIMIT); see [`super::recall::ann`]).
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
            Db::Sqlite { read, write } => Pools::Sqlite { read, write },
            Db::Postgres(pool) => Pools::Postgres(pool),
        }
    }

    /// The recall index, once a vector was written (cached: it never changes).
    pub(crate) fn cached_recall_index(&self) -> &OnceLock<RecallIndex> {
        &self.recall_index
    }

    /// The in-memory search graphs of long threads ([`super::recall::ann`]).
    pub(crate) fn graphs(&self) -> &Graphs {
        &self.graphs
    }

    pub(crate) fn graphs_arc(&self) -> Arc<Graphs> {
        self.graphs.clone()
    }

    /// This store sharing the search graphs of every store of this process
    /// on the database `identity` names.
    fn with_shared_graphs(mut self, identity: String) -> Store {
        self.graphs = super::recall::ann::shared(identity);
        self
    }

    /// How many search graphs this store holds in memory, and how many
    /// vectors they hold together ([`super::recall::ann`]).
    pub fn loaded_graphs(&self) -> (usize, usize) {
        self.graphs.loaded()
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
            Db::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Db::Postgres(pool) => pool.close().await,
        }
    }

    // ------------------------------------------------------------- threads

    /// The thread's row, whoever owns it.
    async fn find_thread(&self, thread: &str) -> Result<Option<ThreadInfo>> {
        let sql = "SELECT id, resource_id, title, metadata, last_seq, created_at, updated_at FROM nodekit_am_threads WHERE id = $1";
        on_reader!(self, pool => {
            match sqlx::query(sql).bind(thread).fetch_optional(pool).await.map_err(db_err)? {
                Some(row) => Ok(Some(thread_from_row(&row)?)),
                None => Ok(None),
            }
        })
    }

    /// Errors if `thread` exists and belongs to another resource. Reads call
    /// it only when they found nothing: rows they find carry `resource`
    /// already, since every row's resource is its thread's.
    async fn check_not_foreign(&self, resource: &str, thread: &str) -> Result<()> {
        self.owned_thread(resource, thread).await.map(drop)
    }

    /// The thread if it exists; an error if it belongs to another resource.
    pub(crate) async fn owned_thread(
        &self,
        resource: &str,
        thread: &str,
    ) -> Result<Option<ThreadInfo>> {
        match self.find_thread(thread).await? {
            Some(t) if t.resource_id != resource => Err(ownership(resource, thread)),
            found => Ok(found),
        }
    }

    /// The thread, created for `resource` on first use; an error if it
    /// belongs to another resource.
    pub async fn thread(&self, resource: &str, thread: &str) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        // Most calls find the thread: no write lock for them.
        if let Some(t) = self.find_thread(thread).await? {
            return if t.resource_id == resource {
                Ok(t)
            } else {
                Err(ownership(resource, thread))
            };
        }
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            let row = sqlx::query("SELECT id, resource_id, title, metadata, last_seq, created_at, updated_at FROM nodekit_am_threads WHERE id = $1")
                .bind(thread)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
            let info = thread_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(info)
        })
    }

    /// The resource's threads, most recently written first.
    pub async fn threads(&self, resource: &str) -> Result<Vec<ThreadInfo>> {
        check_id("resource", resource)?;
        on_reader!(self, pool => {
            let rows = sqlx::query("SELECT id, resource_id, title, metadata, last_seq, created_at, updated_at FROM nodekit_am_threads WHERE resource_id = $1 ORDER BY updated_at DESC, id")
                .bind(resource)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(thread_from_row).collect()
        })
    }

    /// Sets the thread's title and metadata (creating the thread on first use).
    pub async fn set_thread_info(
        &self,
        resource: &str,
        thread: &str,
        title: Option<&str>,
        metadata: Value,
    ) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            let row = sqlx::query("UPDATE nodekit_am_threads SET title = $3, metadata = $4 WHERE id = $1 AND resource_id = $2 RETURNING id, resource_id, title, metadata, last_seq, created_at, updated_at")
                .bind(thread)
                .bind(resource)
                .bind(title)
                .bind(Json(&metadata))
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
            let info = thread_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(info)
        })
    }

    /// Deletes the thread with its messages, observations, plan, events and
    /// embeddings, in one transaction. `Ok(false)` if there was no such
    /// thread; an error if it belongs to another resource.
    pub async fn delete_thread(&self, resource: &str, thread: &str) -> Result<bool> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        in_write_tx!(self, tx => {
            // FOR UPDATE on PostgreSQL: an indexer writing vectors holds the
            // row FOR SHARE, so none lands after this delete.
            let lock = match self.backend() {
                Backend::Postgres => " FOR UPDATE",
                Backend::Sqlite => "",
            };
            let owner: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT resource_id FROM nodekit_am_threads WHERE id = $1{lock}")))
                .bind(thread)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match owner {
                None => return Ok(false),
                Some(o) if o != resource => return Err(ownership(resource, thread)),
                Some(_) => {}
            }
            // The vector index's rows first: they are found through the
            // embeddings. sqlite-vec deletes by rowid only.
            let kind: Option<String> = sqlx::query_scalar("SELECT index_kind FROM nodekit_am_recall_meta WHERE id = 1")
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match kind.as_deref() {
                Some("sqlite-vec") => {
                    let ids: Vec<i64> = sqlx::query_scalar("SELECT message_id FROM nodekit_am_embeddings WHERE thread_id = $1 AND resource_id = $2 AND dims > 0")
                        .bind(thread)
                        .bind(resource)
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(db_err)?;
                    for chunk in ids.chunks(1000) {
                        let chunk = serde_json::to_string(chunk).expect("ids serialise");
                        sqlx::query("DELETE FROM nodekit_am_vec WHERE rowid IN (SELECT value FROM json_each($1))")
                            .bind(chunk)
                            .execute(&mut *tx)
                            .await
                            .map_err(db_err)?;
                    }
                }
                Some("pgvector") => {
                    sqlx::query("DELETE FROM nodekit_am_vectors WHERE thread_id = $1 AND resource_id = $2")
                        .bind(thread)
                        .bind(resource)
                        .execute(&mut *tx)
                        .await
                        .map_err(db_err)?;
                }
                _ => {}
            }
            for sql in [
                "DELETE FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_observations WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_plans WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_events WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_embeddings WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_threads WHERE id = $1 AND resource_id = $2",
            ] {
                sqlx::query(sql).bind(thread).bind(resource).execute(&mut *tx).await.map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)?;
            self.graphs.forget(thread);
            Ok(true)
        })
    }

    // ------------------------------------------------------------ messages

    /// Appends `messages` to the thread (created on first use) in one
    /// transaction, numbering them after the thread's last seq: concurrent
    /// appends to one thread queue on the thread row, so seqs have no gaps
    /// and no duplicates. Token counts are computed here, once, before the
    /// transaction starts.
    pub async fn append(
        &self,
        resource: &str,
        thread: &str,
        messages: &[Message],
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        if messages.is_empty() {
            self.check_not_foreign(resource, thread).await?;
            return Ok(Vec::new());
        }
        let prepared: Vec<(Value, i64)> = messages
            .iter()
            .map(|m| (m.to_stored(), message_tokens(self.tokenizer, m)))
            .collect();
        let count = i64::try_from(messages.len()).map_err(db_err)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            let last = claim_thread!(tx, resource, thread, now, count);
            let mut stored = Vec::with_capacity(messages.len());
            for (i, (m, (content, tokens))) in messages.iter().zip(&prepared).enumerate() {
                let seq = last - count + 1 + i as i64;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO nodekit_am_messages (thread_id, resource_id, seq, role, content, token_count, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(thread)
                .bind(resource)
                .bind(seq)
                .bind(m.role.as_str())
                .bind(Json(content))
                .bind(*tokens)
                .bind(now)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
                stored.push(StoredMessage {
                    id,
                    thread_id: thread.to_owned(),
                    seq,
                    message: m.clone(),
                    token_count: *tokens,
                    created_at: now,
                });
            }
            tx.commit().await.map_err(db_err)?;
            Ok(stored)
        })
    }

    async fn raw_messages(
        &self,
        resource: &str,
        thread: &str,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<RawMessage>> {
        let sql = "SELECT id, thread_id, seq, content, token_count, created_at FROM nodekit_am_messages
                   WHERE thread_id = $1 AND resource_id = $2 AND seq >= $3 AND seq <= $4 ORDER BY seq";
        on_reader!(self, pool => {
            let rows = sqlx::query(sql)
                .bind(thread)
                .bind(resource)
                .bind(from_seq)
                .bind(to_seq)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(raw_from_row).collect()
        })
    }

    /// The messages of the thread in any of the seq ranges `ranges`
    /// (inclusive, not overlapping), in seq order: one query for all of them.
    pub(crate) async fn messages_in_ranges(
        &self,
        resource: &str,
        thread: &str,
        ranges: &[(i64, i64)],
    ) -> Result<Vec<StoredMessage>> {
        // The ranges go as one JSON array of [from, to] pairs, driving the
        // join so each range is one search of the (thread, seq) index.
        let sql = match self.backend() {
            Backend::Sqlite => {
                "SELECT m.id, m.thread_id, m.seq, m.content, m.token_count, m.created_at
                 FROM json_each($3) AS r CROSS JOIN nodekit_am_messages AS m
                   ON m.thread_id = $1 AND m.seq BETWEEN r.value ->> 0 AND r.value ->> 1
                 WHERE m.resource_id = $2 ORDER BY m.seq"
            }
            Backend::Postgres => {
                "SELECT m.id, m.thread_id, m.seq, m.content, m.token_count, m.created_at
                 FROM jsonb_array_elements($3::text::jsonb) AS r CROSS JOIN LATERAL (
                   SELECT * FROM nodekit_am_messages
                   WHERE thread_id = $1 AND resource_id = $2
                     AND seq BETWEEN (r ->> 0)::bigint AND (r ->> 1)::bigint) AS m
                 ORDER BY m.seq"
            }
        };
        let ranges = serde_json::to_string(ranges).expect("ranges serialise");
        let raw: Vec<RawMessage> = on_reader!(self, pool => {
            let rows = sqlx::query(sql)
                .bind(thread)
                .bind(resource)
                .bind(&ranges)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(raw_from_row).collect::<Result<_>>()?
        });
        Ok(raw.into_iter().filter_map(RawMessage::decode).collect())
    }

    /// Up to `limit` messages before seq `before`, newest first.
    async fn messages_before(
        &self,
        resource: &str,
        thread: &str,
        before: i64,
        limit: i64,
    ) -> Result<Vec<StoredMessage>> {
        on_reader!(self, pool => {
            let rows = sqlx::query(
                "SELECT id, thread_id, seq, content, token_count, created_at FROM nodekit_am_messages
                 WHERE thread_id = $1 AND resource_id = $2 AND seq < $3 ORDER BY seq DESC LIMIT $4",
            )
            .bind(thread)
            .bind(resource)
            .bind(before)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            let raw: Result<Vec<_>> = rows.iter().map(raw_from_row).collect();
            Ok(raw?.into_iter().filter_map(RawMessage::decode).collect())
        })
    }

    /// The messages with `from_seq <= seq <= to_seq`, in order.
    pub async fn messages_range(
        &self,
        resource: &str,
        thread: &str,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let raw = self
            .raw_messages(resource, thread, from_seq, to_seq)
            .await?;
        if raw.is_empty() {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(raw.into_iter().filter_map(RawMessage::decode).collect())
    }

    /// The last `n` messages of the thread, oldest first, never splitting a
    /// tool call from its results.
    ///
    /// If the window would start with tool results whose AI tool-call
    /// message lies before it, the window is extended back to that message
    /// (and everything after it), so `n` is a target that can be exceeded:
    /// dropping the results instead would hide what the tools returned, and
    /// providers reject a tool result without its call. Only if the call is
    /// not found within 1,000 earlier messages (a damaged thread) are the
    /// orphaned results left out.
    pub async fn recent(
        &self,
        resource: &str,
        thread: &str,
        n: usize,
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        if n == 0 {
            self.check_not_foreign(resource, thread).await?;
            return Ok(Vec::new());
        }
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        let mut window = self.messages_before(resource, thread, i64::MAX, n).await?;
        if window.is_empty() {
            self.check_not_foreign(resource, thread).await?;
            return Ok(window);
        }
        window.reverse();
        let (mut missing, any) = unmatched_results(&window);
        if missing.is_empty() && !any {
            return Ok(window);
        }
        // Walk back in pages until every orphaned result has its call.
        let mut extension: Vec<StoredMessage> = Vec::new();
        let mut start = window[0].seq;
        let mut scanned = 0;
        let mut found = false;
        'pages: while scanned < MAX_TOOL_CALL_LOOKBACK {
            let page = self.messages_before(resource, thread, start, 64).await?;
            if page.is_empty() {
                break;
            }
            scanned += page.len() as i64;
            for m in page {
                start = m.seq;
                let is_ai = m.message.role == Role::Ai;
                if is_ai {
                    for c in &m.message.tool_calls {
                        missing.remove(&c.id);
                    }
                }
                extension.push(m);
                // The nearest AI message also owns id-less results (`any`).
                if is_ai && missing.is_empty() {
                    found = true;
                    break 'pages;
                }
            }
        }
        if found {
            extension.reverse();
            extension.append(&mut window);
            return Ok(extension);
        }
        // A damaged thread: leave out the results whose call is lost.
        let (missing, any) = unmatched_results(&window);
        let mut seen_other = false;
        window.retain(|m| {
            let orphan = matches!(m.message.role, Role::Tool | Role::Function)
                && match &m.message.tool_call_id {
                    Some(id) => missing.contains(id),
                    None => any && !seen_other,
                };
            if !orphan {
                seen_other = true;
            }
            !orphan
        });
        Ok(window)
    }

    /// How many messages the thread has.
    pub async fn message_count(&self, resource: &str, thread: &str) -> Result<i64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let n: i64 = on_reader!(self, pool => {
            sqlx::query_scalar("SELECT COUNT(*) FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2")
                .bind(thread)
                .bind(resource)
                .fetch_one(pool)
                .await
                .map_err(db_err)?
        });
        if n == 0 {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(n)
    }

    /// The sum of the stored token counts of the messages after `after_seq`
    /// (the observer's trigger: nothing is recounted).
    pub async fn unobserved_tokens(
        &self,
        resource: &str,
        thread: &str,
        after_seq: i64,
    ) -> Result<i64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        // PostgreSQL's SUM of BIGINT is NUMERIC: cast back for one decoder.
        let n: i64 = on_reader!(self, pool => {
            sqlx::query_scalar("SELECT CAST(COALESCE(SUM(token_count), 0) AS BIGINT) FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2 AND seq > $3")
                .bind(thread)
                .bind(resource)
                .bind(after_seq)
                .fetch_one(pool)
                .await
                .map_err(db_err)?
        });
        if n == 0 {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(n)
    }

    // ------------------------------------------------------ working memory

    /// The resource's working memory, if it was ever set.
    pub async fn working_memory(&self, resource: &str) -> Result<Option<WorkingMemory>> {
        check_id("resource", resource)?;
        on_reader!(self, pool => {
            let row = sqlx::query("SELECT content, version, updated_at FROM nodekit_am_working_memory WHERE resource_id = $1")
                .bind(resource)
                .fetch_optional(pool)
                .await
                .map_err(db_err)?;
            row.as_ref().map(wm_from_row).transpose()
        })
    }

    /// Replaces the resource's working memory with `content`; the version
    /// grows by one. With `expected_version` the update happens only if the
    /// stored version is that one (0: none stored yet), else
    /// [`Error::WorkingMemoryConflict`]. Without it, concurrent updates are
    /// applied one after the other (the row lock on PostgreSQL, the write
    /// lock on SQLite), each getting its own version: none is lost.
    pub async fn set_working_memory(
        &self,
        resource: &str,
        content: &str,
        expected_version: Option<i64>,
    ) -> Result<WorkingMemory> {
        check_id("resource", resource)?;
        let now = now_ms();
        let sql = match expected_version {
            None => {
                "INSERT INTO nodekit_am_working_memory (resource_id, content, version, updated_at)
                 VALUES ($1, $2, 1, $3)
                 ON CONFLICT (resource_id) DO UPDATE SET content = excluded.content,
                     version = nodekit_am_working_memory.version + 1, updated_at = excluded.updated_at
                 RETURNING content, version, updated_at"
            }
            Some(0) => {
                "INSERT INTO nodekit_am_working_memory (resource_id, content, version, updated_at)
                 VALUES ($1, $2, 1, $3) ON CONFLICT (resource_id) DO NOTHING
                 RETURNING content, version, updated_at"
            }
            Some(_) => {
                "UPDATE nodekit_am_working_memory SET content = $2, version = version + 1, updated_at = $3
                 WHERE resource_id = $1 AND version = $4 RETURNING content, version, updated_at"
            }
        };
        in_write_tx!(self, tx => {
            let mut q = sqlx::query(sql).bind(resource).bind(content).bind(now);
            if let Some(v) = expected_version.filter(|v| *v != 0) {
                q = q.bind(v);
            }
            let row = q.fetch_optional(&mut *tx).await.map_err(db_err)?;
            let Some(row) = row else {
                let actual: Option<i64> = sqlx::query_scalar("SELECT version FROM nodekit_am_working_memory WHERE resource_id = $1")
                    .bind(resource)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?;
                return Err(Error::WorkingMemoryConflict {
                    resource: shorten(resource, 80),
                    expected: expected_version.unwrap_or(0),
                    actual: actual.unwrap_or(0),
                });
            };
            let wm = wm_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(wm)
        })
    }

    // --------------------------------------------------------------- plans

    /// The thread's plan, if one was set.
    pub async fn plan(&self, resource: &str, thread: &str) -> Result<Option<Value>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let plan: Option<Json<Value>> = on_reader!(self, pool => {
            sqlx::query_scalar("SELECT plan FROM nodekit_am_plans WHERE thread_id = $1 AND resource_id = $2")
                .bind(thread)
                .bind(resource)
                .fetch_optional(pool)
                .await
                .map_err(db_err)?
        });
        if plan.is_none() {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(plan.map(|p| p.0))
    }

    /// Replaces the thread's plan (creating the thread on first use).
    pub async fn set_plan(&self, resource: &str, thread: &str, plan: Value) -> Result<()> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            sqlx::query(
                "INSERT INTO nodekit_am_plans (thread_id, resource_id, plan, updated_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (thread_id) DO UPDATE SET plan = excluded.plan, updated_at = excluded.updated_at",
            )
            .bind(thread)
            .bind(resource)
            .bind(Json(&plan))
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)?;
            Ok(())
        })
    }

    // -------------------------------------------------------------- events

    /// Appends an event to the thread's history (creating the thread on first use).
    pub async fn record_event(
        &self,
        resource: &str,
        thread: &str,
        kind: &str,
        payload: Value,
    ) -> Result<()> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            sqlx::query("INSERT INTO nodekit_am_events (thread_id, resource_id, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(thread)
                .bind(resource)
                .bind(kind)
                .bind(Json(&payload))
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            tx.commit().await.map_err(db_err)?;
            Ok(())
        })
    }

    /// The thread's events, oldest first.
    pub async fn events(&self, resource: &str, thread: &str) -> Result<Vec<Event>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let events: Vec<Event> = on_reader!(self, pool => {
            let rows = sqlx::query("SELECT id, kind, payload, created_at FROM nodekit_am_events WHERE thread_id = $1 AND resource_id = $2 ORDER BY id")
                .bind(thread)
                .bind(resource)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(event_from_row).collect::<Result<_>>()?
        });
        if events.is_empty() {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(events)
    }

    // -------------------------------------------------------- observations

    /// Stores an observation covering messages `first_seq..=last_seq` in
    /// `generation`, or in the newest active generation when a reflection
    /// made a newer one meanwhile (so the block shows it); its tokens are
    /// counted here. For the observational tier.
    pub async fn add_observation(
        &self,
        resource: &str,
        thread: &str,
        generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            generation,
            content,
            first_seq,
            last_seq,
            RowState::Active,
        )
        .await
    }

    /// Stores a *buffered* observation: computed ahead, not part of the
    /// observation block until [`Store::activate_buffered`].
    pub async fn add_buffered_observation(
        &self,
        resource: &str,
        thread: &str,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            0,
            content,
            first_seq,
            last_seq,
            RowState::Buffered,
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert_observation(
        &self,
        resource: &str,
        thread: &str,
        generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
        state: RowState,
    ) -> Result<Observation> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let tokens = i64::try_from(self.tokenizer.count(content)).unwrap_or(i64::MAX);
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            if state == RowState::BufferedReflection {
                // One waiting reflection per thread: the newest.
                drop_waiting_reflection!(tx, resource, thread);
            }
            let generation = match state {
                RowState::Active => generation.max(newest_generation!(tx, resource, thread)),
                _ => generation,
            };
            let row = sqlx::query(
                "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 RETURNING id, generation, content, token_count, first_seq, last_seq, created_at, buffered",
            )
            .bind(thread)
            .bind(resource)
            .bind(generation)
            .bind(content)
            .bind(tokens)
            .bind(first_seq)
            .bind(last_seq)
            .bind(now)
            .bind(state as i64)
            .fetch_one(&mut *tx)
            .await
            .map_err(db_err)?;
            let obs = observation_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(obs)
        })
    }

    /// Where the thread's observations stand: the last message seq covered
    /// by an active observation (0: none), the last covered by any
    /// observation, buffered ones included, the newest active generation and
    /// whether a buffered reflection of it waits.
    pub async fn observation_marks(
        &self,
        resource: &str,
        thread: &str,
    ) -> Result<ObservationMarks> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let (observed_through, covered_through, generation, reflected): (i64, i64, i64, i64) = on_reader!(self, pool => {
            sqlx::query_as(
                "SELECT CAST(COALESCE(MAX(CASE WHEN buffered = 0 THEN last_seq END), 0) AS BIGINT),
                        CAST(COALESCE(MAX(last_seq), 0) AS BIGINT),
                        CAST(COALESCE(MAX(CASE WHEN buffered = 0 THEN generation END), 0) AS BIGINT),
                        CAST(COALESCE(MAX(CASE WHEN buffered = 2 THEN generation END), 0) AS BIGINT)
                 FROM nodekit_am_observations WHERE thread_id = $1 AND resource_id = $2",
            )
            .bind(thread)
            .bind(resource)
            .fetch_one(pool)
            .await
            .map_err(db_err)?
        });
        if covered_through == 0 {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(ObservationMarks {
            observed_through,
            covered_through,
            generation,
            reflection_buffered: reflected == generation + 1,
        })
    }

    /// The active observations of the newest generation, in the order they
    /// cover the thread: what the observation block shows.
    pub async fn current_observations(
        &self,
        resource: &str,
        thread: &str,
    ) -> Result<Vec<Observation>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let list: Vec<Observation> = on_reader!(self, pool => {
            let rows = sqlx::query(
                "SELECT id, generation, content, token_count, first_seq, last_seq, created_at, buffered FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0
                   AND generation = (SELECT COALESCE(MAX(generation), 0) FROM nodekit_am_observations
                                     WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)
                 ORDER BY first_seq, id",
            )
            .bind(thread)
            .bind(resource)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            rows.iter().map(observation_from_row).collect::<Result<_>>()?
        });
        if list.is_empty() {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(list)
    }

    /// Activates the thread's buffered observations in one transaction: they
    /// join the newest active generation, appended after its observations.
    /// Buffered rows overlapping messages already observed are dropped.
    /// Returns how many were activated.
    pub async fn activate_buffered(&self, resource: &str, thread: &str) -> Result<u64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            sqlx::query(
                "DELETE FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 1
                   AND first_seq <= (SELECT COALESCE(MAX(last_seq), 0) FROM nodekit_am_observations
                                     WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)",
            )
            .bind(thread)
            .bind(resource)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            let done = sqlx::query(
                "UPDATE nodekit_am_observations
                 SET buffered = 0,
                     generation = (SELECT COALESCE(MAX(generation), 0) FROM nodekit_am_observations
                                   WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 1",
            )
            .bind(thread)
            .bind(resource)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?
            .rows_affected();
            tx.commit().await.map_err(db_err)?;
            Ok(done)
        })
    }

    /// Stores a reflection: generation `from_generation + 1`, covering
    /// `first_seq..=last_seq`; an error, storing nothing, when
    /// `from_generation` is no longer the newest. Active observations of `from_generation`
    /// made after the reflector read them (covering messages after
    /// `last_seq`) move to the new generation, after the reflection, so none
    /// leaves the block.
    pub async fn add_reflection(
        &self,
        resource: &str,
        thread: &str,
        from_generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let tokens = i64::try_from(self.tokenizer.count(content)).unwrap_or(i64::MAX);
        let now = now_ms();
        let generation = from_generation + 1;
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            if newest_generation!(tx, resource, thread) != from_generation {
                return Err(Error::AgentMemory {
                    what: format!("generation {from_generation} is no longer the newest (another run reflected meanwhile): this reflection was dropped"),
                });
            }
            // A reflection computed ahead is superseded by this one.
            drop_waiting_reflection!(tx, resource, thread);
            move_after_reflection!(tx, resource, thread, from_generation, generation, last_seq);
            let row = sqlx::query(
                "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)
                 RETURNING id, generation, content, token_count, first_seq, last_seq, created_at, buffered",
            )
            .bind(thread)
            .bind(resource)
            .bind(generation)
            .bind(content)
            .bind(tokens)
            .bind(first_seq)
            .bind(last_seq)
            .bind(now)
            .fetch_one(&mut *tx)
            .await
            .map_err(db_err)?;
            let obs = observation_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(obs)
        })
    }

    /// Stores a *buffered* reflection of generation `from_generation`,
    /// covering `first_seq..=last_seq`: computed ahead in the background,
    /// not part of the block until [`Store::activate_reflection`]. It
    /// replaces the thread's earlier buffered reflection, if any.
    pub async fn add_buffered_reflection(
        &self,
        resource: &str,
        thread: &str,
        from_generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            from_generation + 1,
            content,
            first_seq,
            last_seq,
            RowState::BufferedReflection,
        )
        .await
    }

    /// Activates the thread's buffered reflection in one transaction, no
    /// model call: when it condenses the newest active generation, it
    /// becomes that generation + 1, and the active observations made since
    /// it was computed (covering messages after its `last_seq`) move after
    /// it, as in [`Store::add_reflection`]. A buffered reflection of an
    /// older generation is dropped. Returns whether one was activated.
    pub async fn activate_reflection(&self, resource: &str, thread: &str) -> Result<bool> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            let current = newest_generation!(tx, resource, thread);
            let waiting: Option<(i64, i64, i64)> = sqlx::query_as(
                "SELECT id, generation, last_seq FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 2 ORDER BY id DESC LIMIT 1",
            )
            .bind(thread)
            .bind(resource)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_err)?;
            let activated = match waiting {
                Some((id, generation, last_seq)) if generation == current + 1 => {
                    move_after_reflection!(tx, resource, thread, current, generation, last_seq);
                    sqlx::query("UPDATE nodekit_am_observations SET buffered = 0 WHERE id = $1")
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(db_err)?;
                    true
                }
                Some(_) => {
                    drop_waiting_reflection!(tx, resource, thread);
                    false
                }
                None => false,
            };
            tx.commit().await.map_err(db_err)?;
            Ok(activated)
        })
    }

    /// The thread's observations, by generation, then by the messages they
    /// cover. A buffered reflection is not among them (nor exported): it is
    /// a model answer kept ahead, computed again when missing.
    pub async fn observations(&self, resource: &str, thread: &str) -> Result<Vec<Observation>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let list: Vec<Observation> = on_reader!(self, pool => {
            let rows = sqlx::query(
                "SELECT id, generation, content, token_count, first_seq, last_seq, created_at, buffered FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered < 2 ORDER BY generation, first_seq, id",
            )
            .bind(thread)
            .bind(resource)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            rows.iter().map(observation_from_row).collect::<Result<_>>()?
        });
        if list.is_empty() {
            self.check_not_foreign(resource, thread).await?;
        }
        Ok(list)
    }

    // ------------------------------------------------------ export, import

    /// The thread as JSON: its info, every message (in the stored form, as
    /// written, with seq, token count and time), its plan, observations and
    /// events. Row ids are left out: they belong to one database.
    pub async fn export_thread(&self, resource: &str, thread: &str) -> Result<Value> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let info = match self.find_thread(thread).await? {
            Some(t) if t.resource_id == resource => t,
            Some(_) => return Err(ownership(resource, thread)),
            None => {
                return Err(Error::AgentMemory {
                    what: format!("there is no thread `{}`", shorten(thread, 80)),
                });
            }
        };
        let messages = self
            .raw_messages(resource, thread, i64::MIN, i64::MAX)
            .await?
            .into_iter()
            .map(|m| ExportedMessage {
                seq: m.seq,
                message: m.content,
                token_count: Some(m.token_count),
                created_at: m.created_at,
            })
            .collect();
        let export = ThreadExport {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            thread: info,
            messages,
            plan: self.plan(resource, thread).await?,
            observations: self.observations(resource, thread).await?,
            events: self.events(resource, thread).await?,
        };
        serde_json::to_value(export).map_err(db_err)
    }

    /// Imports an exported thread into `resource` (which may differ from the
    /// exporting one), in one transaction. Refuses a thread id that exists
    /// already: for another resource that is an ownership error; for this
    /// one, delete it first (an import never merges). Messages keep their
    /// seqs, times and token counts (counted now if the export has none).
    pub async fn import_thread(&self, resource: &str, export: Value) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        let export: ThreadExport =
            serde_json::from_value(export).map_err(|e| Error::AgentMemory {
                what: format!("not a thread export: {e}"),
            })?;
        if export.format != EXPORT_FORMAT || export.version != EXPORT_VERSION {
            return Err(Error::AgentMemory {
                what: format!(
                    "unsupported export format {:?} version {} (expected {EXPORT_FORMAT:?} version {EXPORT_VERSION})",
                    shorten(&export.format, 60),
                    export.version
                ),
            });
        }
        let thread = export.thread.id.clone();
        check_id("thread", &thread)?;
        let mut last_seq = export.thread.last_seq;
        let mut prev = 0;
        let mut messages = Vec::with_capacity(export.messages.len());
        for m in &export.messages {
            if m.seq <= prev {
                return Err(Error::AgentMemory {
                    what: format!(
                        "message seqs must be positive and increasing; {} follows {prev}",
                        m.seq
                    ),
                });
            }
            prev = m.seq;
            let message = Message::from_stored(&m.message)?;
            let tokens = match m.token_count {
                Some(t) => t,
                None => message_tokens(self.tokenizer, &message),
            };
            messages.push((m, message.role, tokens));
        }
        last_seq = last_seq.max(prev);
        let info = ThreadInfo {
            resource_id: resource.to_owned(),
            last_seq,
            ..export.thread.clone()
        };
        in_write_tx!(self, tx => {
            let owner: Option<String> = sqlx::query_scalar("SELECT resource_id FROM nodekit_am_threads WHERE id = $1")
                .bind(&thread)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match owner {
                Some(o) if o != resource => return Err(ownership(resource, &thread)),
                Some(_) => {
                    return Err(Error::AgentMemory {
                        what: format!("thread `{}` exists already; delete it before importing it again", shorten(&thread, 80)),
                    })
                }
                None => {}
            }
            sqlx::query("INSERT INTO nodekit_am_threads (id, resource_id, title, metadata, last_seq, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
                .bind(&info.id)
                .bind(resource)
                .bind(info.title.as_deref())
                .bind(Json(&info.metadata))
                .bind(info.last_seq)
                .bind(info.created_at)
                .bind(info.updated_at)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            for (m, role, tokens) in &messages {
                sqlx::query(
                    "INSERT INTO nodekit_am_messages (thread_id, resource_id, seq, role, content, token_count, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&thread)
                .bind(resource)
                .bind(m.seq)
                .bind(role.as_str())
                .bind(Json(&m.message))
                .bind(*tokens)
                .bind(m.created_at)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            }
            if let Some(plan) = &export.plan {
                sqlx::query("INSERT INTO nodekit_am_plans (thread_id, resource_id, plan, updated_at) VALUES ($1, $2, $3, $4)")
                    .bind(&thread)
                    .bind(resource)
                    .bind(Json(plan))
                    .bind(info.updated_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_err)?;
            }
            for o in &export.observations {
                sqlx::query(
                    "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&thread)
                .bind(resource)
                .bind(o.generation)
                .bind(&o.content)
                .bind(o.token_count)
                .bind(o.first_seq)
                .bind(o.last_seq)
                .bind(o.created_at)
                .bind(i64::from(o.buffered))
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            }
            for e in &export.events {
                sqlx::query("INSERT INTO nodekit_am_events (thread_id, resource_id, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5)")
                    .bind(&thread)
                    .bind(resource)
                    .bind(&e.kind)
                    .bind(Json(&e.payload))
                    .bind(e.created_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)?;
            Ok(info)
        })
    }
}

#[cfg(test)]
mod tests;
