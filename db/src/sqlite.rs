//! SQLite connections as nodekit's own stores open them (chat history,
//! agent memory, vector stores): one pool builder, with a setting sqlx does
//! not wrap, and the registration of sqlite-vec.

use sqlx::sqlite::{LockedSqliteHandle, SqlitePoolOptions};

/// A pool of up to `max` connections for one of nodekit's stores:
///
/// - no ping before each use: a connection to a local file does not go
///   stale, and the ping is one more round trip to its worker thread;
/// - the query planner's stability guarantee (`SQLITE_DBCONFIG_ENABLE_QPSG`)
///   on every connection. Without it, SQLite (3.47 and later) reads the
///   value bound to a `LIMIT` while it plans, so every execution of a
///   cached statement with `LIMIT $n` is parsed and planned again, which
///   costs more than a short read itself (the 20 newest messages of a
///   thread: 0.14 → 0.10 ms). The stores' statements are written for one
///   plan whatever their values.
pub fn pool_options(max: u32) -> SqlitePoolOptions {
    SqlitePoolOptions::new()
        .max_connections(max)
        .test_before_acquire(false)
        .after_connect(|conn, _| {
            Box::pin(async move {
                stable_plans(&mut conn.lock_handle().await?);
                Ok(())
            })
        })
}

/// Runs `open` again while it fails with SQLite's "database is locked",
/// for up to `within`. Two processes opening one new file at once can get
/// it outside the busy timeout's reach: switching a new file to WAL mode
/// returns it at once when another connection is doing the same.
pub async fn retry_locked<T, F>(
    within: std::time::Duration,
    mut open: impl FnMut() -> F,
) -> Result<T, sqlx::Error>
where
    F: Future<Output = Result<T, sqlx::Error>>,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        match open().await {
            Err(sqlx::Error::Database(e))
                if e.code().as_deref() == Some("5") && std::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            outcome => return outcome,
        }
    }
}

/// Registers sqlite-vec with SQLite for every connection opened afterwards
/// in this process (idempotent).
#[cfg(feature = "sqlite-vec")]
#[allow(unsafe_code)]
pub fn register_sqlite_vec() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut libsqlite3_sys::sqlite3,
            *mut *mut std::ffi::c_char,
            *const libsqlite3_sys::sqlite3_api_routines,
        ) -> std::ffi::c_int;
        // SAFETY: `sqlite3_vec_init` is the extension's entry point, declared
        // by the sqlite-vec crate without arguments; its C signature is
        // exactly `Init` (compiled with SQLITE_CORE, it ignores the API
        // routines pointer and calls the bundled SQLite that
        // libsqlite3-sys links). `sqlite3_auto_extension` only stores the
        // pointer, which stays valid for the life of the process.
        let rc = unsafe {
            let init: Init =
                std::mem::transmute::<*const (), Init>(sqlite_vec::sqlite3_vec_init as *const ());
            libsqlite3_sys::sqlite3_auto_extension(Some(init))
        };
        if rc != libsqlite3_sys::SQLITE_OK {
            tracing::error!(
                rc,
                "cannot register sqlite-vec: vector searches in SQLite will fail"
            );
        }
    });
}

#[allow(unsafe_code)]
fn stable_plans(handle: &mut LockedSqliteHandle<'_>) {
    use libsqlite3_sys as ffi;
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: `db` is a valid, open connection, and holding the locked
    // handle keeps sqlx's worker thread from using it concurrently.
    // `sqlite3_db_config` with ENABLE_QPSG takes an int and an int
    // pointer, which may be null.
    unsafe {
        ffi::sqlite3_db_config(
            db,
            ffi::SQLITE_DBCONFIG_ENABLE_QPSG,
            1,
            std::ptr::null_mut::<std::ffi::c_int>(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(unsafe_code)]
    fn qpsg(handle: &mut LockedSqliteHandle<'_>) -> std::ffi::c_int {
        let mut on: std::ffi::c_int = -1;
        // SAFETY: as in `stable_plans`; a negative value only reads the setting.
        unsafe {
            libsqlite3_sys::sqlite3_db_config(
                handle.as_raw_handle().as_ptr(),
                libsqlite3_sys::SQLITE_DBCONFIG_ENABLE_QPSG,
                -1,
                &mut on as *mut std::ffi::c_int,
            );
        }
        on
    }

    #[tokio::test]
    async fn every_connection_plans_independently_of_bound_values() {
        let pool = pool_options(2).connect("sqlite::memory:").await.unwrap();
        let (mut a, mut b) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
        assert_eq!(qpsg(&mut a.lock_handle().await.unwrap()), 1);
        assert_eq!(qpsg(&mut b.lock_handle().await.unwrap()), 1);
        let plain = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
        let mut c = plain.acquire().await.unwrap();
        assert_eq!(qpsg(&mut c.lock_handle().await.unwrap()), 0);
    }
}
