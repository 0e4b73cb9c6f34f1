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
    kind: StoreErrorKind,
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
        StoreError::from_source(Some(backend), StoreErrorKind::Other, source)
    }

    /// `source`, a failure of `kind`, of `backend` when known: what a
    /// store's crate makes of its driver's error.
    pub fn from_source(
        backend: Option<Backend>,
        kind: StoreErrorKind,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        StoreError {
            backend,
            kind,
            operation: None,
            source: source.into(),
        }
    }

    /// This error, of kind `kind`.
    pub fn with_kind(mut self, kind: StoreErrorKind) -> Self {
        self.kind = kind;
        self
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
        self.kind
    }

    /// Whether a row with the same unique key exists.
    pub fn is_unique_violation(&self) -> bool {
        self.kind() == StoreErrorKind::UniqueViolation
    }
}
