//! Conversation memory: where messages are stored ([`ChatHistory`], the
//! seed's `N8nChatHistory`) and what the model gets to see ([`Memory`]);
//! [`langchain`] has the buffer, window and token-buffer memories with
//! LangChain's exact behaviour.

pub mod langchain;

pub use langchain::{ConversationMemory, MemoryKind, MemoryOptions};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::Result;
use crate::message::Message;
use crate::model::BoxFuture;

/// A store of one conversation's messages. Object-safe.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared with `#[chat_history]` but does not implement `ChatHistory`",
    label = "needs `impl nodekit::memory::ChatHistory for {Self}`",
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

/// What a model sees of a conversation, and how an exchange is saved. Object-safe.
pub trait Memory: Send + Sync + std::fmt::Debug {
    /// The messages to put before the new input.
    fn load(&self) -> BoxFuture<'_, Result<Vec<Message>>>;

    /// The messages to put before `input`: memories that search by the
    /// input (agent memory's semantic recall) override this; the others load.
    fn load_for<'a>(&'a self, input: &'a str) -> BoxFuture<'a, Result<Vec<Message>>> {
        let _ = input;
        self.load()
    }

    /// Stores one exchange: the human input and the AI output.
    fn save<'a>(&'a self, input: &'a str, output: &'a str) -> BoxFuture<'a, Result<()>>;

    /// Stores one exchange with what the agent did in between: `turn` holds
    /// the AI messages with tool calls and the tool results, in order, and
    /// ends with the final AI answer. Memories that keep only text (the
    /// default) save `input` and the final answer's text; agent memory keeps
    /// every message.
    fn save_turn<'a>(&'a self, input: &'a str, turn: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let output = turn.last().map(Message::text).unwrap_or_default();
            self.save(input, &output).await
        })
    }

    /// Tools this memory gives the agent it is connected to (agent memory's
    /// `updateWorkingMemory` and `updatePlan`); none by default.
    fn tools(&self) -> Vec<std::sync::Arc<dyn crate::tool::Tool>> {
        Vec::new()
    }
    /// Whether this object already writes to a run log (nodekit's wrappers say yes).
    #[doc(hidden)]
    fn is_logged(&self) -> bool {
        false
    }
}

/// One session's messages, shared by every handle to it.
type SharedMessages = Arc<Mutex<Vec<Message>>>;

/// Messages kept in this process, by session id (n8n's "Simple Memory").
#[derive(Debug, Clone)]
pub struct InProcessHistory {
    messages: SharedMessages,
}

impl InProcessHistory {
    /// The history of `session` in this process, shared by every caller.
    pub fn session(session: &str) -> Self {
        static SESSIONS: OnceLock<Mutex<HashMap<String, SharedMessages>>> = OnceLock::new();
        let sessions = SESSIONS.get_or_init(Default::default);
        let mut sessions = sessions.lock().unwrap_or_else(|e| e.into_inner());
        InProcessHistory {
            messages: sessions.entry(session.to_owned()).or_default().clone(),
        }
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
    /// Where stored histories of this type are found again (the seed's `namespace`).
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
