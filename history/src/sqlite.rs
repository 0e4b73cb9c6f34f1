//! Chat history in a SQLite file (sqlx).

use std::str::FromStr;
use std::time::Duration;

use futures::future::BoxFuture;
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool};

use super::store::{check_session, decode, quoted_table, sql_history_common};
use nodekit_core::error::Result;
use nodekit_core::error::{Backend, Error};
use nodekit_core::history::ChatHistory;
use nodekit_core::message::Message;

const STORE: &str = "SQLite";

/// A failure of this store's database, with the driver's error kept.
fn db_error(e: sqlx::Error) -> Error {
    nodekit_db::store_error(Some(Backend::Sqlite), e).into()
}

/// One session's messages in a SQLite table.
#[derive(Debug, Clone)]
pub struct SqliteChatHistory {
    pool: SqlitePool,
    table: String,
    session: String,
}

impl SqliteChatHistory {
    /// Opens (creating if needed) the database file at `path`, in WAL mode.
    pub async fn open(path: &str, table: &str, session: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))
            .map_err(db_error)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(10));
        let pool = nodekit_db::sqlite::pool_options(4)
            .connect_with(options)
            .await
            .map_err(|e| {
                let path = nodekit_core::error::quoted(path);
                Error::from(
                    nodekit_db::store_error(Some(Backend::Sqlite), e)
                        .during(format!("cannot open {path}")),
                )
            })?;
        Self::with_pool(pool, table, session).await
    }

    /// Uses an existing pool; creates the table and its index if missing.
    pub async fn with_pool(pool: SqlitePool, table: &str, session: &str) -> Result<Self> {
        check_session(session, STORE)?;
        let name = table;
        let table = quoted_table(table, STORE)?;
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS \"{name}_session_id_id_idx\" ON {table} (session_id, id);"
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
            .execute(&pool)
            .await
            .map_err(db_error)?;
        Ok(SqliteChatHistory {
            pool,
            table,
            session: session.to_owned(),
        })
    }
}

impl ChatHistory for SqliteChatHistory {
    sql_history_common!();

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if messages.is_empty() {
                return Ok(());
            }
            // One transaction: all of the batch, together, or nothing; a
            // multi-row INSERT per chunk (SQLite allows 32766 parameters).
            let mut tx = self.pool.begin().await.map_err(db_error)?;
            for chunk in messages.chunks(1000) {
                let rows = vec!["(?, ?)"; chunk.len()].join(", ");
                let sql = format!(
                    "INSERT INTO {} (session_id, message) VALUES {rows}",
                    self.table
                );
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for m in chunk {
                    query = query
                        .bind(&self.session)
                        .bind(m.to_stored_flat().to_string());
                }
                query.execute(&mut *tx).await.map_err(db_error)?;
            }
            tx.commit().await.map_err(db_error)
        })
    }
}

fn read_row(row: &sqlx::sqlite::SqliteRow) -> Option<Message> {
    let id: i64 = row.try_get("id").ok()?;
    let text: String = row.try_get("message").ok()?;
    let value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    decode(STORE, id, &value)
}
