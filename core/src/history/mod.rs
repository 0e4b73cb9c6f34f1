//! Where a conversation's messages are stored: the object-safe
//! [`ChatHistory`] trait (n8n's `N8nChatHistory`), [`InProcessHistory`]
//! and the registry of `#[chat_history]` types. Persistent stores are
//! crates of their own (nodekit's SQLite, PostgreSQL and Redis stores are
//! in `nodekit::history`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use crate::error::Result;
use crate::message::Message;

/// A store of one conversation's messages. Object-safe.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared with `#[chat_history]` but does not implement `ChatHistory`",
    label = "needs `impl nodekit::history::ChatHistory for {Self}`",
    note = "implement `messages`, `add_message` and `clear` (and `add_messages` for batch writes)"
)]
pub trait ChatHistory: Send + Sync + std::fmt::Debug {
    /// Every stored message, oldest first.
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>>;

    /// The last `n` messages, oldest first; stores override this to read only those.
    fn last_messages(&self, n: usize) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(async move {
            let mut all = self.messages().await?;
            let skip = all.len().saturating_sub(n);
            all.drain(..skip);
            Ok(all)
        })
    }

    /// Appends one message.
    fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<()>>;

    /// Appends several; stores override this with one batch write.
    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for m in messages {
                self.add_message(m).await?;
            }
            Ok(())
        })
    }

    /// Removes every message.
    fn clear(&self) -> BoxFuture<'_, Result<()>>;
}

/// Longest session id accepted (n8n's column is `VARCHAR(255)`).
pub const MAX_SESSION_ID_CHARS: usize = 255;

/// One session's messages, shared by every handle to it.
type SharedMessages = Arc<Mutex<Vec<Message>>>;

/// Sessions [`InProcessHistory`] keeps at most, by default.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// How long [`InProcessHistory`] keeps a session no one asked for, by
/// default (n8n's Simple Memory forgets a session after an hour).
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(60 * 60);

/// Messages kept in this process, by session id (n8n's "Simple Memory").
///
/// The sessions live in one map per process, bounded: a session not asked
/// for ([`InProcessHistory::session`]) for [`DEFAULT_SESSION_IDLE`] is
/// forgotten, as n8n forgets it, and past [`DEFAULT_MAX_SESSIONS`] the
/// least recently asked for is forgotten first
/// ([`InProcessHistory::set_limits`] changes both). A handle keeps its
/// messages while it lives; asking for a forgotten session again starts it
/// empty.
#[derive(Debug, Clone)]
pub struct InProcessHistory {
    messages: SharedMessages,
}

/// The process's sessions and their limits.
struct Sessions {
    by_id: HashMap<String, (SharedMessages, Instant)>,
    max: usize,
    idle: Duration,
    swept: Instant,
}

fn sessions() -> std::sync::MutexGuard<'static, Sessions> {
    static SESSIONS: OnceLock<Mutex<Sessions>> = OnceLock::new();
    SESSIONS
        .get_or_init(|| {
            Mutex::new(Sessions {
                by_id: HashMap::new(),
                max: DEFAULT_MAX_SESSIONS,
                idle: DEFAULT_SESSION_IDLE,
                swept: Instant::now(),
            })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Sessions {
    /// Forgets idle sessions, at most once a second unless `force`.
    fn sweep(&mut self, now: Instant, force: bool) {
        if force || now.duration_since(self.swept) >= Duration::from_secs(1) {
            let idle = self.idle;
            self.by_id
                .retain(|_, (_, used)| now.duration_since(*used) < idle);
            self.swept = now;
        }
    }

    /// Forgets the least recently used sessions until at most `keep` remain.
    fn evict_past(&mut self, keep: usize) {
        while self.by_id.len() > keep {
            let Some(oldest) = self
                .by_id
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            self.by_id.remove(&oldest);
        }
    }
}

impl InProcessHistory {
    /// The history of `session` in this process, shared by every caller.
    /// Under n8n's queue mode, the first call warns that the history is
    /// not shared between n8n's processes ([`crate::process_local`]).
    pub fn session(session: &str) -> Self {
        crate::process_local::warn_if_not_shared("an in-process chat history (Simple Memory)");
        let now = Instant::now();
        let mut sessions = sessions();
        sessions.sweep(now, false);
        if !sessions.by_id.contains_key(session) {
            // Room for the new one.
            let keep = sessions.max - 1;
            sessions.evict_past(keep);
        }
        let (messages, used) = sessions
            .by_id
            .entry(session.to_owned())
            .or_insert_with(|| (SharedMessages::default(), now));
        *used = now;
        InProcessHistory {
            messages: messages.clone(),
        }
    }

    /// Sets how many sessions the process keeps and how long an idle one
    /// lasts (defaults [`DEFAULT_MAX_SESSIONS`] and
    /// [`DEFAULT_SESSION_IDLE`]); sessions past the new limits are forgotten
    /// now. `max_sessions` is at least 1.
    pub fn set_limits(max_sessions: usize, idle: Duration) {
        let mut sessions = sessions();
        sessions.max = max_sessions.max(1);
        sessions.idle = idle;
        sessions.sweep(Instant::now(), true);
        let keep = sessions.max;
        sessions.evict_past(keep);
    }

    /// How many sessions the process holds.
    pub fn sessions_held() -> usize {
        sessions().by_id.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Message>> {
        self.messages.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ChatHistory for InProcessHistory {
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        let messages = self.lock().clone();
        Box::pin(async move { Ok(messages) })
    }

    fn last_messages(&self, n: usize) -> BoxFuture<'_, Result<Vec<Message>>> {
        let all = self.lock();
        let tail = all[all.len().saturating_sub(n)..].to_vec();
        drop(all);
        Box::pin(async move { Ok(tail) })
    }

    fn add_message<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<()>> {
        self.lock().push(message.clone());
        Box::pin(async { Ok(()) })
    }

    fn add_messages<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        self.lock().extend_from_slice(messages);
        Box::pin(async { Ok(()) })
    }

    fn clear(&self) -> BoxFuture<'_, Result<()>> {
        self.lock().clear();
        Box::pin(async { Ok(()) })
    }
}

/// A chat-history type declared with `#[chat_history(namespace = [...])]`.
pub trait HistoryNamespace {
    /// Where stored histories of this type are found again (the AI Node SDK's `namespace`).
    const NAMESPACE: &'static [&'static str];
}

/// A registered chat-history type.
#[derive(Debug)]
pub struct HistoryRegistration {
    /// Its namespace, e.g. `["n8n", "memory", "redis"]`.
    pub namespace: &'static [&'static str],
    /// The Rust type's name.
    pub type_name: &'static str,
}

inventory::collect!(HistoryRegistration);

/// Every chat-history type linked into this program, sorted by namespace.
pub fn history_types() -> Vec<&'static HistoryRegistration> {
    let mut all: Vec<_> = inventory::iter::<HistoryRegistration>.into_iter().collect();
    all.sort_by_key(|r| r.namespace);
    all
}

/// The chat-history type registered under `namespace`, if any.
pub fn find_history_type(namespace: &[&str]) -> Option<&'static HistoryRegistration> {
    inventory::iter::<HistoryRegistration>
        .into_iter()
        .find(|r| r.namespace == namespace)
}
