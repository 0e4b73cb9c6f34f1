//! A database's failure, with its cause kept: [`StoreError`].

use std::borrow::Cow;

/// A database a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// A SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
    /// A Redis server.
    Redis,
}

impl Backend {
    /// The database's name, as its makers write it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
            Backend::Redis => "Redis",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of failure a [`StoreError`] is, for code that reacts to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// A row with the same unique key exists.
    UniqueViolation,
    /// A referenced row does not exist.
    ForeignKeyViolation,
    /// A `NOT NULL` or `CHECK` constraint refused the row.
    ConstraintViolation,
    /// No connection within the pool's time limit, a statement timeout, or a
    /// database locked past its busy timeout.
    Timeout,
    /// The connection could not be made or was lost.
    Connection,
    /// Anything else.
    Other,
}

/// A database's failure: which database, what was being done, and the
/// driver's error as the [`source`](std::error::Error::source), so callers
/// can inspect it ([`StoreError::kind`], or downcast the source to
/// `sqlx::Error` or `redis::RedisError`). The message is the driver's,
/// which never holds a connection string or a password.
#[derive(Debug, thiserror::Error)]
pub struct StoreError {
    backend: Option<Backend>,
    operation: Option<Cow<'static, str>>,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// `PostgreSQL: cannot connect: <the driver's message>`.
impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.backend.map_or("database", Backend::name))?;
        if let Some(operation) = &self.operation {
            write!(f, ": {operation}")?;
        }
        write!(f, ": {}", self.source)
    }
}

impl StoreError {
    /// `source`, a failure of `backend`.
    pub fn new(
        backend: Backend,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        StoreError {
            backend: Some(backend),
            operation: None,
            source: source.into(),
        }
    }

    /// This error, saying what was being done (e.g. `cannot connect`).
    pub fn during(mut self, operation: impl Into<Cow<'static, str>>) -> Self {
        self.operation = Some(operation.into());
        self
    }

    /// The database that failed, when known.
    pub fn backend(&self) -> Option<Backend> {
        self.backend
    }

    /// What was being done, when it was said.
    pub fn operation(&self) -> Option<&str> {
        self.operation.as_deref()
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> StoreErrorKind {
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        if let Some(e) = self.source.downcast_ref::<sqlx::Error>() {
            return sqlx_kind(e);
        }
        #[cfg(feature = "redis")]
        if let Some(e) = self.source.downcast_ref::<redis::RedisError>() {
            if e.is_timeout() {
                return StoreErrorKind::Timeout;
            }
            if e.is_connection_refusal() || e.is_connection_dropped() || e.is_io_error() {
                return StoreErrorKind::Connection;
            }
        }
        StoreErrorKind::Other
    }

    /// Whether a row with the same unique key exists.
    pub fn is_unique_violation(&self) -> bool {
        self.kind() == StoreErrorKind::UniqueViolation
    }
}

/// A failure of sqlx, on whichever database it names (the backend is
/// `None` when the error does not say, e.g. a pool timeout).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        let backend = e.as_database_error().and_then(|d| {
            #[cfg(feature = "postgres")]
            if d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
                .is_some()
            {
                return Some(Backend::Postgres);
            }
            #[cfg(feature = "sqlite")]
            if d.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                return Some(Backend::Sqlite);
            }
            None
        });
        StoreError {
            backend,
            operation: None,
            source: Box::new(e),
        }
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn sqlx_kind(e: &sqlx::Error) -> StoreErrorKind {
    use sqlx::error::ErrorKind;
    match e {
        sqlx::Error::Database(d) => {
            // PostgreSQL's query_canceled (statement_timeout, lock_timeout),
            // SQLite's SQLITE_BUSY and SQLITE_LOCKED with their extended codes.
            let code = d.code();
            let timed_out = match code.as_deref() {
                Some("57014" | "55P03") => true,
                Some(c) => c.parse::<i32>().is_ok_and(|n| matches!(n & 0xff, 5 | 6)),
                None => false,
            };
            match d.kind() {
                _ if timed_out => StoreErrorKind::Timeout,
                ErrorKind::UniqueViolation => StoreErrorKind::UniqueViolation,
                ErrorKind::ForeignKeyViolation => StoreErrorKind::ForeignKeyViolation,
                ErrorKind::NotNullViolation | ErrorKind::CheckViolation => {
                    StoreErrorKind::ConstraintViolation
                }
                _ => StoreErrorKind::Other,
            }
        }
        sqlx::Error::PoolTimedOut => StoreErrorKind::Timeout,
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => StoreErrorKind::Connection,
        _ => StoreErrorKind::Other,
    }
}
