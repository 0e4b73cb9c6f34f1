//! Real stores for integration tests: the servers of `scripts/services.sh`
//! (skipped with a reason outside CI when their variable is missing, a
//! failure under `CI=true`), unique names per run, and an agent-memory
//! store in a PostgreSQL schema of its own.

// Each test module uses the part it needs.
#![allow(dead_code)]

use nodekit::agent_memory::Store;
use sqlx::postgres::PgConnectOptions;

pub use nodekit_test_support::{Schema, unique};

/// A fresh SQLite file path in the temporary folder.
pub fn temp_db(name: &str) -> std::path::PathBuf {
    nodekit_test_support::scratch_dir()
        .join(format!("{}.db", unique(&format!("nodekit_am_{name}"))))
}

/// An agent-memory store in a fresh SQLite file.
pub async fn sqlite(name: &str) -> Store {
    Store::open_sqlite(temp_db(name)).await.unwrap()
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
        let store = Store::postgres(&nodekit::postgres::Postgres::from_options(options.clone()))
            .await
            .unwrap();
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
