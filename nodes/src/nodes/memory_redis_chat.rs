//! n8n's "Redis Chat Memory": the conversation in a Redis list per session.

use std::sync::Arc;

use nodekit::history::redis::RedisChatHistory;
use nodekit::memory::MemoryOptions;
use nodekit::prelude::*;

use super::memory_buffer_window::{SessionIdType, session_id};

/// Stores the chat history in Redis.
#[ai_node(
    name = "memoryRedisChat",
    display_name = "Redis Chat Memory",
    output = memory,
    credentials = ["redis"],
    icon = "file:redis.svg"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRedisChat {
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
    /// For how long the session should be stored in seconds; 0 keeps it forever.
    #[param(
        display_name = "Session Time To Live",
        name = "sessionTTL",
        default = 0,
        min = 0
    )]
    pub session_ttl: u64,
    /// How many past interactions the model receives as context.
    #[param(default = 5, min = 1)]
    pub context_window_length: u32,
}

impl SupplyData for MemoryRedisChat {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let session = session_id(ctx, self.session_id_type, self.session_key.as_deref())?;
        let url = RedisChatHistory::url_from_credential(ctx.credentials("redis")?)?;
        let history =
            Arc::new(RedisChatHistory::connect(&url, &session, Some(self.session_ttl)).await?);
        Ok(ctx
            .memory(MemoryOptions::buffer_window(
                history,
                self.context_window_length as usize,
            ))
            .into())
    }
}
