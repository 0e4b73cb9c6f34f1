//! What a sub-node sees while it supplies its object: its name, credentials
//! and input item, what its own sub-nodes supplied (a vector store's
//! embeddings model), and the run log. Method names say what they do:
//! `create_*` makes an object (`ctx.create_chat_model(..)`,
//! `ctx.create_embeddings(..)`, `ctx.create_memory(..)`,
//! `ctx.create_vector_store(..)`), `wrap_*` wraps one the node made itself,
//! and `connected_*` reads what the node's own sub-nodes supplied. Every
//! object the first two return is wrapped: each call appends an entry to
//! the supplying node's run log and emits a tracing span. There is no
//! unwrapped path.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Inputs, SharedPools, Supply};
use crate::document::DocumentLoader;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::model::ChatModel;
use crate::run_log::{self, RunLog};
use crate::text_splitter::TextSplitter;
use crate::tool::Tool;
use crate::vector_store::{DocumentStore, VectorStoreOptions};

/// What `ctx.create_chat_model(..)` makes a model from (the AI Node SDK's
/// `createChatModel` options): a provider's settings, such as
/// `nodekit::model::openai::OpenAiConfig`, a
/// [`CustomChatModel`](crate::model::custom::CustomChatModel), or any
/// [`ChatModel`]. A provider's crate implements it for its own settings.
pub trait IntoChatModel {
    /// The model these settings describe.
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>>;
}

impl<M: ChatModel + 'static> IntoChatModel for M {
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>> {
        Ok(Arc::new(self))
    }
}

/// What `ctx.create_embeddings(..)` makes an embeddings model from: a
/// provider's settings, such as
/// `nodekit::embed::EmbeddingsConfig`, or any
/// [`Embedder`]. A provider's crate implements it for its own settings.
pub trait IntoEmbedder {
    /// The embedder these settings describe.
    fn into_embedder(self) -> Result<Arc<dyn Embedder>>;
}

impl<E: Embedder + 'static> IntoEmbedder for E {
    fn into_embedder(self) -> Result<Arc<dyn Embedder>> {
        Ok(Arc::new(self))
    }
}

/// Credentials by type name, as resolved for one node.
pub type Credentials = Map<String, Value>;

/// What a sub-node's `supply_data` sees.
#[derive(Clone)]
pub struct SupplyContext {
    node: String,
    credentials: Arc<Credentials>,
    item: Value,
    log: Arc<RunLog>,
    type_version: Option<f64>,
    inputs: Arc<Inputs>,
    pools: SharedPools,
}

impl SupplyContext {
    /// A context for workflow node `node` with its resolved credentials and input item.
    pub fn new(
        node: impl Into<String>,
        credentials: Arc<Credentials>,
        item: Value,
        log: Arc<RunLog>,
    ) -> Self {
        SupplyContext {
            node: node.into(),
            credentials,
            item,
            log,
            type_version: None,
            inputs: Arc::default(),
            pools: SharedPools::default(),
        }
    }

    /// The same context with connection pools shared with other contexts
    /// (without it, the context has a set of its own).
    pub fn with_pools(mut self, pools: SharedPools) -> Self {
        self.pools = pools;
        self
    }

    /// The connection pools this node shares with the others its owner
    /// supplies: ask them for a database pool rather than opening one.
    pub fn pools(&self) -> &SharedPools {
        &self.pools
    }

    /// The same context with what the node's own sub-nodes supplied (a
    /// vector store's embeddings model, a loader's text splitter).
    pub fn with_inputs(mut self, inputs: Inputs) -> Self {
        self.inputs = Arc::new(inputs);
        self
    }

    /// Everything supplied to this node on connection `kind`.
    pub fn input(&self, kind: crate::description::ConnectionType) -> &[Supply] {
        self.inputs.get(&kind).map_or(&[], Vec::as_slice)
    }

    /// The embeddings model connected to this node, or an error naming it.
    pub fn connected_embedder(&self) -> Result<Arc<dyn Embedder>> {
        super::input_embedder(&self.inputs, &self.node)
    }

    /// The text splitter connected to this node, if any.
    pub fn connected_text_splitter(&self) -> Option<Arc<dyn TextSplitter>> {
        super::input_text_splitter(&self.inputs)
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

    /// The input item's JSON (`$json`).
    pub fn item(&self) -> &Value {
        &self.item
    }

    /// The run log this node writes to.
    pub fn log(&self) -> &Arc<RunLog> {
        &self.log
    }

    /// The credential of type `name`, e.g. `openAiApi`.
    pub fn credentials(&self, name: &str) -> Result<&Value> {
        self.credentials
            .get(name)
            .ok_or_else(|| Error::MissingCredentials {
                node: self.node.clone(),
                credential: name.to_owned(),
            })
    }

    /// A chat model made from `options` (a provider's settings, or a
    /// model), wrapped for the run log.
    pub fn create_chat_model(&self, options: impl IntoChatModel) -> Result<Arc<dyn ChatModel>> {
        Ok(run_log::logged_model(
            options.into_chat_model()?,
            &self.node,
            &self.log,
        ))
    }

    /// An embeddings model made from `options` (a provider's settings, or
    /// an embedder), wrapped for the run log.
    pub fn create_embeddings(&self, options: impl IntoEmbedder) -> Result<Arc<dyn Embedder>> {
        Ok(self.wrap_embedder(options.into_embedder()?))
    }

    /// Any embedder, wrapped for the run log.
    pub fn wrap_embedder(&self, inner: Arc<dyn Embedder>) -> Arc<dyn Embedder> {
        run_log::logged_embedder(inner, &self.node, &self.log)
    }
}

impl std::fmt::Debug for SupplyContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credential values are secrets: only their types are shown.
        f.debug_struct("SupplyContext")
            .field("node", &self.node)
            .field("credentials", &self.credentials.keys().collect::<Vec<_>>())
            .field("item", &self.item)
            .field("type_version", &self.type_version)
            .finish_non_exhaustive()
    }
}

impl SupplyContext {
    /// `supply` with its object wrapped for the run log, unless a factory already did.
    pub fn ensure_logged(&self, supply: Supply) -> Supply {
        match supply {
            Supply::ChatModel(m) if !m.is_logged() => {
                Supply::ChatModel(run_log::logged_model(m, &self.node, &self.log))
            }
            Supply::Embedder(e) if !e.is_logged() => Supply::Embedder(self.wrap_embedder(e)),
            Supply::Memory(m) if !m.is_logged() => Supply::Memory(self.wrap_memory(m)),
            Supply::Tool(t) if !t.is_logged() => Supply::Tool(self.wrap_tool(t)),
            Supply::Toolkit(tools) => Supply::Toolkit(
                tools
                    .into_iter()
                    .map(|t| if t.is_logged() { t } else { self.wrap_tool(t) })
                    .collect(),
            ),
            Supply::VectorStore(d) if !d.is_logged() => {
                Supply::VectorStore(Arc::new(d.with_log(&self.node, &self.log)))
            }
            Supply::Documents(d) if !d.is_logged() => {
                Supply::Documents(self.wrap_document_loader(d))
            }
            Supply::TextSplitter(t) if !t.is_logged() => {
                Supply::TextSplitter(self.wrap_text_splitter(t))
            }
            logged => logged,
        }
    }

    /// Conversation memory (the AI Node SDK's `createMemory`): buffer, window or
    /// token buffer over a chat history, wrapped for the run log.
    pub fn create_memory(&self, options: crate::memory::MemoryOptions) -> Arc<dyn Memory> {
        self.wrap_memory(Arc::new(crate::memory::ConversationMemory::new(options)))
    }

    /// Any [`Memory`] implementation, wrapped for the run log.
    pub fn wrap_memory(&self, memory: Arc<dyn Memory>) -> Arc<dyn Memory> {
        run_log::logged_memory(memory, &self.node, &self.log)
    }

    /// A tool, wrapped for the run log.
    pub fn wrap_tool(&self, tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
        run_log::logged_tool(tool, &self.node, &self.log)
    }

    /// A vector store filled and searched through an embedder (the AI
    /// Node SDK's `createVectorStore`), its calls logged.
    pub fn create_vector_store(&self, options: VectorStoreOptions) -> Arc<DocumentStore> {
        Arc::new(DocumentStore::from_options(options).logged(&self.node, &self.log))
    }

    /// A text splitter, its splits logged.
    pub fn wrap_text_splitter(&self, splitter: Arc<dyn TextSplitter>) -> Arc<dyn TextSplitter> {
        run_log::logged_text_splitter(splitter, &self.node, &self.log)
    }

    /// A document loader, its loads logged.
    pub fn wrap_document_loader(&self, loader: Arc<dyn DocumentLoader>) -> Arc<dyn DocumentLoader> {
        run_log::logged_document_loader(loader, &self.node, &self.log)
    }
}
