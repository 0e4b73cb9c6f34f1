//! n8n's "Redis Chat Memory": the conversation in a Redis list per session.

use std::sync::Arc;

use nodekit::history::redis::RedisChatHistory;
use nodekit::memory::MemoryOptions;
use nodekit::prelude::*;

use super::memory_buffer_window::SessionParams;

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
    /// Which conversation: n8n's "Session ID" parameters.
    #[param(flatten)]
    pub session: SessionParams,
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
        let session = self.session.session(ctx)?;
        let url = RedisChatHistory::url_from_credential(ctx.credentials("redis")?)?;
        let history =
            Arc::new(RedisChatHistory::connect(&url, &session, Some(self.session_ttl)).await?);
        Ok(ctx
            .create_memory(MemoryOptions::buffer_window(
                history,
                self.context_window_length as usize,
            ))
            .into())
    }
}
