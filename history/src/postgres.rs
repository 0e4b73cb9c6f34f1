//! Chat history in PostgreSQL, in n8n's and LangChain's `n8n_chat_histories` layout (sqlx).

use futures::future::BoxFuture;
use sqlx::Row;
use sqlx::postgres::PgPool;

use super::store::{check_session, decode, quoted_table, sql_history_common};
use nodekit_core::error::Backend;
use nodekit_core::error::{Error, Result};
use nodekit_core::history::ChatHistory;
use nodekit_core::message::Message;
use nodekit_db::postgres::Postgres;

const STORE: &str = "PostgreSQL";

/// A failure of this store's database, with the driver's error kept.
fn db_error(e: sqlx::Error) -> Error {
    nodekit_db::store_error(Some(Backend::Postgres), e).into()
}

/// No connection to this store's database.
fn cannot_connect(e: sqlx::Error) -> Error {
    nodekit_db::store_error(Some(Backend::Postgres), e)
        .during("cannot connect")
        .into()
}

/// n8n's default table.
pub const DEFAULT_TABLE: &str = "n8n_chat_histories";

/// One session's messages in a PostgreSQL table.
#[derive(Debug, Clone)]
pub struct PostgresChatHistory {
    pool: PgPool,
    table: String,
    session: String,
}

impl PostgresChatHistory {
    /// Session `session`'s messages in `table` of `pg`'s database; creates
    /// the table and its index if missing.
    pub async fn open(pg: &Postgres, table: &str, session: &str) -> Result<Self> {
        let pool = pg.pool().clone();
        check_session(session, STORE)?;
        let name = table;
        let table = quoted_table(table, STORE)?;
        // The DDL runs once per table and database in this process: under many
        // concurrent connects it would otherwise queue every one on its lock.
        static ENSURED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<String>>> =
            std::sync::OnceLock::new();
        let opts = pool.connect_options();
        let key = format!(
            "{}:{}/{}/{name}",
            opts.get_host(),
            opts.get_port(),
            opts.get_database().unwrap_or("")
        );
        let ensured = ENSURED.get_or_init(Default::default);
        if ensured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&key)
        {
            return Ok(PostgresChatHistory {
                pool,
                table,
                session: session.to_owned(),
            });
        }
        // Concurrent `CREATE ... IF NOT EXISTS` can still collide in PostgreSQL: serialise it.
        let ddl = format!(
            "SELECT pg_advisory_xact_lock(7428573);
             CREATE TABLE IF NOT EXISTS {table} (id SERIAL PRIMARY KEY, session_id VARCHAR(255) NOT NULL, message JSONB NOT NULL);
             CREATE INDEX IF NOT EXISTS \"{name}_session_id_id_idx\" ON {table} (session_id, id);"
        );
        let mut tx = nodekit_db::postgres::refused_at_once(&pool, pool.begin())
            .await
            .map_err(cannot_connect)?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        ensured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
        Ok(PostgresChatHistory {
            pool,
            table,
            session: session.to_owned(),
        })
    }
}

impl ChatHistory for PostgresChatHistory {
    sql_history_common!();

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let stored: Vec<serde_json::Value> =
                messages.iter().map(Message::to_stored_flat).collect();
            if stored.iter().any(|v| v.to_string().contains("\\u0000")) {
                return Err(Error::Store {
                    store: STORE,
                    message: "PostgreSQL's jsonb cannot hold the NUL character (U+0000); the messages were not saved".into(),
                });
            }
            // One statement, so one round trip and its own transaction: the CTE
            // takes a per-session lock first, so a batch stays together and in
            // order (`ORDER BY n` makes the serial ids follow the batch).
            let sql = format!(
                "WITH lock AS (SELECT pg_advisory_xact_lock(hashtext($1)))
                 INSERT INTO {} (session_id, message)
                 SELECT $1, m FROM lock, unnest($2::jsonb[]) WITH ORDINALITY AS u(m, n) ORDER BY n",
                self.table
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(&self.session)
                .bind(&stored)
                .execute(&self.pool)
                .await
                .map(|_| ())
                .map_err(db_error)
        })
    }
}

fn read_row(row: &sqlx::postgres::PgRow) -> Option<Message> {
    let id: i32 = row.try_get("id").ok()?;
    let value: serde_json::Value = row.try_get("message").ok()?;
    decode(STORE, id, &value)
}
