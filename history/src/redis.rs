//! Chat history in Redis, in the layout n8n's Redis memory (LangChain's
//! `RedisChatMessageHistory`) uses: the session id is the key of a list of
//! stored-message JSON, newest first, with its TTL refreshed on every write.

use futures::future::BoxFuture;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use serde_json::Value;

use super::store::{check_session, decode, refused};
use nodekit_core::error::{Backend, StoreError, StoreErrorKind};
use nodekit_core::error::{Error, Result};
use nodekit_core::history::ChatHistory;
use nodekit_core::message::Message;
use nodekit_db::encode_userinfo;

const STORE: &str = "Redis";

/// One session's messages in a Redis list.
#[derive(Clone)]
pub struct RedisChatHistory {
    connection: ConnectionManager,
    key: String,
    ttl_secs: Option<u64>,
}

impl std::fmt::Debug for RedisChatHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChatHistory")
            .field("key", &self.key)
            .field("ttl_secs", &self.ttl_secs)
            .finish_non_exhaustive()
    }
}

impl RedisChatHistory {
    /// The URL of n8n's `redis` credential (`host`, `port`, `password`,
    /// `user`, `database`, `ssl`), user and password percent-encoded.
    pub fn url_from_credential(credential: &Value) -> Result<String> {
        let text = |k: &str| {
            credential
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let host = match text("host") {
            "" => {
                return Err(Error::InvalidCredentials {
                    credential: "redis".into(),
                    problem: "has no `host`".into(),
                });
            }
            h => h,
        };
        let port = credential
            .get("port")
            .and_then(Value::as_u64)
            .unwrap_or(6379);
        let db = credential
            .get("database")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let scheme = if credential.get("ssl").and_then(Value::as_bool) == Some(true) {
            "rediss"
        } else {
            "redis"
        };
        let auth = match (text("user"), text("password")) {
            ("", "") => String::new(),
            (user, password) => format!("{}:{}@", encode_userinfo(user), encode_userinfo(password)),
        };
        Ok(format!("{scheme}://{auth}{host}:{port}/{db}"))
    }

    /// Connects to `url` (`redis://[:password@]host:port[/db]`); `ttl_secs` of `None` or 0 keeps the list forever.
    pub async fn connect(url: &str, session: &str, ttl_secs: Option<u64>) -> Result<Self> {
        check_session(session, STORE)?;
        let client = redis::Client::open(url)
            .map_err(|e| Error::from(redis_error(e).during("invalid address")))?;
        let connection = ConnectionManager::new(client)
            .await
            .map_err(|e| Error::from(redis_error(e).during("cannot connect")))?;
        Ok(RedisChatHistory {
            connection,
            key: session.to_owned(),
            ttl_secs: ttl_secs.filter(|t| *t > 0),
        })
    }

    /// Entries as listed (newest first), as messages oldest first.
    fn read(&self, raw: &[String]) -> Vec<Message> {
        raw.iter()
            .enumerate()
            .rev()
            .filter_map(|(i, text)| {
                let value = serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
                decode(STORE, format!("{}[{i}]", self.key), &value)
            })
            .collect()
    }

    fn error(&self, e: redis::RedisError) -> Error {
        if e.code() == Some("WRONGTYPE") {
            return refused(
                STORE,
                format!(
                    "key {:?} holds something other than a list; use another session id or key prefix",
                    self.key
                ),
            );
        }
        redis_error(e).into()
    }
}

/// Redis's failure, of the kind it says.
fn redis_error(e: redis::RedisError) -> StoreError {
    let kind = if e.is_timeout() {
        StoreErrorKind::Timeout
    } else if e.is_connection_refusal() || e.is_connection_dropped() || e.is_io_error() {
        StoreErrorKind::Connection
    } else {
        StoreErrorKind::Other
    };
    StoreError::from_source(Some(Backend::Redis), kind, e)
}

impl ChatHistory for RedisChatHistory {
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(async move {
            let mut c = self.connection.clone();
            let raw: Vec<String> = c
                .lrange(&self.key, 0, -1)
                .await
                .map_err(|e| self.error(e))?;
            Ok(self.read(&raw))
        })
    }

    fn last_messages(&self, n: usize) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(async move {
            if n == 0 {
                return Ok(Vec::new());
            }
            let mut c = self.connection.clone();
            // The list is newest first: its head is the window.
            let end = isize::try_from(n).unwrap_or(isize::MAX) - 1;
            let raw: Vec<String> = c
                .lrange(&self.key, 0, end)
                .await
                .map_err(|e| self.error(e))?;
            Ok(self.read(&raw))
        })
    }

    fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<()>> {
        self.add_messages(std::slice::from_ref(message))
    }

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if messages.is_empty() {
                return Ok(());
            }
            let stored: Vec<String> = messages.iter().map(|m| m.to_stored().to_string()).collect();
            // One LPUSH of the batch (atomic, kept together) and the TTL, in one transaction.
            let mut pipe = redis::pipe();
            pipe.atomic().lpush(&self.key, &stored).ignore();
            if let Some(ttl) = self.ttl_secs {
                pipe.expire(&self.key, ttl as i64).ignore();
            }
            let mut c = self.connection.clone();
            pipe.query_async::<()>(&mut c)
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn clear(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let mut c = self.connection.clone();
            c.del::<_, ()>(&self.key).await.map_err(|e| self.error(e))
        })
    }
}
