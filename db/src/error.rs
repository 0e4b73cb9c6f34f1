//! sqlx's errors as [`StoreError`]s, of the kind they are.

use nodekit_core::error::{Backend, StoreError, StoreErrorKind};

/// A failure of sqlx, of the kind it is, on `backend`, or when that is
/// `None` on whichever database the error names (none for an error raised
/// before reaching one, such as a pool timeout).
pub fn store_error(backend: Option<Backend>, e: sqlx::Error) -> StoreError {
    let backend = backend.or_else(|| {
        let d = e.as_database_error()?;
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
    StoreError::from_source(backend, sqlx_kind(&e), e)
}

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
