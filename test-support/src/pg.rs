//! Fresh PostgreSQL schemas on the servers of `scripts/services.sh`.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::{server, unique};

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
