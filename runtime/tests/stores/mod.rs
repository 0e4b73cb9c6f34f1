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
    nodekit_test_support::scratch_dir()
        .join(format!("{}.db", unique(&format!("nodekit_am_{name}"))))
}

/// An agent-memory store in a fresh SQLite file.
pub async fn sqlite(name: &str) -> Store {
    Store::open_sqlite(temp_db(name)).await.unwrap()
}

/// A fresh PostgreSQL schema, dropped by [`Schema::drop`].
pub struct Schema {
    admin: PgPool,
    /// Its name.
    pub name: String,
    /// How to reach it (with `public` on the search path, where CREATE
    /// EXTENSION puts pgvector's type).
    pub options: PgConnectOptions,
}

impl Schema {
    /// On the server `var` names; `None` when the variable is not set
    /// outside CI.
    pub async fn on(var: &str) -> Option<Schema> {
        let url = server(var)?;
        let admin = PgPoolOptions::new()
            .max_connections(2)
            .connect(&url)
            .await
            .unwrap();
        let name = unique("test");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}")))
            .execute(&admin)
            .await
            .unwrap();
        let options = PgConnectOptions::from_str(&url)
            .unwrap()
            .options([("search_path", format!("{name},public").as_str())]);
        Some(Schema {
            admin,
            name,
            options,
        })
    }

    /// On the server with pgvector (`PGVECTOR_DATABASE_URL`), the extension
    /// created in `public` (where a database administrator puts it) so
    /// that every test schema sees it.
    pub async fn pgvector() -> Option<Schema> {
        let schema = Schema::on("PGVECTOR_DATABASE_URL").await?;
        // Concurrent tests: one creates it, the others wait on the lock,
        // held until the creating transaction commits.
        let mut tx = schema.admin.begin().await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock(4242)")
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        Some(schema)
    }

    /// Drops the schema and everything in it.
    pub async fn drop(self) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA {} CASCADE",
            self.name
        )))
        .execute(&self.admin)
        .await
        .unwrap();
    }
}

/// An agent-memory store in a fresh PostgreSQL schema, dropped by [`Pg::drop`].
pub struct Pg {
    schema: Schema,
    /// How to reach the schema (another store can open it too).
    pub options: PgConnectOptions,
    /// The store.
    pub store: Store,
}

impl Pg {
    /// On the plain server (`DATABASE_URL`); `None` when the variable is
    /// not set outside CI.
    pub async fn new() -> Option<Pg> {
        Pg::in_schema(Schema::on("DATABASE_URL").await?).await
    }

    /// On the server with pgvector (see [`Schema::pgvector`]).
    pub async fn pgvector() -> Option<Pg> {
        Pg::in_schema(Schema::pgvector().await?).await
    }

    async fn in_schema(schema: Schema) -> Option<Pg> {
        let options = schema.options.clone();
        let store = Store::open_postgres(options.clone()).await.unwrap();
        Some(Pg {
            schema,
            options,
            store,
        })
    }

    /// Closes the store and drops its schema.
    pub async fn drop(self) {
        self.store.close().await;
        self.schema.drop().await;
    }
}
