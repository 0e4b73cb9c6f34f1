//! The database under agent memory: the pools, the migrations, the id
//! checks, the row decoders and the reads every tier shares (a thread, a
//! range of its messages, its recent window).
//!
//! [`Db`] is one opened database, SQLite or PostgreSQL; the storage tier
//! ([`super::store::Store`]) and semantic recall ([`super::recall::Recall`])
//! are both built on it and know nothing of each other. What a tier keeps
//! per database in this process (recall's vectors) hangs off the `Db`,
//! which tells it of deleted threads.

use std::any::Any;
#[cfg(feature = "sqlite")]
use std::path::Path;
use std::sync::{Arc, OnceLock};
#[cfg(feature = "sqlite")]
use std::time::Duration;

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};
#[cfg(feature = "postgres")]
use sqlx::postgres::PgPool;
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};

use super::AgentMemoryError;
use nodekit_core::error::{Error, Result, StoreError, shorten};
#[cfg(feature = "postgres")]
use nodekit_db::postgres::Postgres;

mod reads;
mod rows;

pub(crate) use rows::{RawMessage, raw_from_row, thread_from_row};
pub use rows::{StoredMessage, ThreadInfo};

/// The SQLite file used when nothing else is configured (n8n's
/// `file:instance-ai-memory.db`), relative to the working directory.
pub const DEFAULT_SQLITE_PATH: &str = "instance-ai-memory.db";

/// Longest resource or thread id accepted, in characters.
pub const MAX_ID_CHARS: usize = 255;

/// How long a SQLite writer waits for another process's write to finish.
#[cfg(feature = "sqlite")]
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The table sqlx records applied migrations in: not `_sqlx_migrations`, so
/// a host database that runs its own sqlx migrations is left alone.
const MIGRATIONS_TABLE: &str = "_nodekit_am_migrations";

#[cfg(feature = "sqlite")]
const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "observations_buffer",
        include_str!("../../migrations/sqlite/0002_observations_buffer.sql"),
    ),
    (
        3,
        "recall",
        include_str!("../../migrations/sqlite/0003_recall.sql"),
    ),
];
#[cfg(feature = "postgres")]
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "observations_buffer",
        include_str!("../../migrations/postgres/0002_observations_buffer.sql"),
    ),
    (
        3,
        "recall",
        include_str!("../../migrations/postgres/0003_recall.sql"),
    ),
    (
        4,
        "embeddings_order",
        include_str!("../../migrations/postgres/0004_embeddings_order.sql"),
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

/// Which database a [`Db`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
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

#[cfg(feature = "sqlite")]
impl Durability {
    fn synchronous(self) -> SqliteSynchronous {
        match self {
            Durability::PowerLoss => SqliteSynchronous::Full,
            Durability::ProcessCrash => SqliteSynchronous::Normal,
        }
    }
}

/// The pools of a [`Db`].
#[derive(Debug)]
pub(crate) enum Pools {
    /// `write` has one connection: SQLite allows one writer at a time, and
    /// queueing in the pool is cheaper than spinning on `SQLITE_BUSY`.
    #[cfg(feature = "sqlite")]
    Sqlite {
        read: SqlitePool,
        write: SqlitePool,
        durability: Durability,
    },
    #[cfg(feature = "postgres")]
    Postgres(PgPool),
}

/// What a tier keeps per database in this process, told when a thread is
/// deleted so it forgets what it held for it.
pub(crate) trait Attachment: Any + Send + Sync {
    /// `thread` was deleted (its rows are gone).
    fn thread_deleted(&self, thread: &str);
}

#[derive(Debug)]
struct Inner {
    pools: Pools,
    /// The database by any path or handle (server, database, user and
    /// options; or the SQLite file), for state shared by every `Db` of this
    /// process on it; `None` for pools handed in.
    identity: Option<String>,
    attachment: OnceLock<Arc<dyn Attachment>>,
}

impl std::fmt::Debug for dyn Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Attachment")
    }
}

/// One agent-memory database, opened and migrated: SQLite (one writing
/// and four reading connections, WAL) or PostgreSQL. Cheap to clone (the
/// pools are shared).
///
/// On SQLite every write transaction starts with `BEGIN IMMEDIATE`, so
/// writers in other processes queue on the busy timeout instead of failing
/// halfway through; `synchronous = FULL` by default ([`Durability`]).
#[derive(Debug, Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

impl Db {
    #[cfg(feature = "sqlite")]
    /// Opens (creating if needed) the SQLite file at `path` in WAL mode with
    /// a busy timeout, one writing and four reading connections, and
    /// migrates it.
    pub async fn open_sqlite(path: impl AsRef<Path>, durability: Durability) -> Result<Db> {
        nodekit_db::sqlite::register_sqlite_vec();
        let path = path.as_ref();
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(durability.synchronous())
            .busy_timeout(BUSY_TIMEOUT);
        let cannot = |e: sqlx::Error| {
            AgentMemoryError::Store(
                nodekit_db::store_error(Some(nodekit_core::error::Backend::Sqlite), e)
                    .during(format!("cannot open {}", path.display())),
            )
        };
        let write = nodekit_db::sqlite::retry_locked(BUSY_TIMEOUT, || {
            nodekit_db::sqlite::pool_options(1)
                .acquire_timeout(BUSY_TIMEOUT)
                .connect_with(options.clone())
        })
        .await
        .map_err(cannot)?;
        // Migrate before the readers connect: the file then has its schema.
        migrate_sqlite(&write).await?;
        let read = nodekit_db::sqlite::retry_locked(BUSY_TIMEOUT, || {
            nodekit_db::sqlite::pool_options(4).connect_with(options.clone())
        })
        .await
        .map_err(cannot)?;
        let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Db::new(
            Pools::Sqlite {
                read,
                write,
                durability,
            },
            Some(format!("sqlite:{}", identity.display())),
        ))
    }

    #[cfg(feature = "sqlite")]
    /// Uses existing SQLite pools, `write` ideally with one connection;
    /// migrates. Give them WAL mode and a busy timeout yourself. Semantic
    /// recall needs sqlite-vec in every connection: call
    /// [`register_sqlite_vec`](nodekit_db::sqlite::register_sqlite_vec) before
    /// the pools connect.
    pub async fn from_sqlite_pools(read: SqlitePool, write: SqlitePool) -> Result<Db> {
        nodekit_db::sqlite::register_sqlite_vec();
        migrate_sqlite(&write).await?;
        Ok(Db::new(
            Pools::Sqlite {
                read,
                write,
                durability: Durability::PowerLoss,
            },
            None,
        ))
    }

    #[cfg(feature = "postgres")]
    /// The database `pg` reaches; connects and migrates (under sqlx's
    /// advisory lock, so concurrent starts are safe). The pool's options
    /// decide the database and, through `search_path`, the schema the
    /// tables go into.
    pub async fn postgres(pg: &Postgres) -> Result<Db> {
        let options = pg.pool().connect_options();
        // Server, database, user and options (the search_path, hence the schema).
        let identity = format!(
            "postgres:{}:{}/{}?{}&{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default(),
            options.get_username(),
            options.get_options().unwrap_or_default()
        );
        pg.check().await.map_err(AgentMemoryError::Store)?;
        migrate_postgres(pg.pool()).await?;
        Ok(Db::new(Pools::Postgres(pg.pool().clone()), Some(identity)))
    }

    fn new(pools: Pools, identity: Option<String>) -> Db {
        Db {
            inner: Arc::new(Inner {
                pools,
                identity,
                attachment: OnceLock::new(),
            }),
        }
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.pools() {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { .. } => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Pools::Postgres(_) => Backend::Postgres,
        }
    }

    /// Closes the pools, waiting for open connections to finish.
    pub async fn close(&self) {
        match self.pools() {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { read, write, .. } => {
                read.close().await;
                write.close().await;
            }
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => pool.close().await,
        }
    }

    pub(crate) fn pools(&self) -> &Pools {
        &self.inner.pools
    }

    /// The database this names, for state shared by every `Db` of this
    /// process on it (`None`: pools handed in, shared by this `Db`'s
    /// clones only).
    pub(crate) fn identity(&self) -> Option<&str> {
        self.inner.identity.as_deref()
    }

    /// The attachment of type `T`, made by `make` on first use. A `Db` has
    /// one attachment type (semantic recall's).
    pub(crate) fn attachment<T: Attachment>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let any: Arc<dyn Any + Send + Sync> = self
            .inner
            .attachment
            .get_or_init(|| Arc::new(make()))
            .clone();
        any.downcast()
            .unwrap_or_else(|_| unreachable!("one attachment type per database"))
    }

    /// Tells the attachment that `thread` was deleted.
    pub(crate) fn thread_deleted(&self, thread: &str) {
        if let Some(a) = self.inner.attachment.get() {
            a.thread_deleted(thread);
        }
    }
}

#[cfg(feature = "sqlite")]
/// SQLite has no migration lock: two processes opening a new file at once
/// can collide (`database is locked`, or the second inserting an applied
/// version). The migrations are idempotent and sqlx skips applied ones, so
/// a few retries settle it.
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
                return Err(AgentMemoryError::Store(
                    StoreError::new(nodekit_core::error::Backend::Sqlite, e)
                        .during("cannot migrate the schema"),
                )
                .into());
            }
        }
    }
}

#[cfg(feature = "postgres")]
async fn migrate_postgres(pool: &PgPool) -> Result<()> {
    migrator(POSTGRES_MIGRATIONS).run(pool).await.map_err(|e| {
        AgentMemoryError::Store(
            StoreError::new(nodekit_core::error::Backend::Postgres, e)
                .during("cannot migrate the schema"),
        )
        .into()
    })
}

/// A failed query (or transaction, or row), with the driver's error kept.
pub(crate) fn db_err(e: sqlx::Error) -> Error {
    AgentMemoryError::Store(nodekit_db::store_error(None, e)).into()
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Checks a resource or thread id: ids are bound as parameters, so any text
/// is safe; these limits keep keys sane and error messages short.
pub(crate) fn check_id(kind: &'static str, id: &str) -> Result<()> {
    let problem = if id.is_empty() {
        "is empty"
    } else if id.chars().count() > MAX_ID_CHARS {
        "is longer than 255 characters"
    } else if id.contains('\0') {
        "contains a NUL character"
    } else {
        return Ok(());
    };
    Err(AgentMemoryError::InvalidId {
        kind,
        id: shorten(id, 60),
        problem,
    }
    .into())
}

/// The error for a write to another resource's thread; it never names the owner.
pub(crate) fn ownership(resource: &str, thread: &str) -> Error {
    AgentMemoryError::ThreadOwnership {
        thread: shorten(thread, 80),
        resource: shorten(resource, 80),
    }
    .into()
}

/// The error for a thread that does not exist, or belongs to another
/// resource where that must look the same.
pub(crate) fn no_thread(thread: &str) -> Error {
    AgentMemoryError::NoThread {
        thread: shorten(thread, 80),
    }
    .into()
}

/// Runs `$body` with `$pool` bound to the reading pool of the [`Db`]
/// `$db`. A macro rather than generic code: each arm is type-checked for
/// its own database, which spares a wall of sqlx trait bounds.
macro_rules! on_reader {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db.pools() {
            #[cfg(feature = "sqlite")]
            $crate::db::Pools::Sqlite { read: $pool, .. } => $body,
            #[cfg(feature = "postgres")]
            $crate::db::Pools::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` with `$tx` bound to a write transaction of the [`Db`]
/// `$db` (`BEGIN IMMEDIATE` on SQLite: take the write lock first, so the
/// transaction never has to upgrade a read lock, which fails at once when
/// another process wrote).
macro_rules! in_write_tx {
    ($db:expr, $tx:ident => $body:expr) => {
        match $db.pools() {
            #[cfg(feature = "sqlite")]
            $crate::db::Pools::Sqlite { write, .. } => {
                #[allow(unused_mut)]
                let mut $tx = write
                    .begin_with("BEGIN IMMEDIATE")
                    .await
                    .map_err($crate::db::db_err)?;
                $body
            }
            #[cfg(feature = "postgres")]
            $crate::db::Pools::Postgres(pool) => {
                #[allow(unused_mut)]
                let mut $tx = pool.begin().await.map_err($crate::db::db_err)?;
                $body
            }
        }
    };
}

pub(crate) use {in_write_tx, on_reader};
