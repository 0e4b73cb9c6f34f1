//! Real stores for integration tests: the servers of `scripts/services.sh`
//! (skipped with a reason outside CI when their variable is missing, a
//! failure under `CI=true`), unique names per run, and an agent-memory
//! store in a PostgreSQL schema of its own.

// Each test crate uses the part it needs.
#![allow(dead_code)]

use std::str::FromStr;

use nodekit::agent_memory::Store;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

pub use nodekit_test_support::{server, unique};

/// A fresh SQLite file path in the temporary folder.
pub fn temp_db(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{}.db", unique(&format!("nodekit_am_{name}"))))
}

/// An agent-memory store in a fresh SQLite file.
pub async fn sqlite(name: &str) -> Store {
    Store::open_sqlite(temp_db(name)).await.unwrap()
}

/// An agent-memory store in a fresh PostgreSQL schema, dropped by [`Pg::drop`].
pub struct Pg {
    admin: PgPool,
    schema: String,
    /// How to reach the schema (another store can open it too).
    pub options: PgConnectOptions,
    /// The store.
    pub store: Store,
}

impl Pg {
    /// On the plain server (`DATABASE_URL`); `None` when the variable is
    /// not set outside CI.
    pub async fn new() -> Option<Pg> {
        Pg::on("DATABASE_URL").await
    }

    /// On the server with pgvector (`PGVECTOR_DATABASE_URL`), the extension
    /// created in `public` (where a database administrator puts it) so
    /// that every test schema sees it.
    pub async fn pgvector() -> Option<Pg> {
        let pg = Pg::on("PGVECTOR_DATABASE_URL").await?;
        // Concurrent tests: one creates it, the others wait on the lock,
        // held until the creating transaction commits.
        let mut tx = pg.admin.begin().await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock(4242)")
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        Some(pg)
    }

    async fn on(var: &str) -> Option<Pg> {
        let url = server(var)?;
        let admin = PgPoolOptions::new()
            .max_connections(2)
            .connect(&url)
            .await
            .unwrap();

        let schema = unique("am_test");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
            .execute(&admin)
            .await
            .unwrap();
        // `public` too, where CREATE EXTENSION puts pgvector's type.
        let options = PgConnectOptions::from_str(&url)
            .unwrap()
            .options([("search_path", format!("{schema},public").as_str())]);
        let store = Store::open_postgres(options.clone()).await.unwrap();
        Some(Pg {
            admin,
            schema,
            options,
            store,
        })
    }

    /// Closes the store and drops its schema.
    pub async fn drop(self) {
        self.store.close().await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA {} CASCADE",
            self.schema
        )))
        .execute(&self.admin)
        .await
        .unwrap();
    }
}
