//! n8n's "Simple Vector Store": documents in the process's memory, under a
//! key every workflow of the process shares.

use std::sync::Arc;

use nodekit::prelude::*;
use nodekit::serde_json::Value;
use nodekit::vector_store::InProcessVectorStore;
use nodekit::vector_store::node::{Mode, VectorStoreModes};

/// The easiest way to experiment with vector stores, without external setup.
#[ai_node(
    name = "vectorStoreInMemory",
    display_name = "Simple Vector Store",
    output = vector_store,
    icon = "fa:database",
    notice = "For experimental use only: data is stored in memory and is lost when the process stops; it is shared by every workflow of the process. It is not compatible with Queue Mode or Multi-Main setups, as each n8n process has its own copy; use the SQLite or PGVector vector store there."
)]
#[derive(Debug, Clone, PartialEq)]
pub struct VectorStoreInMemory {
    /// n8n's operation modes.
    #[param(flatten)]
    pub modes: VectorStoreModes,
    /// The key to use to store the vector memory in the workflow data. These keys are shared between workflows.
    #[param(display_name = "Memory Key", default = "vector_store_key")]
    pub memory_key: String,
    /// Whether to clear the store before inserting new data
    #[param(default = false, display_options(show(mode = [Mode::Insert])))]
    pub clear_store: bool,
}

impl VectorStoreInMemory {
    fn store(&self, node: &str) -> nodekit::Result<Arc<InProcessVectorStore>> {
        if self.memory_key.trim().is_empty() {
            return Err(nodekit::Error::NodeFailed {
                node: node.to_owned(),
                message: "the Memory Key is empty: name the store".into(),
            });
        }
        Ok(Arc::new(InProcessVectorStore::named(&self.memory_key)))
    }
}

impl SupplyData for VectorStoreInMemory {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let store = self.store(ctx.node_name())?;
        self.modes.supply(ctx, store, Filter::all())
    }
}

impl Execute for VectorStoreInMemory {
    async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<Value>> {
        let store = self.store(ctx.node_name())?;
        // Cleared once per run (n8n clears before each batch of 200, which
        // keeps only the last batch of a larger insert).
        if self.modes.mode == Mode::Insert && self.clear_store {
            store.clear();
        }
        self.modes.execute(ctx, store, Filter::all()).await
    }
}
