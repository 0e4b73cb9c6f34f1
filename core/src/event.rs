//! Progress of a run as it happens (streamed answer text, tool calls and
//! their results), for showing to a user while the run goes on.

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

/// Progress of a run, for streaming to a user.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentEvent {
    /// More answer text from the model.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model called a tool.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        args: Value,
    },
    /// A tool answered.
    ToolResult {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// What the model is told.
        output: String,
        /// Whether it failed.
        error: bool,
    },
}

/// Where a run sends its [`AgentEvent`]s. Cheap to clone; sending never
/// blocks, and events sent after the receiver is gone are dropped.
#[derive(Debug, Clone)]
pub struct EventSender(mpsc::UnboundedSender<AgentEvent>);

/// Receives the events of an [`EventSender`], in order.
#[derive(Debug)]
pub struct EventReceiver(mpsc::UnboundedReceiver<AgentEvent>);

impl EventSender {
    /// A connected sender and receiver.
    pub fn channel() -> (EventSender, EventReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventSender(tx), EventReceiver(rx))
    }

    /// Sends `event`; a receiver that has gone away is not an error.
    pub fn send(&self, event: AgentEvent) {
        let _ = self.0.send(event);
    }
}

impl EventReceiver {
    /// The next event, or `None` once every sender is dropped and all events are read.
    pub async fn recv(&mut self) -> Option<AgentEvent> {
        self.0.recv().await
    }
}
