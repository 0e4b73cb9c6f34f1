//! Where a conversation's messages are stored: the object-safe
//! [`ChatHistory`] trait (n8n's `N8nChatHistory`), [`InProcessHistory`],
//! the registry of `#[chat_history]` types, and persistent stores on
//! SQLite, PostgreSQL and Redis (features `sqlite`, `postgres`, `redis`) in the layouts
//! and message forms n8n and LangChain use, so existing data keeps working:
//! the SQL stores hold LangChain's flat form (`{"type": "human", "content":
//! ...}`, as its PostgreSQL store writes), Redis its wrapped form
//! (`{"type": "human", "data": {...}}`); all three read either.
//!
//! | store | layout |
//! | --- | --- |
//! | PostgreSQL | table `n8n_chat_histories` (`id SERIAL`, `session_id VARCHAR(255)`, `message JSONB`), indexed on `(session_id, id)`: the session lookup n8n needs, and a window read without a sort |
//! | SQLite | the same columns (`id INTEGER PRIMARY KEY`, `session_id TEXT`, `message TEXT`) |
//! | Redis | one list per session id, newest first (`LPUSH`), TTL refreshed on every write |
//!
//! Tables are created when missing. Session ids are always bound as
//! parameters, table names are validated and quoted. A batch of messages is
//! written atomically and kept together even with concurrent writers. A
//! stored row that cannot be read is skipped with a warning naming its id;
//! the rest still loads.

pub use nodekit_core::history::*;

#[cfg(feature = "postgres")]
pub use nodekit_history::postgres;
#[cfg(feature = "redis")]
pub use nodekit_history::redis;
#[cfg(feature = "sqlite")]
pub use nodekit_history::sqlite;
