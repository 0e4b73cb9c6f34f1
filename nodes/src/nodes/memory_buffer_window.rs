//! n8n's "Simple Memory": the recent messages of a conversation, kept in
//! the process.

use std::sync::Arc;

use nodekit::history::InProcessHistory;
use nodekit::memory::MemoryOptions;
use nodekit::prelude::*;
use serde::{Deserialize, Serialize};

/// Where the session id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum SessionIdType {
    /// Looks for an input field called 'sessionId' that is coming from a directly connected Chat Trigger.
    #[serde(rename = "fromInput")]
    #[schemars(title = "Connected Chat Trigger Node")]
    FromInput,
    /// Use an expression to reference data in previous nodes or enter static text.
    #[serde(rename = "customKey")]
    #[schemars(title = "Define below")]
    CustomKey,
}

/// Where a memory node finds the conversation's key: the parameters all of
/// n8n's chat memories share, flattened into each of them.
#[derive(NodeParams, Debug, Clone, PartialEq)]
pub struct SessionParams {
    /// Where the key that separates one conversation from another comes from.
    #[param(display_name = "Session ID", default = SessionIdType::FromInput)]
    pub session_id_type: SessionIdType,
    /// The key to use to store the memory in the workflow data.
    #[param(
        display_name = "Key",
        name = "sessionKey",
        default = "={{ $json.sessionId }}",
        display_options(show(session_id_type = [SessionIdType::CustomKey]))
    )]
    pub session_key: Option<String>,
}

impl SessionParams {
    /// The conversation's key: the input item's `sessionId`, or the node's own key.
    pub fn session(&self, ctx: &SupplyContext) -> nodekit::Result<String> {
        session_id(ctx, self.session_id_type, self.session_key.as_deref())
    }
}

/// Stores the chat history in the workflow's process memory; no credentials required.
#[ai_node(
    name = "memoryBufferWindow",
    display_name = "Simple Memory",
    output = memory,
    icon = "fa:database",
    notice = "This node stores memory in the nodekit bridge of the n8n process that runs it. It is not compatible with Queue Mode or Multi-Main setups, as memory will not be shared across workers. For production use with scaling, use a shared memory store: the SQLite, Postgres or Redis chat memory."
)]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryBufferWindow {
    /// Which conversation: n8n's "Session ID" parameters.
    #[param(flatten)]
    pub session: SessionParams,
    /// How many past interactions the model receives as context.
    #[param(default = 5, min = 1)]
    pub context_window_length: u32,
}

impl SupplyData for MemoryBufferWindow {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let session = self.session.session(ctx)?;
        let history = Arc::new(InProcessHistory::session(&session));
        Ok(ctx
            .create_memory(MemoryOptions::buffer_window(
                history,
                self.context_window_length as usize,
            ))
            .into())
    }
}

/// The conversation's key: the input item's `sessionId`, or the node's own key.
pub(crate) fn session_id(
    ctx: &SupplyContext,
    source: SessionIdType,
    key: Option<&str>,
) -> nodekit::Result<String> {
    let session = match source {
        SessionIdType::FromInput => ctx.item().get("sessionId").and_then(|v| v.as_str()),
        SessionIdType::CustomKey => key,
    };
    session.filter(|s| !s.is_empty()).map(str::to_owned).ok_or_else(|| {
        nodekit::Error::NodeFailed {
            node: ctx.node_name().to_owned(),
            message: "no session ID found: the input item has no `sessionId` (or set \"Session ID\" to \"Define below\")".into(),
        }
    })
}
