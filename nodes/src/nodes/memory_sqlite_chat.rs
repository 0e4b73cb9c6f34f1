//! Chat memory in a SQLite file: persistent memory without a server.

use std::sync::Arc;

use nodekit::history::sqlite::SqliteChatHistory;
use nodekit::memory::MemoryOptions;
use nodekit::prelude::*;

use super::memory_buffer_window::SessionParams;

/// Stores the chat history in a SQLite database file.
#[ai_node(name = "memorySqliteChat", display_name = "SQLite Chat Memory", output = memory, icon = "fa:database")]
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySqliteChat {
    /// Which conversation: n8n's "Session ID" parameters.
    #[param(flatten)]
    pub session: SessionParams,
    /// The database file; created if it does not exist.
    #[param(default = "nodekit-chat.db")]
    pub database_path: String,
    /// The table to store the chat history in; created if it does not exist.
    #[param(default = "n8n_chat_histories")]
    pub table_name: String,
    /// How many past interactions the model receives as context.
    #[param(default = 5, min = 1)]
    pub context_window_length: u32,
}

impl SupplyData for MemorySqliteChat {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let session = self.session.session(ctx)?;
        let history = Arc::new(
            SqliteChatHistory::open(&self.database_path, &self.table_name, &session).await?,
        );
        Ok(ctx
            .create_memory(MemoryOptions::buffer_window(
                history,
                self.context_window_length as usize,
            ))
            .into())
    }
}
