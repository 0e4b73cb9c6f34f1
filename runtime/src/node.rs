//! What nodes do at run time. A sub-node implements [`SupplyData`] (it
//! supplies a chat model, memory, embedder or tool to its root node), a tool
//! node may instead implement [`ToolNode`] (nodekit turns it into a tool whose
//! `$fromAI` parameters the LLM fills), and a root node implements
//! [`Execute`]. `#[ai_node]` registers whichever of them the struct
//! implements; a node with none is listed in the catalog but cannot run.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::context::{RunLog, SupplyContext};
use crate::description::ConnectionType;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::model::{BoxFuture, ChatModel};
use crate::params::{Node, Params};
use crate::tool::{NodeTool, Tool, ToolDefinition};

/// What a sub-node hands to the root node it is connected to.
#[derive(Debug, Clone)]
pub enum Supply {
    /// For `ai_languageModel`.
    ChatModel(Arc<dyn ChatModel>),
    /// For `ai_memory`.
    Memory(Arc<dyn Memory>),
    /// For `ai_tool`.
    Tool(Arc<dyn Tool>),
    /// For `ai_embedding`.
    Embedder(Arc<dyn Embedder>),
}

impl Supply {
    /// The connection type this supply travels on.
    pub fn connection(&self) -> ConnectionType {
        match self {
            Supply::ChatModel(_) => ConnectionType::LanguageModel,
            Supply::Memory(_) => ConnectionType::Memory,
            Supply::Tool(_) => ConnectionType::Tool,
            Supply::Embedder(_) => ConnectionType::Embedding,
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

/// Builds a node's supply from its resolved parameters.
pub type SupplyFn = fn(Value, SupplyContext) -> BoxFuture<'static, Result<Supply>>;

/// Runs a root node on its resolved parameters.
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

/// What a root node sees: its input items, what its sub-nodes supplied, and the log.
#[derive(Debug, Clone)]
pub struct ExecuteContext {
    node: String,
    items: Vec<Value>,
    inputs: HashMap<ConnectionType, Vec<Supply>>,
    log: Arc<RunLog>,
    events: Option<tokio::sync::mpsc::UnboundedSender<crate::agent::AgentEvent>>,
}

impl ExecuteContext {
    /// A context for root node `node`.
    pub fn new(
        node: impl Into<String>,
        items: Vec<Value>,
        inputs: HashMap<ConnectionType, Vec<Supply>>,
        log: Arc<RunLog>,
        events: Option<tokio::sync::mpsc::UnboundedSender<crate::agent::AgentEvent>>,
    ) -> Self {
        ExecuteContext {
            node: node.into(),
            items,
            inputs,
            log,
            events,
        }
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
    pub fn events(&self) -> Option<&tokio::sync::mpsc::UnboundedSender<crate::agent::AgentEvent>> {
        self.events.as_ref()
    }

    /// Everything supplied on connection `kind` (n8n's `getInputConnectionData`).
    pub fn input(&self, kind: ConnectionType) -> &[Supply] {
        self.inputs.get(&kind).map_or(&[], Vec::as_slice)
    }

    /// The one chat model connected, or an error naming the node.
    pub fn chat_model(&self) -> Result<Arc<dyn ChatModel>> {
        match self.input(ConnectionType::LanguageModel) {
            [Supply::ChatModel(m), ..] => Ok(m.clone()),
            _ => Err(Error::MissingInput {
                node: self.node.clone(),
                input: "a chat model (ai_languageModel)".into(),
            }),
        }
    }

    /// The connected memory, if any.
    pub fn memory(&self) -> Option<Arc<dyn Memory>> {
        self.input(ConnectionType::Memory)
            .iter()
            .find_map(|s| match s {
                Supply::Memory(m) => Some(m.clone()),
                _ => None,
            })
    }

    /// Every connected tool.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.input(ConnectionType::Tool)
            .iter()
            .filter_map(|s| match s {
                Supply::Tool(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }
}

fn supply_with<T: SupplyData>(
    params: Value,
    ctx: SupplyContext,
) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let node = T::from_params(&params, ctx.node_name())?;
        let supply = node.supply_data(&ctx).await?;
        // There is no unlogged path, even for objects made without the factories.
        Ok(ctx.ensure_logged(supply))
    })
}

fn tool_with<T: ToolNode>(params: Value, ctx: SupplyContext) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let tool = NodeTool::new(T::description(), ctx.node_name(), &params)?;
        let runner: Arc<dyn Tool> = Arc::new(ToolNodeRunner::<T> {
            tool,
            ctx: ctx.clone(),
            node: PhantomData,
        });
        Ok(Supply::Tool(ctx.tool(runner)))
    })
}

fn execute_with<T: Execute>(
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

/// Finds which run-time traits a node type implements, without requiring
/// any: an inherent method (bounded by the trait) wins over the fallback
/// trait method of the same name when the bound holds.
#[doc(hidden)]
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> Probe<T> {
    #[doc(hidden)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T: SupplyData> Probe<T> {
    #[doc(hidden)]
    pub fn supply_data(&self) -> Option<SupplyFn> {
        Some(supply_with::<T>)
    }
}

impl<T: ToolNode> Probe<T> {
    #[doc(hidden)]
    pub fn tool_node(&self) -> Option<SupplyFn> {
        Some(tool_with::<T>)
    }
}

impl<T: crate::sql::DbTool> Probe<T> {
    #[doc(hidden)]
    pub fn db_tool(&self) -> Option<SupplyFn> {
        Some(crate::sql::tool::supply_db_tool::<T>)
    }
}

impl<T: Execute> Probe<T> {
    #[doc(hidden)]
    pub fn execute(&self) -> Option<ExecuteFn> {
        Some(execute_with::<T>)
    }
}

/// Fallbacks of [`Probe`] for types without the traits.
#[doc(hidden)]
pub trait ProbeFallback {
    #[doc(hidden)]
    fn supply_data(&self) -> Option<SupplyFn> {
        None
    }
    #[doc(hidden)]
    fn tool_node(&self) -> Option<SupplyFn> {
        None
    }
    #[doc(hidden)]
    fn db_tool(&self) -> Option<SupplyFn> {
        None
    }
    #[doc(hidden)]
    fn execute(&self) -> Option<ExecuteFn> {
        None
    }
}

impl<T> ProbeFallback for Probe<T> {}
