//! The sidecar the n8n shims call: JSON lines in, JSON lines out.
//!
//! Each request is one line:
//!
//! ```json
//! {"id": 7, "op": "toolCall", "node": "nodekit-nodes.selectQueryTool",
//!  "nodeName": "Read rows", "typeVersion": 1, "parameters": {...},
//!  "credentials": {"sqlite": {...}}, "item": {...},
//!  "input": {"tableName": "users"}, "timeoutMs": 60000}
//! ```
//!
//! `parameters` are the values the workflow stores; the bridge fills in
//! the defaults and drops what `displayOptions` hide at `typeVersion` (the
//! version a new node gets when it is absent), once, before the node runs.
//!
//! A node with AI inputs (a vector store's embeddings and document loader,
//! a loader's text splitter) names the sub-nodes n8n connected to them in
//! `inputs`, by connection type: each nodekit sub-node as what it is made
//! from (`node`, `nodeName`, `typeVersion`, `parameters`, `credentials`,
//! `item` and its own `inputs`), which the bridge makes here, in Rust; an
//! object n8n made itself as `{"foreign": "<its class>"}`, which is
//! refused with an error that names it (it lives in n8n's process, out of
//! the bridge's reach):
//!
//! ```json
//! {"id": 8, "op": "execute", "node": "nodekit-nodes.vectorStoreSqlite", ...,
//!  "inputs": {"ai_embedding": [{"node": "nodekit-nodes.embeddingsOpenAiCompatible",
//!    "nodeName": "Embeddings", "parameters": {...}, "credentials": {...}, "inputs": {}}]},
//!  "input": {"items": [...]}}
//! ```
//!
//! and gets one line back, in any order (requests run concurrently):
//! `{"id": 7, "result": ..., "log": [...]}` or
//! `{"id": 7, "error": {"kind": "node", "message": "..."}, "log": [...]}`.
//! `log` holds the run-log entries the call wrote ([`LogEntry`]).
//!
//! | `op` | `input` | `result` |
//! |---|---|---|
//! | `hello` | – | `{"version", "nodes": [catalog names]}` |
//! | `toolDescribe` | – | `{"name", "description", "parameters"}` (JSON schema); for a node that supplies several tools (an MCP server's), `{"tools": [those]}` |
//! | `toolCall` | the tool's arguments (keys its schema does not name are dropped); for several tools, also `tool`, the one's name | what the tool returned |
//! | `memoryLoad` | `{"input"?: text}` | `{"messages": [LangChain stored messages]}` |
//! | `memorySave` | `{"input": text, "output": text}` | `{}` |
//! | `memorySaveTurn` | `{"input": text, "turn": [stored messages]}` | `{}` |
//! | `modelInvoke` | `{"messages": [stored], "tools"?: [{"name", "description", "parameters"}], "toolChoice"?, "stop"?, "settings"?}` | `{"message": stored message}` |
//! | `embed` | `{"texts": [text]}` | `{"vectors": [[number]]}` |
//! | `vectorSearch` | `{"query": text, "k"?: number}` (default 4) | `{"documents": [{"pageContent", "metadata", "score"}]}` |
//! | `execute` | `{"items": [json]}` | `{"items": [json]}` |
//!
//! Error kinds: `request` (the request is wrong: unknown node or op,
//! missing input), `node` (the node failed), `panic` (the node panicked;
//! the bridge goes on) and `timeout` (no answer within `timeoutMs`,
//! default 300 s; the call is cancelled).
//!
//! What a sub-node supplies is kept between calls (up to
//! [`MAX_SUPPLIES`], least recently used first out), keyed by node,
//! version, parameters, credentials, item and inputs, so connection pools
//! and HTTP clients are reused. A toolkit (an MCP server's tools) is made
//! again once it is [`TOOLKIT_MAX_AGE`] old, so that tools the server
//! adds, changes or drops reach the agent. Database pools are shared
//! further: one per server and login for the whole process
//! ([`SharedPools`]), so a new session or item does not connect again. Its
//! calls log through [`RunLog::per_call`], so each answer carries only its
//! own call's entries.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
#[cfg(unix)]
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead};

use nodekit_core::description::ConnectionType;
use nodekit_core::error::{Error, Result, quoted, quoted_json_error};
use nodekit_core::message::Message;
use nodekit_core::model::{CallOptions, ModelSettings, ToolChoice};
use nodekit_core::node::{Credentials, ExecuteContext, Inputs, SharedPools, Supply, SupplyContext};
use nodekit_core::registry::{Catalog, CatalogEntry};
use nodekit_core::run_log::{LogEntry, RunLog};
use nodekit_core::tool::ToolDefinition;
use nodekit_core::vector_store::Filter;

/// How many supplied objects the bridge keeps between calls.
pub const MAX_SUPPLIES: usize = 64;

/// How long the bridge keeps a toolkit before making it again (listing
/// the server's tools anew); the shims keep a tool's definition as long.
pub const TOOLKIT_MAX_AGE: Duration = Duration::from_secs(60);

/// How long a call may run when the request names no `timeoutMs`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the bridge lets running calls finish once its input closes.
const DRAIN: Duration = Duration::from_secs(5);

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Op {
    /// The bridge's version and nodes.
    Hello,
    /// A tool node's name, description and argument schema.
    ToolDescribe,
    /// One call of a tool node.
    ToolCall,
    /// A memory node's messages.
    MemoryLoad,
    /// Saves one exchange in a memory node.
    MemorySave,
    /// Saves one exchange with the agent's tool calls and results.
    MemorySaveTurn,
    /// One call of a chat model node.
    ModelInvoke,
    /// Embeds texts with an embeddings node.
    Embed,
    /// Searches the vector store a vector store node supplies.
    VectorSearch,
    /// Runs a root node on items.
    Execute,
}

/// One request from the shims.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Echoed in the answer.
    pub id: u64,
    /// What to do.
    pub op: Op,
    /// The node the request is about.
    #[serde(flatten)]
    pub target: Target,
    /// The operation's input (see the module's table).
    #[serde(default)]
    pub input: Value,
    /// How long the call may take, in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// A node of the workflow as n8n resolved it: what the bridge makes it from.
#[derive(Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The node type's catalog name (`package.nodeName`).
    #[serde(default)]
    pub node: String,
    /// The node's name in the workflow.
    #[serde(default)]
    pub node_name: String,
    /// The node's `typeVersion` in the workflow; absent: the version a new
    /// node gets.
    #[serde(default)]
    pub type_version: Option<f64>,
    /// The node's parameters, resolved by n8n (`$fromAI` calls left in).
    #[serde(default)]
    pub parameters: Value,
    /// The node's credentials by type, resolved by n8n.
    #[serde(default)]
    pub credentials: Credentials,
    /// The input item's JSON (`$json`).
    #[serde(default)]
    pub item: Value,
    /// The sub-nodes connected to the node's AI inputs, by connection type.
    #[serde(default)]
    pub inputs: BTreeMap<ConnectionType, Vec<Connected>>,
}

impl std::fmt::Debug for Target {
    // Credentials stay out of debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("node", &self.node)
            .field("node_name", &self.node_name)
            .field("type_version", &self.type_version)
            .field("inputs", &self.inputs)
            .finish_non_exhaustive()
    }
}

/// A sub-node connected to an AI input.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Connected {
    /// An object n8n made (another package's node, or n8n's own): its class.
    Foreign {
        /// The class of the object n8n's sub-node supplied.
        foreign: String,
    },
    /// A nodekit node, which the bridge makes.
    Nodekit(Box<Target>),
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// `request`, `node`, `panic` or `timeout`.
    pub kind: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    /// The request's id (`null` when the request could not be read).
    pub id: Option<u64>,
    /// What the call returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    /// The run-log entries the call wrote.
    pub log: Vec<LogEntry>,
}

impl Response {
    fn failed(id: Option<u64>, kind: &'static str, message: impl Into<String>) -> Response {
        Response {
            id,
            result: None,
            error: Some(Failure {
                kind,
                message: message.into(),
            }),
            log: Vec::new(),
        }
    }
}

/// Why a call did not answer: the request was wrong, or the node failed.
enum Fail {
    Refused(String),
    Node(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Node(e)
    }
}

impl From<Fail> for Failure {
    fn from(fail: Fail) -> Self {
        match fail {
            Fail::Refused(message) => Failure {
                kind: "request",
                message,
            },
            Fail::Node(e) => Failure {
                kind: "node",
                message: e.to_string(),
            },
        }
    }
}

type Outcome<T> = std::result::Result<T, Fail>;

/// The sidecar: answers requests for the nodes of a catalog.
#[derive(Debug)]
pub struct Bridge {
    catalog: &'static Catalog,
    supplies: Mutex<Supplies>,
    /// One set for the process: every supply with the same credential
    /// uses the same connections, whatever session or item it was made for.
    pools: SharedPools,
}

/// Supplied objects by request key.
#[derive(Default)]
struct Supplies {
    by_key: HashMap<String, Kept>,
    clock: u64,
}

/// A supplied object, when it was made and its last use (by
/// [`Supplies`]'s clock).
struct Kept {
    supply: Supply,
    made: Instant,
    used: u64,
}

impl Kept {
    fn is_stale(&self) -> bool {
        matches!(self.supply, Supply::Toolkit(_)) && self.made.elapsed() >= TOOLKIT_MAX_AGE
    }
}

impl std::fmt::Debug for Supplies {
    // The keys hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supplies")
            .field("cached", &self.by_key.len())
            .finish_non_exhaustive()
    }
}

impl Supplies {
    /// What `key` supplied, unless it is a toolkit past its age.
    fn get(&mut self, key: &str) -> Option<Supply> {
        // One lookup: a key is the whole request target, credentials and all.
        let kept = self.by_key.get_mut(key)?;
        if kept.is_stale() {
            self.by_key.remove(key);
            return None;
        }
        self.clock += 1;
        kept.used = self.clock;
        Some(kept.supply.clone())
    }

    fn insert(&mut self, key: String, supply: Supply) {
        if self.by_key.len() >= MAX_SUPPLIES
            && let Some(oldest) = self
                .by_key
                .iter()
                .min_by_key(|(_, kept)| kept.used)
                .map(|(k, _)| k.clone())
        {
            self.by_key.remove(&oldest);
        }
        self.clock += 1;
        let kept = Kept {
            supply,
            made: Instant::now(),
            used: self.clock,
        };
        self.by_key.insert(key, kept);
    }
}

impl Bridge {
    /// A bridge for `catalog`'s nodes.
    pub fn new(catalog: &'static Catalog) -> Arc<Bridge> {
        Arc::new(Bridge {
            catalog,
            supplies: Mutex::default(),
            pools: SharedPools::default(),
        })
    }

    /// Answers every line of `input` on `output` until `input` ends, then
    /// lets running calls finish (up to 5 s). Lines are read on the runtime
    /// (a request wakes the worker that runs it, with no thread between);
    /// answers are written by a thread of its own (a full pipe's blocking
    /// write never holds a worker of the runtime), whole, one line each, so
    /// a node's own `println!` can come between two answers but never
    /// inside one.
    pub async fn serve(
        self: Arc<Self>,
        input: impl AsyncBufRead + Unpin + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> std::io::Result<()> {
        let (answers, to_write) = std::sync::mpsc::channel::<String>();
        let writer = std::thread::spawn(move || write_lines(to_write, output));
        let mut lines = input.lines();
        let mut running = tokio::task::JoinSet::new();
        let read = loop {
            let line = match lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if line.trim().is_empty() {
                continue;
            }
            let bridge = self.clone();
            let answers = answers.clone();
            running.spawn(async move {
                let response = bridge.answer(&line).await;
                let text = serde_json::to_string(&response).unwrap_or_else(|e| {
                    serde_json::to_string(&Response::failed(
                        response.id,
                        "node",
                        format!("the answer cannot be written as JSON: {e}"),
                    ))
                    .expect("a failure serialises")
                });
                let _ = answers.send(text);
            });
            while running.try_join_next().is_some() {}
        };
        let _ = tokio::time::timeout(DRAIN, async {
            while running.join_next().await.is_some() {}
        })
        .await;
        // Calls still running hold senders: without this the writer would wait for them.
        running.abort_all();
        drop(answers);
        // A call blocking its thread cannot be aborted and keeps a sender:
        // the writer is not waited for past a second.
        for _ in 0..100 {
            if writer.is_finished() {
                let written = writer
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the writer thread panicked")));
                return read.and(written);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        read
    }

    /// Serves standard input and output. A pipe or socket on standard input
    /// (n8n starts the bridge with a socket) is read without blocking,
    /// through the runtime's event loop; anything else (a file, a
    /// terminal) through Tokio's blocking standard input. The serving runs
    /// as a task of the runtime, so a request is read and answered on the
    /// worker its arrival wakes.
    pub async fn serve_stdio(self: Arc<Self>) -> std::io::Result<()> {
        // Nodes now run for whoever edits n8n's workflows.
        nodekit_core::host::set_runs_editors_workflows();
        let input = stdin_reader()?;
        tokio::spawn(self.serve(input, std::io::stdout()))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// The answer to one request line.
    pub async fn answer(self: &Arc<Self>, line: &str) -> Response {
        let request: Request = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                return Response::failed(
                    leading_id(line),
                    "request",
                    format!("not a bridge request: {}", quoted_json_error(&e)),
                );
            }
        };
        let Request {
            id,
            op,
            target,
            input,
            timeout_ms,
        } = request;
        let who = format!(
            "node `{}` ({})",
            quoted(&target.node_name),
            quoted(&target.node)
        );
        let limit = timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let log = RunLog::new();
        // A panic is caught here, and the timeout drops (cancels) the call.
        // A node that blocks its thread is not cancelled: it answers
        // nothing, and the shims kill and restart the bridge.
        let call = std::panic::AssertUnwindSafe(RunLog::capture(
            log.clone(),
            self.run(op, &target, input),
        ))
        .catch_unwind();
        let (result, error) = match tokio::time::timeout(limit, call).await {
            Ok(Ok(Ok(result))) => (Some(result), None),
            Ok(Ok(Err(fail))) => (None, Some(fail.into())),
            Ok(Err(panic)) => {
                // What panicked may have been left half-changed.
                self.forget(&target);
                let message = format!("{who} panicked: {}", panic_message(panic));
                (
                    None,
                    Some(Failure {
                        kind: "panic",
                        message,
                    }),
                )
            }
            Err(_) => {
                let message = format!(
                    "{who} did not answer within {}; the call was cancelled",
                    seconds(limit)
                );
                (
                    None,
                    Some(Failure {
                        kind: "timeout",
                        message,
                    }),
                )
            }
        };
        Response {
            id: Some(id),
            result,
            error,
            log: log.entries(),
        }
    }

    async fn run(&self, op: Op, target: &Target, input: Value) -> Outcome<Value> {
        if op == Op::Hello {
            return Ok(json!({
                "version": env!("CARGO_PKG_VERSION"),
                "nodes": self.catalog.entries().iter().map(CatalogEntry::full_name).collect::<Vec<_>>(),
            }));
        }
        let entry = self.entry(target)?;
        if op == Op::Execute {
            return self.execute(entry, target, input).await;
        }
        let supply = self.supply(entry, target).await?;
        call(op, supply, input, &target.node_name).await
    }

    fn entry(&self, target: &Target) -> Outcome<&'static CatalogEntry> {
        self.catalog
            .find(&target.node)
            .map_err(|e| Fail::Refused(e.to_string()))
    }

    /// What `target` supplies, from the cache or made now (its inputs first).
    fn supply<'a>(
        &'a self,
        entry: &'static CatalogEntry,
        target: &'a Target,
    ) -> BoxFuture<'a, Outcome<Supply>> {
        Box::pin(async move {
            let key = supply_key(target);
            if let Some(supply) = self.lock().get(&key) {
                return Ok(supply);
            }
            let make = entry.runtime.supply.ok_or_else(|| {
                Fail::Refused(format!(
                    "node `{}` is not a sub-node: it supplies nothing",
                    entry.full_name()
                ))
            })?;
            let (params, version) =
                entry.parameters_at(&target.node_name, &target.parameters, target.type_version)?;
            let ctx = SupplyContext::new(
                &target.node_name,
                Arc::new(target.credentials.clone()),
                target.item.clone(),
                RunLog::per_call(),
            )
            .with_type_version(version)
            .with_inputs(self.inputs(target).await?)
            .with_pools(self.pools.clone());
            let supply = ctx.supply(make, params).await?;
            self.lock().insert(key, supply.clone());
            Ok(supply)
        })
    }

    /// What the sub-nodes connected to `target`'s AI inputs supply.
    async fn inputs(&self, target: &Target) -> Outcome<Inputs> {
        let mut inputs = Inputs::new();
        for (kind, connected) in &target.inputs {
            for sub in connected {
                let supply = match sub {
                    Connected::Nodekit(sub) => self.supply(self.entry(sub)?, sub).await?,
                    Connected::Foreign { foreign } => {
                        return Err(Fail::Refused(format!(
                            "node `{}`: its `{}` input is connected to a sub-node that is not a \
                             nodekit node of this package (n8n made its `{foreign}`); nodekit nodes \
                             run in the nodekit bridge, which cannot reach objects in n8n's \
                             process: connect one of this package's nodes there instead",
                            target.node_name, kind,
                        )));
                    }
                };
                inputs.entry(*kind).or_default().push(supply);
            }
        }
        Ok(inputs)
    }

    /// Drops what `target` (and what its inputs) supplied from the cache.
    fn forget(&self, target: &Target) {
        let mut supplies = self.lock();
        let mut stack = vec![target];
        while let Some(t) = stack.pop() {
            supplies.by_key.remove(&supply_key(t));
            stack.extend(t.inputs.values().flatten().filter_map(|c| match c {
                Connected::Nodekit(sub) => Some(&**sub),
                Connected::Foreign { .. } => None,
            }));
        }
    }

    /// Runs a root node on the request's items, with its credentials and inputs.
    async fn execute(
        &self,
        entry: &CatalogEntry,
        target: &Target,
        mut input: Value,
    ) -> Outcome<Value> {
        let run = entry.runtime.execute.ok_or_else(|| {
            Fail::Refused(format!(
                "node `{}` is not a root node: it cannot execute",
                entry.full_name()
            ))
        })?;
        let items: Vec<Value> = input
            .get_mut("items")
            .map(Value::take)
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| Fail::Refused("`execute` needs `items`, a list".into()))?;
        let (params, version) =
            entry.parameters_at(&target.node_name, &target.parameters, target.type_version)?;
        let ctx = ExecuteContext::new(
            target.node_name.clone(),
            items,
            self.inputs(target).await?,
            RunLog::per_call(),
            None,
        )
        .with_credentials(Arc::new(target.credentials.clone()))
        .with_type_version(version)
        .with_pools(self.pools.clone());
        let items = run(params, ctx).await?;
        Ok(json!({ "items": items }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Supplies> {
        self.supplies.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a supply is cached under: everything it is made from.
fn supply_key(target: &Target) -> String {
    serde_json::to_string(target).expect("JSON values serialise")
}

/// Runs `op` on what a node supplied.
async fn call(op: Op, supply: Supply, input: Value, node: &str) -> Outcome<Value> {
    match (op, &supply) {
        (Op::ToolDescribe, Supply::Tool(tool)) => {
            Ok(serde_json::to_value(tool.definition()).expect("a definition serialises"))
        }
        (Op::ToolCall, Supply::Tool(tool)) => {
            let args = only_declared(input, &tool.definition().parameters);
            Ok(tool.call(args).await?)
        }
        (Op::ToolDescribe, Supply::Toolkit(tools)) => Ok(json!({
            "tools": tools.iter().map(|t| t.definition()).collect::<Vec<_>>(),
        })),
        (Op::ToolCall, Supply::Toolkit(tools)) => {
            // n8n's convention for a toolkit's call: the tool's name in `tool`.
            let name = input.get("tool").and_then(Value::as_str).ok_or_else(|| {
                Fail::Refused(format!(
                    "node `{node}` supplies several tools: `toolCall` needs `tool`, the name of one"
                ))
            })?;
            let Some(tool) = tools.iter().find(|t| t.definition().name == name) else {
                let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
                return Err(Fail::Refused(format!(
                    "node `{node}` has no tool named `{}`; its tools: {}",
                    nodekit_core::error::shorten(name, 200),
                    names.join(", ")
                )));
            };
            let args = only_declared(input, &tool.definition().parameters);
            Ok(tool.call(args).await?)
        }
        (Op::MemoryLoad, Supply::Memory(memory)) => {
            let messages = match input.get("input").and_then(Value::as_str) {
                Some(text) => memory.load_for(text).await,
                None => memory.load().await,
            }?;
            Ok(json!({"messages": messages.iter().map(Message::to_stored).collect::<Vec<_>>()}))
        }
        (Op::MemorySave, Supply::Memory(memory)) => {
            let text = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default();
            memory.save(text("input"), text("output")).await?;
            Ok(json!({}))
        }
        (Op::MemorySaveTurn, Supply::Memory(memory)) => {
            let text = input
                .get("input")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let turn = stored_messages(&input, "turn", op)?;
            memory.save_turn(text, &turn).await?;
            Ok(json!({}))
        }
        (Op::ModelInvoke, Supply::ChatModel(model)) => {
            let (messages, options) = model_call(&input)?;
            let message = model.invoke(&messages, &options).await?;
            Ok(json!({"message": message.to_stored()}))
        }
        (Op::Embed, Supply::Embedder(embedder)) => {
            let texts: Vec<String> = input
                .get("texts")
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok())
                .ok_or_else(|| Fail::Refused("`embed` needs `texts`, a list of strings".into()))?;
            let vectors = embedder.embed(&texts).await?;
            Ok(json!({ "vectors": vectors }))
        }
        (Op::VectorSearch, Supply::VectorStore(documents)) => {
            let query = input
                .get("query")
                .and_then(Value::as_str)
                .ok_or_else(|| Fail::Refused("`vectorSearch` needs `query`, a text".into()))?;
            let k = input.get("k").and_then(Value::as_u64).unwrap_or(4).max(1);
            let found = documents
                .search(query, k.try_into().unwrap_or(usize::MAX), &Filter::all())
                .await?;
            let documents: Vec<Value> = found
                .into_iter()
                .map(|f| {
                    json!({
                        "pageContent": f.document.page_content,
                        "metadata": f.document.metadata,
                        "score": f.score,
                    })
                })
                .collect();
            Ok(json!({ "documents": documents }))
        }
        _ => {
            let what = supply.what();
            Err(Fail::Refused(format!(
                "node `{node}` supplies {what}, which cannot answer `{op:?}`"
            )))
        }
    }
}

/// `args` without the keys `schema` does not name: n8n's agent sends its own
/// input item's fields along with the model's arguments.
fn only_declared(args: Value, schema: &Value) -> Value {
    match (args, schema.get("properties").and_then(Value::as_object)) {
        (Value::Object(mut args), Some(declared)) => {
            args.retain(|k, _| declared.contains_key(k));
            Value::Object(args)
        }
        (args, _) => args,
    }
}

/// The list of LangChain stored messages at `input[field]`.
fn stored_messages(input: &Value, field: &str, op: Op) -> Outcome<Vec<Message>> {
    input
        .get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| Fail::Refused(format!("`{op:?}` needs `{field}`, a list of messages")))?
        .iter()
        .map(Message::from_stored)
        .collect::<Result<Vec<_>>>()
        .map_err(|e| Fail::Refused(format!("`{op:?}`: {e}")))
}

/// The messages and options of a `modelInvoke` request.
fn model_call(input: &Value) -> Outcome<(Vec<Message>, CallOptions)> {
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        Fail::Refused(format!("`modelInvoke`: {what}: {e}"))
    };
    let messages = stored_messages(input, "messages", Op::ModelInvoke)?;
    let field = |k: &str| input.get(k).cloned().filter(|v| !v.is_null());
    let mut options = CallOptions::default();
    if let Some(tools) = field("tools") {
        options.tools = serde_json::from_value::<Vec<ToolDefinition>>(tools).map_err(|e| {
            bad(
                "`tools` must be a list of {name, description, parameters}",
                &e,
            )
        })?;
    }
    if let Some(choice) = field("toolChoice") {
        // OpenAI's forms: "auto", "none", "required", or {"function": {"name"}}; or a tool's name.
        let name = choice.pointer("/function/name").or(Some(&choice));
        options.tool_choice = Some(match name.and_then(Value::as_str) {
            Some("auto") => ToolChoice::Auto,
            Some("none") => ToolChoice::None,
            Some("required" | "any") => ToolChoice::Required,
            Some(tool) => ToolChoice::Tool(tool.to_owned()),
            None => return Err(bad("`toolChoice` is not a tool choice", &choice)),
        });
    }
    if let Some(stop) = field("stop") {
        options.stop = serde_json::from_value(stop)
            .map_err(|e| bad("`stop` must be a list of strings", &e))?;
    }
    if let Some(settings) = field("settings") {
        options.overrides = serde_json::from_value::<ModelSettings>(settings)
            .map_err(|e| bad("`settings` are not model settings", &e))?;
    }
    Ok((messages, options))
}

fn write_lines(
    lines: std::sync::mpsc::Receiver<String>,
    mut out: impl Write,
) -> std::io::Result<()> {
    for line in lines {
        let mut text = line.into_bytes();
        text.push(b'\n');
        out.write_all(&text)?;
        out.flush()?;
    }
    Ok(())
}

/// Standard input, read without blocking where it is a socket or a pipe.
fn stdin_reader() -> std::io::Result<tokio::io::BufReader<Box<dyn AsyncRead + Unpin + Send>>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let input = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
        let kind = input.metadata()?.file_type();
        if kind.is_socket() {
            let socket = std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(input));
            socket.set_nonblocking(true)?;
            let socket = tokio::net::UnixStream::from_std(socket)?;
            return Ok(tokio::io::BufReader::new(Box::new(socket)));
        }
        if kind.is_fifo() {
            let pipe = tokio::net::unix::pipe::Receiver::from_file(input)?;
            return Ok(tokio::io::BufReader::new(Box::new(pipe)));
        }
    }
    Ok(tokio::io::BufReader::new(Box::new(tokio::io::stdin())))
}

/// The id of a request line serde cannot read (a lone UTF-16 surrogate in
/// a string, say): the shims write `id` first, so the call fails at once
/// instead of waiting for its time limit.
fn leading_id(line: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nodekit_core::tool::{FnTool, ToolDefinition};

    fn tool() -> Arc<dyn nodekit_core::tool::Tool> {
        let definition = ToolDefinition {
            name: "t".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        Arc::new(FnTool::new(definition, |_| async { Ok(Value::Null) }))
    }

    #[test]
    fn a_toolkit_is_made_again_once_it_is_a_minute_old_other_supplies_are_kept() {
        let mut supplies = Supplies::default();
        supplies.insert("old toolkit".into(), Supply::Toolkit(vec![tool()]));
        supplies.insert("new toolkit".into(), Supply::Toolkit(vec![tool()]));
        supplies.insert("old tool".into(), Supply::Tool(tool()));
        let long_ago = Instant::now()
            .checked_sub(TOOLKIT_MAX_AGE)
            .expect("the clock runs for longer than a minute");
        for key in ["old toolkit", "old tool"] {
            supplies.by_key.get_mut(key).unwrap().made = long_ago;
        }
        assert!(supplies.get("old toolkit").is_none());
        assert!(!supplies.by_key.contains_key("old toolkit"));
        assert!(supplies.get("new toolkit").is_some());
        assert!(supplies.get("old tool").is_some());
    }
}
