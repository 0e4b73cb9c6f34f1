//! n8n's "Postgres Chat Memory": the conversation in a PostgreSQL table
//! (`n8n_chat_histories` by default, the layout n8n and LangChain use).

use std::sync::Arc;

use nodekit::history::postgres::{DEFAULT_TABLE, PostgresChatHistory};
use nodekit::memory::MemoryOptions;
use nodekit::postgres::Postgres;
use nodekit::prelude::*;

use super::memory_buffer_window::SessionParams;

/// Stores the chat history in a PostgreSQL table.
#[ai_node(
    name = "memoryPostgresChat",
    display_name = "Postgres Chat Memory",
    output = memory,
    credentials = ["postgres"],
    icon = "file:postgres.svg"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPostgresChat {
    /// Which conversation: n8n's "Session ID" parameters.
    #[param(flatten)]
    pub session: SessionParams,
    /// The table name to store the chat history in; created if it does not exist.
    #[param(default = "n8n_chat_histories")]
    pub table_name: String,
    /// How many past interactions the model receives as context.
    #[param(default = 5, min = 1)]
    pub context_window_length: u32,
}

impl SupplyData for MemoryPostgresChat {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let session = self.session.session(ctx)?;
        let config = crate::credentials::postgres(ctx.credentials("postgres")?)?;
        let table = if self.table_name.is_empty() {
            DEFAULT_TABLE
        } else {
            &self.table_name
        };
        // The context's shared pool: a new session does not connect again.
        let pg = Postgres::shared(ctx.pools(), &config)?;
        let history = Arc::new(PostgresChatHistory::open(&pg, table, &session).await?);
        Ok(ctx
            .create_memory(MemoryOptions::buffer_window(
                history,
                self.context_window_length as usize,
            ))
            .into())
    }
}
