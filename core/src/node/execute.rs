//! What a root node sees: its input items, what its sub-nodes supplied,
//! the run log and where to send progress.

use std::sync::Arc;

use serde_json::Value;

use super::{Inputs, Supply};
use crate::description::ConnectionType;
use crate::document::DocumentLoader;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::event::EventSender;
use crate::memory::Memory;
use crate::model::ChatModel;
use crate::run_log::{LogScope, RunLog};
use crate::text_splitter::TextSplitter;
use crate::tool::Tool;
use crate::vector_store::{DocumentStore, VectorStoreOptions};

/// What a root node sees: its input items, what its sub-nodes supplied, and the log.
#[derive(Clone)]
pub struct ExecuteContext {
    node: String,
    items: Vec<Value>,
    inputs: Inputs,
    log: Arc<RunLog>,
    events: Option<EventSender>,
    type_version: Option<f64>,
    credentials: Arc<super::Credentials>,
    pools: super::SharedPools,
}

impl std::fmt::Debug for ExecuteContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credential values are secrets: only their types are shown.
        f.debug_struct("ExecuteContext")
            .field("node", &self.node)
            .field("items", &self.items)
            .field("inputs", &self.inputs)
            .field("credentials", &self.credentials.keys().collect::<Vec<_>>())
            .field("type_version", &self.type_version)
            .finish_non_exhaustive()
    }
}

impl ExecuteContext {
    /// A context for root node `node`.
    pub fn new(
        node: impl Into<String>,
        items: Vec<Value>,
        inputs: Inputs,
        log: Arc<RunLog>,
        events: Option<EventSender>,
    ) -> Self {
        ExecuteContext {
            node: node.into(),
            items,
            inputs,
            log,
            events,
            type_version: None,
            credentials: Arc::default(),
            pools: super::SharedPools::default(),
        }
    }

    /// The same context with connection pools shared with other contexts
    /// (without it, the context has a set of its own).
    pub fn with_pools(mut self, pools: super::SharedPools) -> Self {
        self.pools = pools;
        self
    }

    /// The connection pools this node shares with the others its owner
    /// runs: ask them for a database pool rather than opening one.
    pub fn pools(&self) -> &super::SharedPools {
        &self.pools
    }

    /// The same context with the node's resolved credentials.
    pub fn with_credentials(mut self, credentials: Arc<super::Credentials>) -> Self {
        self.credentials = credentials;
        self
    }

    /// The credential of type `name`, e.g. `postgres`.
    pub fn credentials(&self, name: &str) -> Result<&serde_json::Value> {
        self.credentials
            .get(name)
            .ok_or_else(|| Error::MissingCredentials {
                node: self.node.clone(),
                credential: name.to_owned(),
            })
    }

    /// The same context for a node of `typeVersion` `version`.
    pub fn with_type_version(mut self, version: f64) -> Self {
        self.type_version = Some(version);
        self
    }

    /// The node's `typeVersion`, when the runner knows it (its parameters
    /// were prepared at it).
    pub fn type_version(&self) -> Option<f64> {
        self.type_version
    }

    /// The node's name in the workflow.
    pub fn node_name(&self) -> &str {
        &self.node
    }

    /// The input items' JSON.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The run log.
    pub fn log(&self) -> &Arc<RunLog> {
        &self.log
    }

    /// Where to send progress (streamed text, tool calls), if anyone listens.
    pub fn events(&self) -> Option<&EventSender> {
        self.events.as_ref()
    }

    /// Everything supplied on connection `kind` (n8n's `getInputConnectionData`).
    pub fn input(&self, kind: ConnectionType) -> &[Supply] {
        self.inputs.get(&kind).map_or(&[], Vec::as_slice)
    }

    /// The one chat model connected, or an error naming the node.
    pub fn connected_chat_model(&self) -> Result<Arc<dyn ChatModel>> {
        match self.input(ConnectionType::LanguageModel) {
            [Supply::ChatModel(m), ..] => Ok(m.clone()),
            _ => Err(Error::MissingInput {
                node: self.node.clone(),
                input: "a chat model (ai_languageModel)".into(),
            }),
        }
    }

    /// Every chat model connected, in the order of the node's inputs (the
    /// agent's fallback model second).
    pub fn connected_chat_models(&self) -> Vec<Arc<dyn ChatModel>> {
        super::input_chat_models(&self.inputs)
    }

    /// The connected memory, if any.
    pub fn connected_memory(&self) -> Option<Arc<dyn Memory>> {
        self.input(ConnectionType::Memory)
            .iter()
            .find_map(|s| match s {
                Supply::Memory(m) => Some(m.clone()),
                _ => None,
            })
    }

    /// The connected embeddings model, or an error naming the node.
    pub fn connected_embedder(&self) -> Result<Arc<dyn Embedder>> {
        super::input_embedder(&self.inputs, &self.node)
    }

    /// The connected document loader, or an error naming the node.
    pub fn connected_document_loader(&self) -> Result<Arc<dyn DocumentLoader>> {
        super::input_documents(&self.inputs, &self.node)
    }

    /// The connected text splitter, if any.
    pub fn connected_text_splitter(&self) -> Option<Arc<dyn TextSplitter>> {
        super::input_text_splitter(&self.inputs)
    }

    /// A vector store filled and searched through an embedder, its calls
    /// logged as this node's.
    pub fn create_vector_store(&self, options: VectorStoreOptions) -> Arc<DocumentStore> {
        Arc::new(
            DocumentStore::from_options(options).with_log(LogScope::new(&self.node, &self.log)),
        )
    }

    /// Every connected tool.
    pub fn connected_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.input(ConnectionType::Tool)
            .iter()
            .flat_map(|s| match s {
                Supply::Tool(t) => vec![t.clone()],
                Supply::Toolkit(tools) => tools.clone(),
                _ => vec![],
            })
            .collect()
    }
}
