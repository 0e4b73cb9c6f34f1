//! Connection pools shared by the nodes one owner supplies.
//!
//! A node that reaches a database through a credential asks its context
//! ([`SupplyContext::pools`](super::SupplyContext::pools)) for the pool of
//! that credential's server instead of opening one of its own. The owner
//! of the contexts decides how far the sharing goes: the n8n bridge keeps
//! one set for its whole process, so every execution, session and node
//! with the same credential uses the same connections; a workflow run
//! keeps one set for the run. A context made on its own has a set of its
//! own.
//!
//! A pool belongs to the Tokio runtime that uses it first, so a set is
//! never process-wide by itself: whoever owns the runtime owns the set.

#[cfg(feature = "postgres")]
use sqlx::postgres::PgConnectOptions;
#[cfg(feature = "postgres")]
use std::collections::HashMap;
#[cfg(feature = "postgres")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "postgres")]
use crate::error::Result;
#[cfg(feature = "postgres")]
use crate::postgres::{Postgres, PostgresConfig};

/// PostgreSQL pools by server and login, opened lazily and kept while the
/// set lives. Cloning shares the set. Idle connections close after sqlx's
/// idle timeout (10 minutes), so a pool nobody uses holds nothing open.
#[derive(Clone, Default)]
pub struct SharedPools {
    /// By server and login, and the name of the session settings the pool's
    /// connections start with (`""` for none).
    #[cfg(feature = "postgres")]
    postgres: Arc<Mutex<HashMap<(PostgresConfig, &'static str), Postgres>>>,
    /// What was made once over a pool (a store whose tables were checked),
    /// by server and login and what it is.
    #[cfg(feature = "postgres")]
    made: Arc<Mutex<HashMap<MadeKey, Made>>>,
}

/// What a made value is kept under: server and login, its type, what it is.
#[cfg(feature = "postgres")]
type MadeKey = (PostgresConfig, std::any::TypeId, String);

/// A value made once; concurrent first uses wait for the one making it.
#[cfg(feature = "postgres")]
type Made = Arc<tokio::sync::OnceCell<Arc<dyn std::any::Any + Send + Sync>>>;

#[cfg(feature = "postgres")]
impl SharedPools {
    /// The pool for `config`'s server and login, made on first use with
    /// nodekit's policy ([`Postgres::new`]); it connects when a connection
    /// is first needed.
    pub fn postgres(&self, config: &PostgresConfig) -> Result<Postgres> {
        self.postgres_with(config, "", |options| options)
    }

    /// The pool for `config`'s server and login whose connections start
    /// with the session settings `settings` adds (named `name`, which
    /// tells it apart from the plain pool and other settings).
    pub(crate) fn postgres_with(
        &self,
        config: &PostgresConfig,
        name: &'static str,
        settings: impl FnOnce(PgConnectOptions) -> PgConnectOptions,
    ) -> Result<Postgres> {
        let key = (config.clone(), name);
        let mut pools = self.postgres.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pg) = pools.get(&key).filter(|pg| !pg.is_closed()) {
            return Ok(pg.clone());
        }
        let pg = Postgres::from_options(settings(config.options()?));
        pools.insert(key, pg.clone());
        Ok(pg)
    }

    /// What `make` makes for `config`'s server and login under `what`
    /// (a description of it, e.g. a store's table and options), made on
    /// first use and kept while the set lives: later uses get the same
    /// value without making it again. A failure is not kept: the next use
    /// tries again.
    pub async fn made_once<T, Fut>(
        &self,
        config: &PostgresConfig,
        what: String,
        make: impl FnOnce() -> Fut,
    ) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let cell = self
            .made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((config.clone(), std::any::TypeId::of::<T>(), what))
            .or_default()
            .clone();
        let made = cell
            .get_or_try_init(|| async {
                let made: Arc<dyn std::any::Any + Send + Sync> = Arc::new(make().await?);
                Ok::<_, crate::Error>(made)
            })
            .await?;
        Ok(made
            .clone()
            .downcast::<T>()
            .expect("the key holds the type"))
    }
}

impl std::fmt::Debug for SharedPools {
    // The keys hold passwords.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("SharedPools");
        #[cfg(feature = "postgres")]
        out.field(
            "postgres",
            &self
                .postgres
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len(),
        );
        out.finish()
    }
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use sqlx::Connection;

    use super::*;

    fn config(database: &str) -> PostgresConfig {
        serde_json::from_value(serde_json::json!({
            "host": "127.0.0.1", "database": database, "user": "u", "password": "p"
        }))
        .unwrap()
    }

    // Lazy pools open nothing, so no server is needed: closing one handle
    // shows which others share its pool.
    #[tokio::test]
    async fn one_pool_per_server_and_login_shared_by_clones() {
        let pools = SharedPools::default();
        let first = pools.postgres(&config("a")).unwrap();
        let same = pools.clone().postgres(&config("a")).unwrap();
        let other = pools.postgres(&config("b")).unwrap();
        let unshared = SharedPools::default().postgres(&config("a")).unwrap();
        first.close().await;
        assert!(same.is_closed());
        assert!(!other.is_closed() && !unshared.is_closed());
        // A closed pool is replaced, not handed out.
        assert!(!pools.postgres(&config("a")).unwrap().is_closed());
        assert_eq!(format!("{pools:?}"), "SharedPools { postgres: 2 }");
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_replaced() {
        let Some(url) = nodekit_test_support::server("DATABASE_URL") else {
            return;
        };
        let config: PostgresConfig =
            serde_json::from_value(nodekit_test_support::postgres_credential(&url)).unwrap();
        let pg = SharedPools::default().postgres(&config).unwrap();
        let backend =
            || sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()").fetch_one(pg.pool());
        let first = backend().await.unwrap();
        let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
        let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(first)
            .fetch_one(&mut other)
            .await
            .unwrap();
        assert!(killed);
        tokio::time::sleep(
            crate::postgres::PING_AFTER_IDLE + std::time::Duration::from_millis(200),
        )
        .await;
        // The pool's only connection is dead: the ping finds it, a new one answers.
        assert_ne!(backend().await.unwrap(), first);
    }

    #[test]
    fn a_bad_ssl_mode_is_refused_without_a_pool() {
        let mut bad = config("a");
        bad.ssl = "sometimes".into();
        let e = SharedPools::default().postgres(&bad).unwrap_err();
        assert!(e.to_string().contains("unknown ssl mode"), "{e}");
    }
}
