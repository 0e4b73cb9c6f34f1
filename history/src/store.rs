//! What every store shares: checks of session ids and table names, reading
//! a stored row, and errors without connection strings.

use nodekit_core::error::{Error, Result};
use nodekit_core::history::MAX_SESSION_ID_CHARS;
use nodekit_core::message::Message;

/// A validated, double-quoted SQL identifier for a table name.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn quoted_table(name: &str, store: &'static str) -> Result<String> {
    if !nodekit_db::is_plain_identifier(name, 50) {
        return Err(Error::Store {
            store,
            message: format!(
                "invalid table name {:?}: use 1 to 50 letters, digits and `_`, starting with a letter or `_`",
                nodekit_core::error::shorten(name, 60)
            ),
        });
    }
    Ok(format!("\"{name}\""))
}

/// Checks a session id: not empty, not too long, no NUL.
pub(crate) fn check_session(id: &str, store: &'static str) -> Result<()> {
    let problem = if id.is_empty() {
        Some("the session id is empty".to_owned())
    } else if id.chars().count() > MAX_SESSION_ID_CHARS {
        Some(format!(
            "the session id is longer than {MAX_SESSION_ID_CHARS} characters"
        ))
    } else if id.contains('\0') {
        Some("the session id contains a NUL character".to_owned())
    } else {
        None
    };
    match problem {
        Some(message) => Err(Error::Store { store, message }),
        None => Ok(()),
    }
}

/// Reads one stored row; a row that is not a message is skipped with a warning.
pub(crate) fn decode(
    store: &'static str,
    id: impl std::fmt::Display,
    stored: &serde_json::Value,
) -> Option<Message> {
    match Message::from_json(stored) {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!(store, id = %id, error = %e, "skipping a stored chat message that cannot be read");
            None
        }
    }
}

/// A refusal of the store named `store`.
#[cfg(feature = "redis")]
pub(crate) fn refused(store: &'static str, message: impl Into<String>) -> Error {
    Error::Store {
        store,
        message: message.into(),
    }
}

/// The parts of a SQL chat history that are the same statements on SQLite
/// and PostgreSQL (both read `$n` placeholders): the reads, one message,
/// and clear. Expanded inside `impl ChatHistory for ...`, whose type has
/// `pool`, `table` (quoted) and `session` fields, next to a `read_row`
/// function, a `db_error` function and a `STORE` name of its module.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! sql_history_common {
    () => {
        fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
            Box::pin(async move {
                let sql = format!(
                    "SELECT id, message FROM {} WHERE session_id = $1 ORDER BY id",
                    self.table
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(&self.session)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(db_error)?;
                Ok(rows.iter().filter_map(read_row).collect())
            })
        }

        fn last_messages(&self, n: usize) -> BoxFuture<'_, Result<Vec<Message>>> {
            Box::pin(async move {
                // Newest first through the index, then back to oldest first.
                let sql = format!(
                    "SELECT id, message FROM {} WHERE session_id = $1 ORDER BY id DESC LIMIT $2",
                    self.table
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(&self.session)
                    .bind(i64::try_from(n).unwrap_or(i64::MAX))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(db_error)?;
                Ok(rows.iter().rev().filter_map(read_row).collect())
            })
        }

        fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<()>> {
            self.add_messages(std::slice::from_ref(message))
        }

        fn clear(&self) -> BoxFuture<'_, Result<()>> {
            Box::pin(async move {
                let sql = format!("DELETE FROM {} WHERE session_id = $1", self.table);
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(&self.session)
                    .execute(&self.pool)
                    .await
                    .map_err(db_error)?;
                Ok(())
            })
        }
    };
}
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) use sql_history_common;
