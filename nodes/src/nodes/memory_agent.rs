//! Agent memory as a memory node: working memory
//! per user, the thread's plan and recent messages, in one store (SQLite by
//! default, or n8n's PostgreSQL database), with the `updateWorkingMemory`
//! and `updatePlan` tools given to the agent.

use std::sync::Arc;

use nodekit::agent_memory::observe::Observer;
use nodekit::agent_memory::{self, MemoryConfig, ThreadMemory};
use nodekit::embed::EmbeddingsConfig;
use nodekit::prelude::*;

use super::memory_buffer_window::{SessionIdType, session_id};

/// Remembers the user across conversations (working memory) and the current conversation (recent messages, plan; observations and semantic recall when an OpenAI-compatible credential is given).
#[ai_node(
    name = "memoryAgent",
    display_name = "Agent Memory",
    output = memory,
    optional_credentials = ["openAiApi"],
    icon = "fa:brain"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryAgent {
    /// The user the memory belongs to: working memory is shared by all of their conversations.
    #[param(display_name = "Resource ID", default = "default")]
    pub resource_id: String,
    /// Where the key that separates one conversation (thread) from another comes from.
    #[param(display_name = "Thread ID", default = SessionIdType::FromInput)]
    pub session_id_type: SessionIdType,
    /// The thread key to use.
    #[param(
        display_name = "Key",
        name = "sessionKey",
        default = "={{ $json.sessionId }}",
        display_options(show(session_id_type = [SessionIdType::CustomKey]))
    )]
    pub session_key: Option<String>,
    /// A SQLite file to store memory in; empty: N8N_INSTANCE_AI_* and n8n's DB_* settings decide (default `instance-ai-memory.db`).
    #[param(default = "")]
    pub database_path: String,
    /// Recent messages the model receives; 0: N8N_INSTANCE_AI_LAST_MESSAGES (default 20).
    #[param(default = 0, min = 0, max = 10000)]
    pub last_messages: u32,
    /// Keep working memory about the user (off for stateless sub-agents).
    #[param(default = true)]
    pub working_memory: bool,
}

impl SupplyData for MemoryAgent {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let thread = session_id(ctx, self.session_id_type, self.session_key.as_deref())?;
        let mut config = MemoryConfig::from_env()?;
        if !self.database_path.trim().is_empty() {
            config = config.sqlite(self.database_path.trim());
        }
        if self.last_messages > 0 {
            config = config.last_messages(self.last_messages as usize)?;
        }
        if !self.working_memory {
            config = config.without_working_memory();
        }
        let store = agent_memory::open(&config).await?;
        // Observational memory needs a model: N8N_INSTANCE_AI_OBSERVER_MODEL
        // through the `openAiApi` credential, when the node has one.
        // Semantic recall too, when N8N_INSTANCE_AI_EMBEDDER_MODEL names an embedder.
        let credentials = ctx.credentials("openAiApi").ok();
        let observer = match credentials {
            Some(credentials) => {
                let model = ctx.create_chat_model(crate::credentials::openai(
                    credentials,
                    &config.observer_model,
                )?)?;
                Some(Observer::new(store.clone(), config.clone(), model))
            }
            None => None,
        };
        let embedder = match (credentials, &config.embedder_model) {
            (Some(credentials), Some(model)) => {
                let api = crate::credentials::openai(credentials, model)?;
                Some(ctx.create_embeddings(EmbeddingsConfig {
                    base_url: api.base_url,
                    azure_api_version: api.azure_api_version,
                    ..EmbeddingsConfig::new(api.api_key, model.clone())
                })?)
            }
            _ => None,
        };
        let mut memory = ThreadMemory::new(store, config, self.resource_id, thread).await?;
        if let Some(observer) = observer {
            memory = memory.with_observer(observer);
        }
        if let Some(embedder) = embedder {
            memory = memory.with_recall(embedder);
        }
        Ok(Supply::Memory(Arc::new(memory)))
    }
}
