//! Conversation memory: what the model gets to see of a conversation
//! ([`Memory`]); [`langchain`] has the buffer, window and token-buffer
//! memories with LangChain's exact behaviour. Where the messages are stored
//! is a [`ChatHistory`](crate::history::ChatHistory).

pub mod langchain;
mod tokenizer;

pub use langchain::{ConversationMemory, MemoryKind, MemoryOptions};

use futures::future::BoxFuture;

use crate::error::Result;
use crate::message::Message;

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

    /// Every stored message of the conversation, oldest first, to show it
    /// to its user again (the Chat Trigger's "load previous session"): a
    /// chat history's whole content, not the window the model sees. By
    /// default what [`Memory::load`] gives.
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
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
}
