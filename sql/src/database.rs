//! The database a SQL tool talks to: a PostgreSQL (or Neon) pool or a SQLite
//! file, its live schema, and statements run with the tool's limits.
//!
//! Every call reads the table's columns from the catalog (`pg_catalog` /
//! `pragma_table_info`) inside the same transaction as the statement, so
//! the checks see the schema the statement runs against.

#[cfg(feature = "sqlite")]
use std::str::FromStr;
#[cfg(feature = "sqlite")]
use std::sync::atomic::Ordering;
use std::time::Duration;
#[cfg(feature = "sqlite")]
use std::time::Instant;

use futures::TryStreamExt;
use serde_json::{Map, Value};
#[cfg(feature = "postgres")]
use sqlx::postgres::PgPool;
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{Arguments, AssertSqlSafe};

#[cfg(feature = "postgres")]
use nodekit_db::postgres::Postgres;

use super::error::classify;
use super::response::{ErrorType, Reason, ToolError};
use super::schema::{Column, ColumnKind, Dialect, Table};
#[cfg(feature = "postgres")]
use super::value::pg_row_keyed;
use super::value::row_keys;
#[cfg(feature = "sqlite")]
use super::value::sqlite_row_keyed;
use super::writer::Bind;

/// Connections kept by each of a SQLite tool's pools.
#[cfg(feature = "sqlite")]
const POOL_SIZE: u32 = 4;
/// SQLite VM steps between two deadline checks: about 0.1 ms of work. Every
/// 100 steps cost a quarter of the time of reading rows; a single step is
/// kept short by the limits of `sqlite_guard`.
#[cfg(feature = "sqlite")]
const PROGRESS_STEPS: i32 = 10_000;
/// How long a call waits for a free connection.
#[cfg(feature = "sqlite")]
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a SQLite tool's data lives (nodekit's `sqlite` credential).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, nodekit_macros::NodeParams)]
#[serde(rename_all = "camelCase")]
pub struct SqliteConfig {
    /// Path of an existing database file; tools never create one.
    #[param(display_name = "Database Path", placeholder = "/data/app.db")]
    pub database_path: String,
}

/// A database a SQL tool may use: its pools, and which database they reach.
#[derive(Debug, Clone)]
pub struct Database {
    pools: Pools,
    target: std::sync::Arc<str>,
}

#[derive(Debug, Clone)]
enum Pools {
    /// A PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres(PgPool),
    /// A SQLite file: a read-only pool for reads, a read-write one for writes.
    #[cfg(feature = "sqlite")]
    Sqlite {
        /// Opened read-only: reads cannot write whatever the SQL says.
        read: SqlitePool,
        /// Opened read-write, used only by write operations.
        write: SqlitePool,
    },
}

/// Most bytes of rows in one answer: a model cannot read more, and a cap
/// on rows alone lets one row carry a whole table (`string_agg`).
pub const MAX_ANSWER_BYTES: usize = 2 << 20;

/// What a statement returned: rows (cut at the limit) and how many there were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The rows kept, at most the limit.
    pub rows: Vec<Map<String, Value>>,
    /// Rows the statement returned or changed.
    pub count: u64,
    /// Whether rows beyond the limit were dropped.
    pub truncated: bool,
    /// Whether rows were dropped because the answer reached [`MAX_ANSWER_BYTES`].
    pub too_large: bool,
    /// About the bytes of `rows` as JSON.
    pub bytes: usize,
}

/// The limits of one statement.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time the statement may take.
    pub timeout: Duration,
    /// Run in a read-only transaction (or on the read-only SQLite pool).
    pub read_only: bool,
}

/// A credential that cannot make a connection, masked like the driver's errors.
#[cfg(feature = "postgres")]
pub(crate) fn connection_error(e: nodekit_core::error::Error) -> ToolError {
    ToolError::new(
        ErrorType::ConnectionError,
        super::error::mask(&e.to_string()),
    )
}

impl Database {
    /// The database `pg` reaches.
    #[cfg(feature = "postgres")]
    pub fn postgres(pg: &Postgres) -> Database {
        Database {
            target: pg.target().into(),
            pools: Pools::Postgres(pg.pool().clone()),
        }
    }

    /// Pools for an existing SQLite file; opens it on first use.
    #[cfg(feature = "sqlite")]
    pub fn sqlite(config: &SqliteConfig) -> Result<Database, ToolError> {
        let path = config.database_path.trim();
        if path.is_empty() {
            return Err(ToolError::new(
                ErrorType::ConnectionError,
                "the sqlite credential has no databasePath",
            ));
        }
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))
            .map_err(|_| {
                ToolError::new(ErrorType::ConnectionError, "the SQLite path cannot be read")
            })?
            .create_if_missing(false)
            .busy_timeout(Duration::from_secs(5));
        let pool = |options: SqliteConnectOptions| {
            SqlitePoolOptions::new()
                .max_connections(POOL_SIZE)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                // A local file's connection does not go stale: no ping first.
                .test_before_acquire(false)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        super::sqlite_guard::apply(&mut conn.lock_handle().await?);
                        Ok(())
                    })
                })
                .connect_lazy_with(options)
        };
        // The same file by any path: one database, as a transaction sees it.
        let target = std::fs::canonicalize(path)
            .map_or_else(|_| path.to_owned(), |p| p.to_string_lossy().into_owned());
        Ok(Database {
            pools: Pools::Sqlite {
                read: pool(options.clone().read_only(true)),
                write: pool(options),
            },
            target: format!("sqlite:{target}").into(),
        })
    }

    /// Which database this is (server, port, database and user; or the
    /// file), without credentials: tools of one agent run that reach the
    /// same database share its open transaction.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The dialect of this database.
    pub fn dialect(&self) -> Dialect {
        match self.pools {
            #[cfg(feature = "postgres")]
            Pools::Postgres(_) => Dialect::Postgres,
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { .. } => Dialect::Sqlite,
        }
    }

    /// The schema used when the settings name none.
    pub fn default_schema(&self) -> &'static str {
        match self.pools {
            #[cfg(feature = "postgres")]
            Pools::Postgres(_) => "public",
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { .. } => "main",
        }
    }

    /// Opens a session for one call: a transaction with the call's limits.
    pub async fn session(&self, schema: &str, limits: Limits) -> Result<Session, ToolError> {
        match &self.pools {
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => {
                let ms = limits.timeout.as_millis().max(1);
                let mode = if limits.read_only { " READ ONLY" } else { "" };
                // One simple-protocol round trip: the transaction, its time
                // limits and a search path holding only the tool's schema, so
                // unqualified names in executed SQL resolve there.
                // The application name tags the call's backend, so that a
                // call dropped half-way can cancel its statement.
                let cancel = CancelOnDrop::new(pool);
                let mut begin = format!(
                    "BEGIN{mode}; SET LOCAL statement_timeout = {ms}; SET LOCAL lock_timeout = {ms}; SET LOCAL application_name = '{}'; SET LOCAL search_path TO ",
                    cancel.tag
                );
                super::writer::quote_ident(&mut begin, schema);
                let tx = nodekit_db::postgres::refused_at_once(
                    pool,
                    pool.begin_with(AssertSqlSafe(begin)),
                )
                .await
                .map_err(|e| classify(&e))?;
                let mut cancel = cancel;
                cancel.armed = true;
                Ok(Session::Postgres {
                    tx,
                    schema: schema.to_owned(),
                    read_only: limits.read_only,
                    cancel,
                })
            }
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { read, write } => {
                if schema != "main" {
                    return Err(ToolError::new(
                        ErrorType::InvalidTable,
                        format!(
                            "SQLite tools use the `main` schema, not `{}`",
                            super::writer::clip(schema)
                        ),
                    ));
                }
                // SQLite has no statement timeout: a progress handler that
                // returns false at the deadline interrupts the statement.
                // Each session sets its own before running anything, so the
                // expired one a read leaves behind is never reached.
                let deadline = Instant::now() + limits.timeout;
                let stop = StopOnDrop::default();
                let stopped = stop.0.clone();
                let handler = move || Instant::now() < deadline && !stopped.load(Ordering::Relaxed);
                if limits.read_only {
                    // No transaction: the connection was opened read-only,
                    // and one statement is atomic on its own.
                    let mut conn = read.acquire().await.map_err(|e| classify(&e))?;
                    conn.lock_handle()
                        .await
                        .map_err(|e| classify(&e))?
                        .set_progress_handler(PROGRESS_STEPS, handler);
                    return Ok(Session::SqliteRead { conn, stop });
                }
                let mut tx = write.begin().await.map_err(|e| classify(&e))?;
                tx.lock_handle()
                    .await
                    .map_err(|e| classify(&e))?
                    .set_progress_handler(PROGRESS_STEPS, handler);
                Ok(Session::SqliteWrite { tx, stop })
            }
        }
    }
}

/// One call's connection, inside a transaction on PostgreSQL.
pub enum Session {
    /// A PostgreSQL transaction.
    #[cfg(feature = "postgres")]
    Postgres {
        /// The open transaction.
        tx: sqlx::Transaction<'static, sqlx::Postgres>,
        /// The schema the tool uses.
        schema: String,
        /// Whether the transaction is read-only.
        read_only: bool,
        /// Cancels the running statement if the session is dropped before it ends.
        cancel: CancelOnDrop,
    },
    /// A read-only SQLite connection.
    #[cfg(feature = "sqlite")]
    SqliteRead {
        /// The connection.
        conn: sqlx::pool::PoolConnection<sqlx::Sqlite>,
        /// Interrupts the running statement if the session is dropped.
        stop: StopOnDrop,
    },
    /// A SQLite transaction for writes.
    #[cfg(feature = "sqlite")]
    SqliteWrite {
        /// The open transaction.
        tx: sqlx::Transaction<'static, sqlx::Sqlite>,
        /// Interrupts the running statement if the session is dropped.
        stop: StopOnDrop,
    },
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { .. } => "Session::Postgres",
            #[cfg(feature = "sqlite")]
            Session::SqliteRead { .. } => "Session::SqliteRead",
            #[cfg(feature = "sqlite")]
            Session::SqliteWrite { .. } => "Session::SqliteWrite",
        })
    }
}

impl Session {
    /// The SQLite connection of a SQLite session.
    #[cfg(feature = "sqlite")]
    pub(super) fn sqlite(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { .. } => None,
            Session::SqliteRead { conn, .. } => Some(&mut **conn),
            Session::SqliteWrite { tx, .. } => Some(&mut **tx),
        }
    }

    /// The names of the tables and views of the schema.
    pub async fn tables(&mut self) -> Result<Vec<String>, ToolError> {
        let rows: Vec<(String,)> = match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, schema, .. } => sqlx::query_as(
                "SELECT c.relname::text FROM pg_catalog.pg_class c \
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p', 'f') \
                 ORDER BY 1",
            )
            .bind(schema.as_str())
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| classify(&e))?,
            #[cfg(feature = "sqlite")]
            sqlite => sqlx::query_as(
                "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') \
                 AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY 1",
            )
            .fetch_all(sqlite.sqlite().expect("a SQLite session"))
            .await
            .map_err(|e| classify(&e))?,
        };
        Ok(rows.into_iter().map(|(name,)| name).collect())
    }

    /// Every (table, column) of the schema's tables and views, by table.
    pub async fn schema_columns(&mut self) -> Result<Vec<(String, String)>, ToolError> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, schema, .. } => {
                sqlx::query_as(
                    "SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a \
                 JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p', 'f') \
                 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum",
                )
                .bind(schema.as_str())
                .fetch_all(&mut **tx)
                .await
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                sqlx::query_as(
                    "SELECT s.name, p.name FROM sqlite_schema s, pragma_table_info(s.name) p \
                 WHERE s.type IN ('table', 'view') AND s.name NOT LIKE 'sqlite!_%' ESCAPE '!' \
                 ORDER BY s.name, p.cid",
                )
                .fetch_all(sqlite.sqlite().expect("a SQLite session"))
                .await
            }
        }
        .map_err(|e| classify(&e))
    }

    /// The columns of table `name` (exact catalog name), or `None` when it has none.
    pub async fn table(&mut self, name: &str) -> Result<Option<Table>, ToolError> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, schema, .. } => {
                let rows: Vec<(String, String, String, String)> = sqlx::query_as(
                    "SELECT a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), \
                     t.typname::text, t.typcategory::text \
                     FROM pg_catalog.pg_attribute a \
                     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
                     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                     JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
                     WHERE n.nspname = $1 AND c.relname = $2 \
                     AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND a.attnum > 0 \
                     AND NOT a.attisdropped ORDER BY a.attnum",
                )
                .bind(schema.as_str())
                .bind(name)
                .fetch_all(&mut **tx)
                .await
                .map_err(|e| classify(&e))?;
                let columns: Vec<Column> = rows
                    .into_iter()
                    .map(|(name, sql_type, typname, category)| Column {
                        kind: pg_kind(&typname, &category),
                        name,
                        sql_type,
                    })
                    .collect();
                Ok((!columns.is_empty()).then(|| Table {
                    name: name.to_owned(),
                    columns,
                }))
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                // Only user tables and views: `pragma_table_info` alone also
                // describes `sqlite_schema` and the `sqlite_stat*` tables.
                let rows: Vec<(String, String, String)> = sqlx::query_as(
                    "SELECT s.name, p.name, p.type FROM sqlite_schema s, pragma_table_info(s.name) p \
                     WHERE s.type IN ('table', 'view') AND s.name = ?1 \
                     AND s.name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY p.cid",
                )
                .bind(name)
                .fetch_all(sqlite.sqlite().expect("a SQLite session"))
                .await
                .map_err(|e| classify(&e))?;
                Ok(rows
                    .first()
                    .map(|(table, _, _)| table.clone())
                    .map(|table| Table {
                        name: table,
                        columns: rows
                            .into_iter()
                            .map(|(_, name, sql_type)| Column {
                                kind: sqlite_kind(&sql_type),
                                name,
                                sql_type,
                            })
                            .collect(),
                    }))
            }
        }
    }

    /// The schema qualifier to write before table names.
    pub fn schema(&self) -> Option<&str> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { schema, .. } => Some(schema),
            #[cfg(feature = "sqlite")]
            _ => None,
        }
    }

    /// Runs one statement, keeping at most `max_rows` of the rows it returns
    /// while counting them all; `count` is the rows affected when it returns none.
    ///
    /// On PostgreSQL this is the extended protocol: one statement per
    /// message, so a second statement cannot ride along. Statements are
    /// cached per connection (a bounded LRU): the tools write the same
    /// shapes again and again.
    // `fetch_many` is deprecated for multi-statement text; here it runs one
    // checked statement, and it is the one call that yields both the rows
    // and the affected-row count of a write without RETURNING.
    #[allow(deprecated)]
    pub async fn run(
        &mut self,
        sql: String,
        binds: Vec<Bind>,
        max_rows: usize,
    ) -> Result<Outcome, ToolError> {
        let mut out = Outcome::default();
        let mut keys = None;
        // A read stops at a full answer; a write is counted to the end.
        let reading = match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { read_only, .. } => *read_only,
            #[cfg(feature = "sqlite")]
            Session::SqliteRead { .. } => true,
            #[cfg(feature = "sqlite")]
            Session::SqliteWrite { .. } => false,
        };
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, .. } => {
                let query =
                    sqlx::query_with(AssertSqlSafe(sql), arguments::<sqlx::Postgres>(binds)?);
                let mut stream = query.fetch_many(&mut **tx);
                while let Some(step) = stream.try_next().await.map_err(|e| classify(&e))? {
                    match step {
                        sqlx::Either::Left(done) => {
                            if out.count == 0 {
                                out.count = done.rows_affected();
                            }
                        }
                        sqlx::Either::Right(row) => {
                            let room = keep(&mut out, max_rows, || {
                                pg_row_keyed(&row, keys.get_or_insert_with(|| row_keys(&row)))
                            })?;
                            if !room && reading {
                                break;
                            }
                        }
                    }
                }
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                let query = sqlx::query_with(AssertSqlSafe(sql), arguments::<sqlx::Sqlite>(binds)?);
                let mut stream = query.fetch_many(sqlite.sqlite().expect("a SQLite session"));
                // Rows are taken off sqlx's worker thread first and turned
                // into JSON after: decoding while the worker streams costs a
                // thread hand-off per row. The buffer is bounded like the
                // answer: by rows and by bytes.
                let mut rows = 0;
                let mut affected = 0;
                let mut buffered = Vec::new();
                let mut bytes = 0;
                while let Some(step) = stream.try_next().await.map_err(|e| classify(&e))? {
                    match step {
                        sqlx::Either::Left(done) => affected = done.rows_affected(),
                        sqlx::Either::Right(row) => {
                            rows += 1;
                            if buffered.len() <= max_rows && bytes <= MAX_ANSWER_BYTES {
                                bytes += sqlite_row_bytes(&row);
                                buffered.push(row);
                            } else if reading {
                                break;
                            }
                        }
                    }
                }
                drop(stream);
                for row in &buffered {
                    let room = keep(&mut out, max_rows, || {
                        sqlite_row_keyed(row, keys.get_or_insert_with(|| row_keys(row)))
                    })?;
                    if !room {
                        break;
                    }
                }
                out.truncated |= rows > buffered.len() as u64;
                out.count = affected.max(rows);
            }
        }
        Ok(out)
    }

    /// The rows of `table` (a catalog name) as this session sees them,
    /// counted up to `cap` when given.
    pub async fn count(&mut self, table: &str, cap: Option<i64>) -> Result<i64, ToolError> {
        let mut name = String::new();
        if let Some(schema) = self.schema() {
            super::writer::quote_ident(&mut name, schema);
            name.push('.');
        }
        super::writer::quote_ident(&mut name, table);
        let sql = match cap {
            None => format!("SELECT count(*) FROM {name}"),
            Some(cap) => {
                format!("SELECT count(*) FROM (SELECT 1 FROM {name} LIMIT {cap}) AS counted")
            }
        };
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, .. } => {
                sqlx::query_scalar(AssertSqlSafe(sql))
                    .fetch_one(&mut **tx)
                    .await
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                sqlx::query_scalar(AssertSqlSafe(sql))
                    .fetch_one(sqlite.sqlite().expect("a SQLite session"))
                    .await
            }
        }
        .map_err(|e| classify(&e))
    }

    /// Starts one call inside a transaction that outlives it (an agent
    /// run's, [`super::transaction`]): a savepoint, so the call can be
    /// undone alone (and a failed statement does not abort the whole
    /// transaction on PostgreSQL), and the call's own time limit.
    /// A read (`read_only`) cannot write: PostgreSQL's savepoint is read-only
    /// (until `ROLLBACK TO`), SQLite's connection `query_only` (until
    /// [`Session::leave_call`]).
    pub async fn enter_call(
        &mut self,
        timeout: Duration,
        read_only: bool,
    ) -> Result<(), ToolError> {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, .. } => {
                let ms = timeout.as_millis().max(1);
                let read = if read_only {
                    "; SET LOCAL transaction_read_only = on"
                } else {
                    ""
                };
                sqlx::raw_sql(AssertSqlSafe(format!(
                    "SAVEPOINT nodekit_call; SET LOCAL statement_timeout = {ms}; SET LOCAL lock_timeout = {ms}{read}"
                )))
                .execute(&mut **tx)
                .await
                .map_err(|e| classify(&e))?;
            }
            #[cfg(feature = "sqlite")]
            sqlite => {
                let conn = sqlite.sqlite().expect("a SQLite session");
                let deadline = Instant::now() + timeout;
                conn.lock_handle()
                    .await
                    .map_err(|e| classify(&e))?
                    .set_progress_handler(PROGRESS_STEPS, move || Instant::now() < deadline);
                let sql = if read_only {
                    "SAVEPOINT nodekit_call; PRAGMA query_only = 1"
                } else {
                    "SAVEPOINT nodekit_call"
                };
                sqlx::raw_sql(sql)
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| classify(&e))?;
            }
        }
        Ok(())
    }

    /// Ends a call begun with [`Session::enter_call`], keeping what it did
    /// or undoing it; the transaction stays open.
    pub async fn leave_call(&mut self, keep: bool) -> Result<(), ToolError> {
        let sql = if keep {
            "RELEASE SAVEPOINT nodekit_call"
        } else {
            "ROLLBACK TO SAVEPOINT nodekit_call; RELEASE SAVEPOINT nodekit_call"
        };
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, .. } => sqlx::raw_sql(sql).execute(&mut **tx).await.map(drop),
            #[cfg(feature = "sqlite")]
            sqlite => {
                let conn = sqlite.sqlite().expect("a SQLite session");
                // Ending the savepoint must not be interrupted.
                if let Ok(mut handle) = conn.lock_handle().await {
                    handle.remove_progress_handler();
                }
                let writable = sqlx::raw_sql("PRAGMA query_only = 0")
                    .execute(&mut *conn)
                    .await;
                let ended = sqlx::raw_sql(sql).execute(&mut *conn).await;
                writable.and(ended).map(drop)
            }
        }
        .map_err(|e| classify(&e))
    }

    /// Ends the call, keeping its changes.
    pub async fn commit(self) -> Result<(), ToolError> {
        match self {
            // A read has nothing to keep: dropping the transaction queues its
            // ROLLBACK, which the pool flushes off the call's critical path.
            #[cfg(feature = "postgres")]
            Session::Postgres {
                read_only: true,
                mut cancel,
                ..
            } => {
                cancel.disarm();
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Session::SqliteRead { .. } => Ok(()),
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, mut cancel, .. } => {
                let committed = tx.commit().await;
                cancel.disarm();
                committed.map_err(|e| classify(&e))
            }
            #[cfg(feature = "sqlite")]
            Session::SqliteWrite { mut tx, .. } => {
                release(&mut tx).await;
                tx.commit().await.map_err(|e| classify(&e))
            }
        }
    }

    /// Ends the call, undoing its changes.
    pub async fn rollback(self) {
        match self {
            #[cfg(feature = "postgres")]
            Session::Postgres { tx, mut cancel, .. } => {
                let _ = tx.rollback().await;
                cancel.disarm();
            }
            #[cfg(feature = "sqlite")]
            Session::SqliteRead { .. } => {}
            #[cfg(feature = "sqlite")]
            Session::SqliteWrite { mut tx, .. } => {
                release(&mut tx).await;
                let _ = tx.rollback().await;
            }
        }
    }
}

/// Interrupts a SQLite session's running statement when the session is
/// dropped before it ended (its call was cancelled, or its client went
/// away): SQLite runs it on a thread of its own, which would otherwise go
/// on until the call's deadline, holding the connection (and, for a write,
/// the database's write lock). The session's progress handler reads it.
#[cfg(feature = "sqlite")]
#[derive(Debug, Default)]
pub struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

#[cfg(feature = "sqlite")]
impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Cancels a PostgreSQL session's running statement when the session is
/// dropped before it ended (its call was cancelled, or its client went
/// away): dropping the future leaves the statement running on the server
/// until its time limit, and the connection busy until then. The session's
/// backend is found by the application name its transaction set.
#[cfg(feature = "postgres")]
pub struct CancelOnDrop {
    pool: PgPool,
    tag: String,
    armed: bool,
}

#[cfg(feature = "postgres")]
impl CancelOnDrop {
    /// A guard for a session of `pool`, armed once its transaction began.
    fn new(pool: &PgPool) -> CancelOnDrop {
        CancelOnDrop {
            pool: pool.clone(),
            tag: format!("nodekit-call-{}", uuid::Uuid::new_v4().simple()),
            armed: false,
        }
    }

    /// The session ended: there is nothing to cancel.
    fn disarm(&mut self) {
        self.armed = false;
    }
}

#[cfg(feature = "postgres")]
impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if !self.armed {
            return;
        }
        // A connection of its own: the pool may be full of the very
        // statements being cancelled.
        let (options, tag) = (self.pool.connect_options(), std::mem::take(&mut self.tag));
        CANCELLING.spawn_on(
            async move {
                let cancel = async {
                    let mut conn = sqlx::ConnectOptions::connect(&*options).await?;
                    sqlx::query(
                        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity \
                         WHERE application_name = $1 AND state = 'active'",
                    )
                    .bind(&tag)
                    .execute(&mut conn)
                    .await?;
                    sqlx::Connection::close(conn).await
                };
                match tokio::time::timeout(CANCEL_TIMEOUT, cancel).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "cannot cancel the statement of a dropped SQL tool call"),
                    Err(_) => tracing::warn!("cannot cancel the statement of a dropped SQL tool call: no answer within {CANCEL_TIMEOUT:?}"),
                }
            },
            &runtime,
        );
    }
}

/// How long a cancellation may take, connecting included.
#[cfg(feature = "postgres")]
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// The cancellations [`CancelOnDrop`] sent that have not been answered yet.
#[cfg(feature = "postgres")]
static CANCELLING: std::sync::LazyLock<tokio_util::task::TaskTracker> =
    std::sync::LazyLock::new(tokio_util::task::TaskTracker::new);

/// Waits, up to `within`, until the statements of SQL tool calls that were
/// dropped half-way (cancelled, or cut off by their client going away) are
/// cancelled on their servers. A program that stops right after its
/// callers went away calls it last: otherwise those statements run on
/// until their time limit. Returns at once when there are none.
#[cfg(feature = "postgres")]
pub async fn settle(within: Duration) {
    let tracker = &*CANCELLING;
    tracker.close();
    let _ = tokio::time::timeout(within, tracker.wait()).await;
    tracker.reopen();
}

/// Removes the deadline before `COMMIT` or `ROLLBACK`, which must not be interrupted.
#[cfg(feature = "sqlite")]
async fn release(tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>) {
    if let Ok(mut handle) = tx.lock_handle().await {
        handle.remove_progress_handler();
    }
}

/// Counts a row and keeps it while the answer has room; `false` once it is
/// full, when a read may stop reading.
fn keep(
    out: &mut Outcome,
    max_rows: usize,
    row: impl FnOnce() -> Result<Map<String, Value>, ToolError>,
) -> Result<bool, ToolError> {
    out.count += 1;
    if out.truncated {
        return Ok(false);
    }
    if out.rows.len() >= max_rows {
        out.truncated = true;
        return Ok(false);
    }
    let row = row()?;
    let size = json_size(&row);
    if out.bytes + size > MAX_ANSWER_BYTES {
        out.truncated = true;
        out.too_large = true;
        return Ok(false);
    }
    out.bytes += size;
    out.rows.push(row);
    Ok(true)
}

/// About the bytes of a SQLite row's values, read without copying them.
/// Only text and blobs are read as bytes: reading a number as bytes would
/// convert the value to text inside SQLite.
#[cfg(feature = "sqlite")]
fn sqlite_row_bytes(row: &sqlx::sqlite::SqliteRow) -> usize {
    use sqlx::{Decode, Row as _, Sqlite, TypeInfo as _, ValueRef as _};
    (0..row.len())
        .map(|i| match row.try_get_raw(i) {
            Ok(raw) if !raw.is_null() && matches!(raw.type_info().name(), "TEXT" | "BLOB") => {
                <&[u8] as Decode<Sqlite>>::decode(raw).map_or(8, <[u8]>::len)
            }
            _ => 8,
        })
        .sum()
}

/// About the bytes of `row` as JSON text: strings and keys by length, other values by a constant.
fn json_size(row: &Map<String, Value>) -> usize {
    fn value(v: &Value) -> usize {
        match v {
            Value::String(s) => s.len() + 2,
            Value::Array(items) => items.iter().map(value).sum::<usize>() + 2,
            Value::Object(m) => json_size(m),
            _ => 8,
        }
    }
    row.iter()
        .map(|(k, v)| k.len() + 4 + value(v))
        .sum::<usize>()
        + 2
}

/// The binds as `DB`'s arguments, in order.
fn arguments<DB>(binds: Vec<Bind>) -> Result<DB::Arguments, ToolError>
where
    DB: sqlx::Database,
    for<'t> Option<String>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> bool: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> f64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Vec<u8>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let mut args = DB::Arguments::default();
    for bind in binds {
        let added = match bind {
            Bind::Null => args.add(None::<String>),
            Bind::Bool(v) => args.add(v),
            Bind::Int(v) => args.add(v),
            Bind::Float(v) => args.add(v),
            Bind::Text(v) => args.add(v),
            Bind::Bytes(v) => args.add(v),
        };
        added.map_err(|e| {
            ToolError::new(
                ErrorType::ConstraintViolation,
                format!("a value cannot be bound: {e}"),
            )
            .because(Reason::WrongType)
        })?;
    }
    Ok(args)
}

/// The kind of a PostgreSQL type, from its name and `typcategory`.
#[cfg(feature = "postgres")]
fn pg_kind(typname: &str, category: &str) -> ColumnKind {
    match (typname, category) {
        ("int2" | "int4" | "int8" | "oid", _) => ColumnKind::Integer,
        ("float4" | "float8", _) => ColumnKind::Float,
        ("numeric" | "money", _) => ColumnKind::Numeric,
        ("bool", _) => ColumnKind::Boolean,
        ("json" | "jsonb", _) => ColumnKind::Json,
        ("bytea", _) => ColumnKind::Bytes,
        (_, "S") => ColumnKind::Text,
        (_, "D" | "T") => ColumnKind::Temporal,
        _ => ColumnKind::Other,
    }
}

/// The kind of a SQLite column, from its declared type by SQLite's affinity
/// rules (with booleans, dates and JSON told apart for JSON output).
#[cfg(feature = "sqlite")]
fn sqlite_kind(declared: &str) -> ColumnKind {
    let t = declared.to_ascii_uppercase();
    if t.starts_with("BOOL") {
        ColumnKind::Boolean
    } else if t.contains("INT") {
        ColumnKind::Integer
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        ColumnKind::Text
    } else if t.contains("BLOB") {
        ColumnKind::Bytes
    } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
        ColumnKind::Float
    } else if t.contains("DATE") || t.contains("TIME") {
        ColumnKind::Temporal
    } else if t.contains("JSON") {
        ColumnKind::Json
    } else if t.contains("NUM") || t.contains("DEC") {
        ColumnKind::Numeric
    } else {
        ColumnKind::Other
    }
}
