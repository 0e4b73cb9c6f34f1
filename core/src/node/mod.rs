//! Nodes: the [`Node`] trait `#[ai_node]` implements, and what nodes do at
//! run time. A sub-node implements [`SupplyData`] (it
//! supplies a chat model, memory, embedder or tool to its root node), a tool
//! node may instead implement [`ToolNode`] (nodekit turns it into a tool whose
//! `$fromAI` parameters the LLM fills), and a root node implements
//! [`Execute`]. `#[ai_node]` registers whichever of them the struct
//! implements; a node with none is listed in the catalog but cannot run.
//!
//! A sub-node or tool node sees a [`SupplyContext`], a root node an
//! [`ExecuteContext`].

mod execute;
mod pools;
mod supply;

pub use execute::ExecuteContext;
pub use pools::SharedPools;
pub use supply::{Credentials, IntoChatModel, IntoEmbedder, SupplyContext};

use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::description::{ConnectionType, NodeDescription};
use crate::document::DocumentLoader;
use crate::embed::Embedder;
use crate::error::Result;
use crate::memory::Memory;
use crate::model::ChatModel;
use crate::params::Params;
use crate::text_splitter::TextSplitter;
use crate::tool::{NodeTool, Tool, ToolDefinition};
use crate::vector_store::DocumentStore;

/// A node type: its parameters plus its n8n description.
pub trait Node: Params {
    /// The node's internal name, e.g. `memoryRedis`.
    const NAME: &'static str;

    /// The node's description, built once and cached.
    fn description() -> &'static NodeDescription;
}

/// What a sub-node hands to the root node it is connected to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Supply {
    /// For `ai_languageModel`.
    ChatModel(Arc<dyn ChatModel>),
    /// For `ai_memory`.
    Memory(Arc<dyn Memory>),
    /// For `ai_tool`.
    Tool(Arc<dyn Tool>),
    /// For `ai_tool`: several tools from one node (an MCP server's, as n8n's toolkits).
    Toolkit(Vec<Arc<dyn Tool>>),
    /// For `ai_embedding`.
    Embedder(Arc<dyn Embedder>),
    /// For `ai_vectorStore`.
    VectorStore(Arc<DocumentStore>),
    /// For `ai_document`.
    Documents(Arc<dyn DocumentLoader>),
    /// For `ai_textSplitter`.
    TextSplitter(Arc<dyn TextSplitter>),
    /// An object of a kind nodekit does not name (an output parser, a
    /// retriever, a reranker), supplied by the crate that defines the kind.
    Other {
        /// The connection it travels on.
        connection: ConnectionType,
        /// The object; its consumer downcasts it.
        object: Arc<dyn SupplyObject>,
    },
}

/// A supplied object of a kind of sub-node a crate of its own adds. The
/// crate defines the kind's trait, implements it for
/// [`Logged<dyn ItsTrait>`](crate::run_log::Logged), and supplies a handle
/// that implements this trait as [`Supply::Other`]; the consumer turns the
/// object into an `Arc<dyn Any + Send + Sync>` and downcasts it to the
/// handle.
pub trait SupplyObject: std::any::Any + Send + Sync + std::fmt::Debug {
    /// The same object with its calls logged in `scope`: the node contexts
    /// call it once, as the object leaves the node that made it.
    fn logged(self: Arc<Self>, scope: &crate::run_log::LogScope) -> Arc<dyn SupplyObject>;

    /// What it is, for messages: "an output parser".
    fn what(&self) -> &'static str;
}

impl Supply {
    /// The connection type this supply travels on.
    pub fn connection(&self) -> ConnectionType {
        match self {
            Supply::ChatModel(_) => ConnectionType::LanguageModel,
            Supply::Memory(_) => ConnectionType::Memory,
            Supply::Tool(_) | Supply::Toolkit(_) => ConnectionType::Tool,
            Supply::Embedder(_) => ConnectionType::Embedding,
            Supply::VectorStore(_) => ConnectionType::VectorStore,
            Supply::Documents(_) => ConnectionType::Document,
            Supply::TextSplitter(_) => ConnectionType::TextSplitter,
            Supply::Other { connection, .. } => *connection,
        }
    }

    /// What this is, for messages: "a chat model", "several tools", ...
    pub fn what(&self) -> &'static str {
        match self {
            Supply::ChatModel(_) => "a chat model",
            Supply::Memory(_) => "memory",
            Supply::Tool(_) => "a tool",
            Supply::Toolkit(_) => "several tools",
            Supply::Embedder(_) => "an embedder",
            Supply::VectorStore(_) => "a vector store",
            Supply::Documents(_) => "a document loader",
            Supply::TextSplitter(_) => "a text splitter",
            Supply::Other { object, .. } => object.what(),
        }
    }

    /// The tools, or an error saying that node `node` supplies something else.
    pub fn into_tools(self, node: &str) -> crate::Result<Vec<Arc<dyn Tool>>> {
        match self {
            Supply::Tool(tool) => Ok(vec![tool]),
            Supply::Toolkit(tools) => Ok(tools),
            other => Err(crate::Error::NotATool {
                node: node.to_owned(),
                supplies: format!("`{}`", other.connection()),
            }),
        }
    }
}

impl From<Arc<dyn ChatModel>> for Supply {
    fn from(v: Arc<dyn ChatModel>) -> Self {
        Supply::ChatModel(v)
    }
}
impl From<Arc<dyn Memory>> for Supply {
    fn from(v: Arc<dyn Memory>) -> Self {
        Supply::Memory(v)
    }
}
impl From<Arc<dyn Tool>> for Supply {
    fn from(v: Arc<dyn Tool>) -> Self {
        Supply::Tool(v)
    }
}
impl From<Arc<dyn Embedder>> for Supply {
    fn from(v: Arc<dyn Embedder>) -> Self {
        Supply::Embedder(v)
    }
}
impl From<Arc<DocumentStore>> for Supply {
    fn from(v: Arc<DocumentStore>) -> Self {
        Supply::VectorStore(v)
    }
}
impl From<Arc<dyn DocumentLoader>> for Supply {
    fn from(v: Arc<dyn DocumentLoader>) -> Self {
        Supply::Documents(v)
    }
}
impl From<Arc<dyn TextSplitter>> for Supply {
    fn from(v: Arc<dyn TextSplitter>) -> Self {
        Supply::TextSplitter(v)
    }
}

/// What a node's sub-nodes supplied, by connection type.
pub type Inputs = std::collections::HashMap<ConnectionType, Vec<Supply>>;

/// The first supply of `inputs` that `pick` accepts.
fn first<T>(
    inputs: &Inputs,
    kind: ConnectionType,
    pick: impl Fn(&Supply) -> Option<T>,
) -> Option<T> {
    inputs.get(&kind)?.iter().find_map(pick)
}

/// Every connected chat model, in input order.
pub(crate) fn input_chat_models(inputs: &Inputs) -> Vec<Arc<dyn crate::model::ChatModel>> {
    inputs
        .get(&ConnectionType::LanguageModel)
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Supply::ChatModel(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

/// The connected embedder, or an error naming `node`.
pub(crate) fn input_embedder(inputs: &Inputs, node: &str) -> Result<Arc<dyn Embedder>> {
    first(inputs, ConnectionType::Embedding, |s| match s {
        Supply::Embedder(e) => Some(e.clone()),
        _ => None,
    })
    .ok_or_else(|| crate::error::Error::MissingInput {
        node: node.to_owned(),
        input: "an embeddings model (ai_embedding)".into(),
    })
}

/// The connected text splitter, if any.
pub(crate) fn input_text_splitter(inputs: &Inputs) -> Option<Arc<dyn TextSplitter>> {
    first(inputs, ConnectionType::TextSplitter, |s| match s {
        Supply::TextSplitter(t) => Some(t.clone()),
        _ => None,
    })
}

/// The connected document loader, or an error naming `node`.
pub(crate) fn input_documents(inputs: &Inputs, node: &str) -> Result<Arc<dyn DocumentLoader>> {
    first(inputs, ConnectionType::Document, |s| match s {
        Supply::Documents(d) => Some(d.clone()),
        _ => None,
    })
    .ok_or_else(|| crate::error::Error::MissingInput {
        node: node.to_owned(),
        input: "a document loader (ai_document)".into(),
    })
}

/// A sub-node: builds what it supplies from its parameters.
pub trait SupplyData: Params + Send + 'static {
    /// Supplies the node's object, made through `ctx`'s factories so that its calls are logged.
    fn supply_data(self, ctx: &SupplyContext) -> impl Future<Output = Result<Supply>> + Send;
}

/// A tool node: the LLM fills its `$fromAI` parameters, then it runs once per call.
pub trait ToolNode: Node + Send + 'static {
    /// Runs the tool with parameters that include the LLM's arguments.
    fn call(self, ctx: &SupplyContext) -> impl Future<Output = Result<Value>> + Send;
}

/// A root node: runs on input items and returns output items.
pub trait Execute: Params + Send + 'static {
    /// Runs the node.
    fn execute(self, ctx: &ExecuteContext) -> impl Future<Output = Result<Vec<Value>>> + Send;
}

/// Builds a node's supply from its resolved parameters: defaults applied
/// once, at the node's `typeVersion` ([`CatalogEntry::parameters_at`](crate::registry::CatalogEntry::parameters_at)),
/// which the context carries. Run it with [`SupplyContext::supply`], which
/// logs what it supplies.
pub type SupplyFn = fn(Value, SupplyContext) -> BoxFuture<'static, Result<Supply>>;

/// Runs a root node on its resolved parameters (prepared as for [`SupplyFn`]).
pub type ExecuteFn = fn(Value, ExecuteContext) -> BoxFuture<'static, Result<Vec<Value>>>;

/// The run-time entry points of a registered node.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeRuntime {
    /// Set for sub-nodes and tool nodes.
    pub supply: Option<SupplyFn>,
    /// Set for root nodes.
    pub execute: Option<ExecuteFn>,
}

impl NodeRuntime {
    /// No entry points: a node that is only described.
    pub(crate) fn default_fn() -> NodeRuntime {
        NodeRuntime::default()
    }
}

pub(crate) fn supply_with<T: SupplyData>(
    params: Value,
    ctx: SupplyContext,
) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let node = T::from_params(&params, ctx.node_name())?;
        node.supply_data(&ctx).await
    })
}

pub(crate) fn tool_with<T: ToolNode>(
    params: Value,
    ctx: SupplyContext,
) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let tool = NodeTool::prepared(T::description(), ctx.node_name(), params)?;
        let runner: Arc<dyn Tool> = Arc::new(ToolNodeRunner::<T> {
            tool,
            ctx: ctx.clone(),
            node: PhantomData,
        });
        Ok(Supply::Tool(runner))
    })
}

pub(crate) fn execute_with<T: Execute>(
    params: Value,
    ctx: ExecuteContext,
) -> BoxFuture<'static, Result<Vec<Value>>> {
    Box::pin(async move {
        let node = T::from_params(&params, ctx.node_name())?;
        node.execute(&ctx).await
    })
}

/// A [`ToolNode`] as a [`Tool`]: each call builds the node from the LLM's arguments.
struct ToolNodeRunner<T> {
    tool: NodeTool,
    ctx: SupplyContext,
    node: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ToolNodeRunner<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolNodeRunner")
            .field("tool", &self.tool.definition().name)
            .finish()
    }
}

impl<T: ToolNode> Tool for ToolNodeRunner<T> {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        Box::pin(async move {
            let node: T = self.tool.instantiate(&args)?;
            node.call(&self.ctx).await
        })
    }
}
