//! Running workflows in n8n's export format (`nodes` + `connections`), and
//! the tools agent that a workflow's AI Agent node runs ([`agent`]). Users
//! reach them through `nodekit` (feature `agent`) as `nodekit::workflow`
//! and `nodekit::agent`.
//!
//! Root nodes (those that implement `Execute`, such as the AI Agent, and
//! are not connected to another node on an `ai_*` output) run in the order
//! their `main` connections give, starting from the trigger (any node whose
//! type mentions `Trigger`, which passes the input item on). Before a root
//! node runs on an item, every sub-node connected to it on an `ai_*`
//! connection supplies its object, after its own sub-nodes supplied theirs
//! (a vector store's embeddings model); sub-node and root-node parameters
//! get their defaults and their `$json` expressions resolved against that
//! item. Credentials are looked up by credential type.

pub mod agent;
mod chat_trigger;
mod filter;

pub use chat_trigger::{AllowedOrigins, CHAT_TRIGGER_TYPE, ChatTrigger, ResponseMode};
pub use filter::{Condition, Filter, FilterError, FilterOptions, Operator};

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Map, Value};

use nodekit_core::description::ConnectionType;
use nodekit_core::error::{Error, Result, WorkflowError, describe_value, quoted_json_error};
use nodekit_core::event::EventSender;
use nodekit_core::message::Message;
use nodekit_core::node::{Credentials, ExecuteContext, SharedPools, Supply, SupplyContext};
use nodekit_core::registry::{Catalog, CatalogEntry};
use nodekit_core::run_log::RunLog;
use nodekit_core::tool::Tool;

/// A workflow in n8n's export format.
///
/// ```
/// use nodekit::prelude::*;
/// use nodekit::serde_json::{Value, json};
/// use nodekit::workflow::{RunOptions, Workflow};
///
/// /// Greets whoever the chat trigger names.
/// #[ai_node(name = "greet", package = "docs")]
/// pub struct Greet {
///     /// The greeting.
///     #[param(default = "Hello")]
///     pub greeting: String,
/// }
///
/// impl Execute for Greet {
///     async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<Value>> {
///         let greet = |item: &Value| {
///             json!({"output": format!("{}, {}!", self.greeting, item["chatInput"].as_str().unwrap_or("you"))})
///         };
///         Ok(ctx.items().iter().map(greet).collect())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// let workflow = Workflow::from_json(
///     r#"{"nodes": [{"name": "Greet", "type": "docs.greet", "typeVersion": 1, "parameters": {"greeting": "Hi"}}]}"#,
/// )?;
/// let options = RunOptions { input: json!({"chatInput": "Ada"}), ..RunOptions::default() };
/// let result = workflow.run(Catalog::global(), options).await?;
/// assert_eq!(result.items, [json!({"output": "Hi, Ada!"})]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Deserialize)]
pub struct Workflow {
    /// The workflow's name.
    #[serde(default)]
    pub name: String,
    /// Its nodes.
    pub nodes: Vec<WorkflowNode>,
    /// `connections[source][type] = [[{node, type, index}]]`.
    #[serde(default)]
    pub connections: Map<String, Value>,
}

/// One node of a workflow.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowNode {
    /// Unique name in the workflow.
    pub name: String,
    /// n8n's id of the node (empty when the export has none).
    #[serde(default)]
    pub id: String,
    /// The id in a trigger's webhook paths (`/webhook/<id>/chat`).
    #[serde(default)]
    pub webhook_id: Option<String>,
    /// Node type, `package.nodeName`.
    #[serde(rename = "type")]
    pub node_type: String,
    /// The node's version.
    #[serde(default = "one")]
    pub type_version: f64,
    /// Parameter values.
    #[serde(default)]
    pub parameters: Value,
    /// Skipped when set.
    #[serde(default)]
    pub disabled: bool,
}

fn one() -> f64 {
    1.0
}

/// Inputs of a run.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The item the trigger emits, e.g. `{"chatInput": "...", "sessionId": "..."}`.
    pub input: Value,
    /// Credentials by type.
    pub credentials: Arc<Credentials>,
    /// Where agents send progress.
    pub events: Option<EventSender>,
    /// The database pools the run's nodes use. Runs given the same set
    /// share its pools (a server keeps one); by default each run has its own.
    pub pools: SharedPools,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credential values are secrets: only their types are shown.
        f.debug_struct("RunOptions")
            .field("input", &self.input)
            .field("credentials", &self.credentials.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The last root node's output items.
    pub items: Vec<Value>,
    /// Every logged call of the run.
    pub log: Arc<RunLog>,
}

/// One `ai_*` or `main` connection into a node.
struct Edge<'a> {
    source: &'a str,
    kind: &'a str,
    target: String,
    /// The target's input of this type the connection goes to (n8n's
    /// `index`: an agent's fallback model is its second `ai_languageModel`).
    index: u64,
}

impl Workflow {
    /// Reads a workflow from its JSON text.
    pub fn from_json(text: &str) -> Result<Workflow> {
        let workflow: Workflow =
            serde_json::from_str(text).map_err(|e| WorkflowError::NotAnExport {
                reason: quoted_json_error(&e),
            })?;
        let mut names = HashSet::new();
        for n in &workflow.nodes {
            if !names.insert(n.name.as_str()) {
                return Err(WorkflowError::DuplicateNode {
                    name: n.name.clone(),
                }
                .into());
            }
        }
        Ok(workflow)
    }

    fn node(&self, name: &str) -> Result<&WorkflowNode> {
        self.nodes.iter().find(|n| n.name == name).ok_or_else(|| {
            WorkflowError::UnknownNode {
                name: name.to_owned(),
            }
            .into()
        })
    }

    fn edges(&self) -> Result<Vec<Edge<'_>>> {
        let mut out = Vec::new();
        for (source, outputs) in &self.connections {
            let Value::Object(outputs) = outputs else {
                return Err(WorkflowError::Connections {
                    node: source.clone(),
                    found: describe_value(outputs),
                }
                .into());
            };
            for (kind, lists) in outputs {
                for list in lists.as_array().into_iter().flatten() {
                    for c in list.as_array().into_iter().flatten() {
                        let target = c.get("node").and_then(Value::as_str).ok_or_else(|| {
                            Error::from(WorkflowError::NoTarget {
                                kind: kind.clone(),
                                node: source.clone(),
                            })
                        })?;
                        out.push(Edge {
                            source,
                            kind,
                            target: target.to_owned(),
                            index: c.get("index").and_then(Value::as_u64).unwrap_or(0),
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    fn entry<'c>(&self, catalog: &'c Catalog, node: &WorkflowNode) -> Result<&'c CatalogEntry> {
        catalog.find(&node.node_type).map_err(|e| {
            WorkflowError::NodeType {
                node: node.name.clone(),
                source: Box::new(e),
            }
            .into()
        })
    }

    /// Runs the workflow once on `options.input`.
    pub async fn run(&self, catalog: &Catalog, options: RunOptions) -> Result<RunResult> {
        let log = RunLog::new();
        let run = RunScope {
            log: log.clone(),
            pools: options.pools.clone(),
        };
        let edges = self.edges()?;
        for e in &edges {
            self.node(e.source)?;
            self.node(&e.target)?;
        }
        let roots = self.root_order(catalog, &edges)?;
        if roots.is_empty() {
            return Err(WorkflowError::NothingToRun.into());
        }
        let mut items = vec![options.input.clone()];
        for root in roots {
            let entry = self.entry(catalog, root)?;
            let execute = entry
                .runtime
                .execute
                .expect("root_order keeps executable nodes");
            let mut out = Vec::new();
            for item in &items {
                let inputs = self
                    .supplies(catalog, &edges, &root.name, item, &options, &run, 0)
                    .await?;
                let params = self.params(entry, root, item)?;
                let ctx = ExecuteContext::new(
                    &root.name,
                    vec![item.clone()],
                    inputs,
                    log.clone(),
                    options.events.clone(),
                )
                .with_type_version(root.type_version)
                .with_credentials(Arc::new(credentials_of(entry, &options)))
                .with_pools(run.pools.clone());
                out.extend(execute(params, ctx).await?);
            }
            items = out;
        }
        Ok(RunResult { items, log })
    }

    /// Executable nodes in `main` order from the triggers (declaration order when unconnected).
    fn root_order<'w>(
        &'w self,
        catalog: &Catalog,
        edges: &[Edge<'_>],
    ) -> Result<Vec<&'w WorkflowNode>> {
        // A node connected on an `ai_*` output is a sub-node there, even if
        // it can also run as a root (a vector store's modes).
        let sub_nodes: HashSet<&str> = edges
            .iter()
            .filter(|e| e.kind.starts_with("ai_"))
            .map(|e| e.source)
            .collect();
        let mut executable = Vec::new();
        for n in self.nodes.iter().filter(|n| !n.disabled) {
            if is_trigger(&n.node_type) {
                continue;
            }
            let entry = self.entry(catalog, n)?;
            if entry.runtime.execute.is_some() && !sub_nodes.contains(n.name.as_str()) {
                executable.push(n);
            } else if entry.runtime.supply.is_none() && entry.runtime.execute.is_none() {
                return Err(WorkflowError::NotRunnable {
                    node: n.name.clone(),
                    node_type: n.node_type.clone(),
                }
                .into());
            }
        }
        let main: Vec<&Edge<'_>> = edges.iter().filter(|e| e.kind == "main").collect();
        let has_main_input: HashSet<&str> = main.iter().map(|e| e.target.as_str()).collect();
        let mut queue: VecDeque<&str> = self
            .nodes
            .iter()
            .filter(|n| is_trigger(&n.node_type) || !has_main_input.contains(n.name.as_str()))
            .map(|n| n.name.as_str())
            .collect();
        let mut seen = HashSet::new();
        let mut order = Vec::new();
        while let Some(name) = queue.pop_front() {
            if !seen.insert(name) {
                continue;
            }
            if let Some(n) = executable.iter().find(|n| n.name == name) {
                order.push(*n);
            }
            queue.extend(
                main.iter()
                    .filter(|e| e.source == name)
                    .map(|e| e.target.as_str()),
            );
        }
        Ok(order)
    }

    /// Defaults applied and hidden parameters dropped at the node's
    /// `typeVersion`, then `$json` resolved.
    fn params(&self, entry: &CatalogEntry, node: &WorkflowNode, item: &Value) -> Result<Value> {
        let (filled, _) =
            entry.parameters_at(&node.name, &node.parameters, Some(node.type_version))?;
        nodekit_core::expression::resolve(&filled, item, &node.name)
    }

    /// What every sub-node connected to `target` supplies, by connection
    /// type, in the order of the target's inputs; each sub-node first gets
    /// what its own sub-nodes supply (a vector store's embeddings model).
    #[allow(clippy::too_many_arguments)]
    fn supplies<'a>(
        &'a self,
        catalog: &'a Catalog,
        edges: &'a [Edge<'a>],
        target: &'a str,
        item: &'a Value,
        options: &'a RunOptions,
        run: &'a RunScope,
        depth: usize,
    ) -> BoxFuture<'a, Result<HashMap<ConnectionType, Vec<Supply>>>> {
        Box::pin(async move {
            if depth > MAX_NESTING {
                return Err(WorkflowError::TooDeep {
                    limit: MAX_NESTING,
                    node: target.to_owned(),
                }
                .into());
            }
            let mut out: HashMap<ConnectionType, Vec<Supply>> = HashMap::new();
            let mut into: Vec<&Edge<'_>> = edges
                .iter()
                .filter(|e| e.target == target && e.kind.starts_with("ai_"))
                .collect();
            // In the order of the target's inputs, as n8n hands them over.
            into.sort_by_key(|e| e.index);
            for edge in into {
                if let Some(supplied) = self
                    .supply(catalog, edges, edge, item, options, run, depth)
                    .await?
                {
                    out.entry(supplied.connection()).or_default().push(supplied);
                }
            }
            Ok(out)
        })
    }

    /// What the source of `edge` supplies (`None` when it is disabled),
    /// after its own sub-nodes supplied theirs.
    #[allow(clippy::too_many_arguments)]
    async fn supply(
        &self,
        catalog: &Catalog,
        edges: &[Edge<'_>],
        edge: &Edge<'_>,
        item: &Value,
        options: &RunOptions,
        run: &RunScope,
        depth: usize,
    ) -> Result<Option<Supply>> {
        let node = self.node(edge.source)?;
        if node.disabled {
            return Ok(None);
        }
        let entry = self.entry(catalog, node)?;
        let supply = entry.runtime.supply.ok_or_else(|| {
            Error::from(WorkflowError::SuppliesNothing {
                node: node.name.clone(),
                kind: edge.kind.to_owned(),
            })
        })?;
        let credentials = credentials_of(entry, options);
        let inputs = self
            .supplies(catalog, edges, edge.source, item, options, run, depth + 1)
            .await?;
        let ctx = SupplyContext::new(
            &node.name,
            Arc::new(credentials),
            item.clone(),
            run.log.clone(),
        )
        .with_type_version(node.type_version)
        .with_inputs(inputs)
        .with_pools(run.pools.clone());
        let params = self.params(entry, node, item)?;
        Ok(Some(ctx.supply(supply, params).await?))
    }

    /// Every node connected to another as a tool (an `ai_tool` connection,
    /// most often to an agent), supplied once with `options`' credentials,
    /// for use outside a run: `nodekit mcp serve` serves them. Their
    /// parameters' `$json` expressions see `options.input`. They share one
    /// connection pool per database server and login, and their calls log
    /// nowhere: nothing grows however long they are kept.
    pub async fn tools(
        &self,
        catalog: &Catalog,
        options: &RunOptions,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        let run = RunScope {
            log: RunLog::per_call(),
            pools: options.pools.clone(),
        };
        let edges = self.edges()?;
        let mut seen = HashSet::new();
        let mut tools = Vec::new();
        for edge in edges.iter().filter(|e| e.kind == "ai_tool") {
            if !seen.insert(edge.source) {
                continue;
            }
            if let Some(supplied) = self
                .supply(catalog, &edges, edge, &options.input, options, &run, 0)
                .await?
            {
                tools.extend(supplied.into_tools(edge.source)?);
            }
        }
        Ok(tools)
    }
    /// The workflow's Chat Trigger (`@n8n/n8n-nodes-langchain.chatTrigger`)
    /// with its settings, if it has an enabled one.
    pub fn chat_trigger(&self) -> Result<Option<ChatTrigger>> {
        self.nodes
            .iter()
            .find(|n| !n.disabled && chat_trigger::is_chat_trigger(&n.node_type))
            .map(ChatTrigger::from_node)
            .transpose()
    }

    /// What the memory connected to node `trigger` (a Chat Trigger's
    /// `ai_memory` input) has stored for the session `options.input`
    /// names, oldest first; `None` when no memory is connected to it.
    pub async fn stored_messages(
        &self,
        catalog: &Catalog,
        trigger: &str,
        options: &RunOptions,
    ) -> Result<Option<Vec<Message>>> {
        let run = RunScope {
            log: RunLog::per_call(),
            pools: options.pools.clone(),
        };
        let edges = self.edges()?;
        let mut supplied = self
            .supplies(catalog, &edges, trigger, &options.input, options, &run, 0)
            .await?;
        let memory = supplied
            .remove(&ConnectionType::Memory)
            .and_then(|mut all| all.pop());
        match memory {
            Some(Supply::Memory(memory)) => Ok(Some(memory.messages().await?)),
            _ => Ok(None),
        }
    }
}

/// What every node of one run shares: its log, and one connection pool
/// per database server and login for all its items.
struct RunScope {
    log: Arc<RunLog>,
    pools: SharedPools,
}

/// The run's credentials of the types `entry`'s node declares.
fn credentials_of(entry: &CatalogEntry, options: &RunOptions) -> Credentials {
    entry
        .description
        .credentials
        .iter()
        .filter_map(|c| {
            options
                .credentials
                .get(&c.name)
                .map(|v| (c.name.clone(), v.clone()))
        })
        .collect()
}

/// How deep sub-nodes of sub-nodes may go (a loop of connections stops here).
const MAX_NESTING: usize = 16;

/// Whether `node_type` is a trigger's, by n8n's convention: trigger node
/// types contain `Trigger` (in any case).
pub fn is_trigger(node_type: &str) -> bool {
    node_type.to_ascii_lowercase().contains("trigger")
}
