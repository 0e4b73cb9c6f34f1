//! What a sub-node sees while it supplies its object: its name, credentials
//! and input item, what its own sub-nodes supplied (a vector store's
//! embeddings model), and the run log. Method names say what they do:
//! `create_*` makes an object (`ctx.create_chat_model(..)`,
//! `ctx.create_embeddings(..)`, `ctx.create_memory(..)`,
//! `ctx.create_vector_store(..)`) and `connected_*` reads what the node's
//! own sub-nodes supplied.
//!
//! Every object a node supplies is logged in one place,
//! [`SupplyContext::supply`], as it leaves the node: each call appends an
//! entry to the supplying node's run log and emits a tracing span. The
//! objects the factories make are logged already (a node may use them
//! itself), and are not logged twice; [`SupplyContext::logged`] logs any
//! other object a node uses itself. There is no unlogged path.

use std::any::Any;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::{Inputs, SharedPools, Supply, SupplyFn};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::model::ChatModel;
use crate::run_log::{LogScope, Logged, RunLog};
use crate::text_splitter::TextSplitter;
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

/// An object a factory logged, kept while the node supplies.
type Made = Arc<dyn Any + Send + Sync>;

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
    /// What the factories logged while the node supplies, held so that
    /// their addresses stay theirs; `None` once the supply is logged (a
    /// tool node's context lives on, and its calls remember nothing).
    made: Arc<Mutex<Option<Vec<Made>>>>,
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
            made: Arc::new(Mutex::new(Some(Vec::new()))),
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

    /// Every chat model connected to this node, in the order of its inputs
    /// (n8n's Model Selector chooses among them).
    pub fn connected_chat_models(&self) -> Vec<Arc<dyn ChatModel>> {
        super::input_chat_models(&self.inputs)
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
    /// model), logged as this node's.
    pub fn create_chat_model(&self, options: impl IntoChatModel) -> Result<Arc<dyn ChatModel>> {
        Ok(self.logged(options.into_chat_model()?))
    }

    /// An embeddings model made from `options` (a provider's settings, or
    /// an embedder), logged as this node's.
    pub fn create_embeddings(&self, options: impl IntoEmbedder) -> Result<Arc<dyn Embedder>> {
        Ok(self.logged(options.into_embedder()?))
    }

    /// Conversation memory (the AI Node SDK's `createMemory`): buffer,
    /// window or token buffer over a chat history, logged as this node's.
    pub fn create_memory(&self, options: crate::memory::MemoryOptions) -> Arc<dyn Memory> {
        self.logged(Arc::new(crate::memory::ConversationMemory::new(options)) as Arc<dyn Memory>)
    }

    /// A vector store filled and searched through an embedder (the AI
    /// Node SDK's `createVectorStore`), its calls logged as this node's.
    pub fn create_vector_store(&self, options: VectorStoreOptions) -> Arc<DocumentStore> {
        let store = Arc::new(DocumentStore::from_options(options).with_log(self.scope()));
        self.remember(store.clone());
        store
    }

    /// `inner` with its calls logged as this node's, for an object the
    /// node uses itself (what it supplies is logged as it leaves).
    pub fn logged<T>(&self, inner: Arc<T>) -> Arc<Logged<T>>
    where
        T: ?Sized + Send + Sync + 'static,
    {
        let logged = Arc::new(Logged::new(inner, self.scope()));
        self.remember(logged.clone());
        logged
    }

    fn remember(&self, object: Made) {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(made) = made.as_mut() {
            made.push(object);
        }
    }

    /// Where this node's calls are logged.
    pub fn scope(&self) -> LogScope {
        LogScope::new(&self.node, &self.log)
    }

    /// Runs a node's supply function `make` on its prepared `params` in
    /// this context, and logs what it supplies: the one place every
    /// supplied object is wrapped for the run log.
    pub async fn supply(self, make: SupplyFn, params: Value) -> Result<Supply> {
        let supply = make(params, self.clone()).await?;
        Ok(self.ensure_logged(supply))
    }

    /// `supply` with its objects logged as this node's, except those the
    /// factories made here, which are logged already. The context stops
    /// remembering what it logs.
    fn ensure_logged(&self, supply: Supply) -> Supply {
        let made = self
            .made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default();
        let ours = |object: *const ()| {
            made.iter()
                .any(|m| std::ptr::addr_eq(Arc::as_ptr(m), object))
        };
        if address(&supply).is_some_and(&ours) {
            return supply;
        }
        let scope = self.scope();
        match supply {
            Supply::ChatModel(m) => Supply::ChatModel(Arc::new(Logged::new(m, scope))),
            Supply::Embedder(e) => Supply::Embedder(Arc::new(Logged::new(e, scope))),
            Supply::Memory(m) => Supply::Memory(Arc::new(Logged::new(m, scope))),
            Supply::Tool(t) => Supply::Tool(Arc::new(Logged::new(t, scope))),
            Supply::Toolkit(tools) => Supply::Toolkit(
                tools
                    .into_iter()
                    .map(|t| {
                        if ours(Arc::as_ptr(&t).cast()) {
                            t
                        } else {
                            Arc::new(Logged::new(t, scope.clone()))
                        }
                    })
                    .collect(),
            ),
            Supply::VectorStore(d) => Supply::VectorStore(Arc::new(d.with_log(scope))),
            Supply::Documents(d) => Supply::Documents(Arc::new(Logged::new(d, scope))),
            Supply::TextSplitter(t) => Supply::TextSplitter(Arc::new(Logged::new(t, scope))),
            Supply::Other { connection, object } => Supply::Other {
                connection,
                object: object.logged(&scope),
            },
        }
    }
}

/// The address of the object `supply` holds (none for a toolkit, whose
/// tools are told apart one by one).
fn address(supply: &Supply) -> Option<*const ()> {
    Some(match supply {
        Supply::ChatModel(m) => Arc::as_ptr(m).cast(),
        Supply::Embedder(e) => Arc::as_ptr(e).cast(),
        Supply::Memory(m) => Arc::as_ptr(m).cast(),
        Supply::Tool(t) => Arc::as_ptr(t).cast(),
        Supply::Toolkit(_) => return None,
        Supply::VectorStore(d) => Arc::as_ptr(d).cast(),
        Supply::Documents(d) => Arc::as_ptr(d).cast(),
        Supply::TextSplitter(t) => Arc::as_ptr(t).cast(),
        Supply::Other { object, .. } => Arc::as_ptr(object).cast(),
    })
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
