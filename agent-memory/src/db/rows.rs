//! The rows every tier reads: threads and messages.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::types::Json;
use sqlx::{ColumnIndex, Decode, Row, Type};

use super::db_err;
use nodekit_core::error::Result;
use nodekit_core::message::Message;

/// One thread (conversation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    /// The thread id.
    pub id: String,
    /// The resource (user) it belongs to.
    pub resource_id: String,
    /// A title, if one was set.
    #[serde(default)]
    pub title: Option<String>,
    /// Free JSON metadata (for example an agent's iteration log).
    #[serde(default = "empty_object")]
    pub metadata: Value,
    /// The last message seq handed out (0: none yet).
    #[serde(default)]
    pub last_seq: i64,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Last write to the thread, Unix milliseconds.
    pub updated_at: i64,
}

fn empty_object() -> Value {
    json!({})
}

/// A message as stored: its place in the thread and its token count.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Row id, unique in the database (embeddings refer to it).
    pub id: i64,
    /// The thread.
    pub thread_id: String,
    /// Position in the thread: 1, 2, 3... without gaps.
    pub seq: i64,
    /// The message.
    pub message: Message,
    /// Tokens, counted once when the message was written.
    pub token_count: i64,
    /// When it was written, Unix milliseconds.
    pub created_at: i64,
}

pub(crate) fn thread_from_row<R>(row: &R) -> Result<ThreadInfo>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Json<Value>: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(ThreadInfo {
        id: row.try_get("id").map_err(db_err)?,
        resource_id: row.try_get("resource_id").map_err(db_err)?,
        title: row.try_get("title").map_err(db_err)?,
        metadata: row.try_get::<Json<Value>, _>("metadata").map_err(db_err)?.0,
        last_seq: row.try_get("last_seq").map_err(db_err)?,
        created_at: row.try_get("created_at").map_err(db_err)?,
        updated_at: row.try_get("updated_at").map_err(db_err)?,
    })
}

/// A message row with its stored JSON as written (exports keep it verbatim).
pub(crate) struct RawMessage {
    pub(crate) id: i64,
    pub(crate) thread_id: String,
    pub(crate) seq: i64,
    pub(crate) content: Value,
    pub(crate) token_count: i64,
    pub(crate) created_at: i64,
}

pub(crate) fn raw_from_row<R>(row: &R) -> Result<RawMessage>
where
    R: Row,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Json<Value>: Decode<'r, R::Database> + Type<R::Database>,
    for<'a> &'a str: ColumnIndex<R>,
{
    Ok(RawMessage {
        id: row.try_get("id").map_err(db_err)?,
        thread_id: row.try_get("thread_id").map_err(db_err)?,
        seq: row.try_get("seq").map_err(db_err)?,
        content: row.try_get::<Json<Value>, _>("content").map_err(db_err)?.0,
        token_count: row.try_get("token_count").map_err(db_err)?,
        created_at: row.try_get("created_at").map_err(db_err)?,
    })
}

impl RawMessage {
    /// The decoded message; a row that cannot be read is skipped with a
    /// warning (as the chat histories do) so one bad row does not make the
    /// whole thread unusable.
    pub(crate) fn decode(self) -> Option<StoredMessage> {
        match Message::from_stored(&self.content) {
            Ok(message) => Some(StoredMessage {
                id: self.id,
                thread_id: self.thread_id,
                seq: self.seq,
                message,
                token_count: self.token_count,
                created_at: self.created_at,
            }),
            Err(e) => {
                tracing::warn!(id = self.id, seq = self.seq, error = %e, "skipping an agent-memory message that cannot be read");
                None
            }
        }
    }
}
