//! The run log: every model, memory, tool and embedder call of a workflow
//! run, in n8n's `runData` shape, and the one wrapper that writes it.
//!
//! Every object a sub-node supplies travels in a [`Logged`], made in one
//! place as the object leaves its node: the object's calls are timed,
//! written to the run log as the supplying node's and traced as spans. A
//! crate that adds a kind of sub-node of its own writes the
//! `impl MyTrait for Logged<dyn MyTrait>` beside its trait, recording each
//! call with [`LogScope::call`], and supplies it as
//! [`Supply::Other`](crate::node::Supply::Other).

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::document::{Document, DocumentLoader};
use crate::embed::Embedder;
use crate::error::Result;
use crate::memory::Memory;
use crate::message::{Message, Usage};
use crate::model::{
    BoxFuture, CallOptions, ChatModel, ChunkStream, StreamAccumulator, StreamChunk,
};
use crate::text_splitter::TextSplitter;
use crate::tool::{Tool, ToolDefinition};

/// One logged call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// The workflow node that supplied the object.
    pub node: String,
    /// What was done: `invoke`, `stream`, `embed`, `tool`, `loadMemory`,
    /// `saveMemory`, or `warning` ([`RunLog::warn`]).
    pub action: String,
    /// What went in.
    pub input: Value,
    /// What came out (`null` on error).
    pub output: Value,
    /// Token counts, for model calls that reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// For model calls: the model's name, e.g. `claude-sonnet-4-5` (with a
    /// fallback model, which one answered is the call that succeeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Start, in milliseconds since the Unix epoch.
    pub start_time: u64,
    /// Duration in milliseconds.
    pub execution_time: f64,
    /// The error message, if the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The log of one workflow run, shared by every node in it.
#[derive(Debug, Default)]
pub struct RunLog {
    entries: Mutex<Vec<LogEntry>>,
    /// Entries go to the [`RunLog::capture`] scope they are written in.
    per_call: bool,
}

tokio::task_local! {
    static CAPTURE: Arc<RunLog>;
}

impl RunLog {
    /// An empty log.
    pub fn new() -> Arc<RunLog> {
        Arc::new(RunLog::default())
    }

    /// A log for objects that outlive one run (the n8n bridge keeps them
    /// between calls): it keeps nothing itself, and each entry goes to the
    /// log of the [`RunLog::capture`] scope it is written in. The scope is
    /// the task's: entries written outside any scope, by a task spawned
    /// inside a call (`tokio::spawn`, a background observer) or by another
    /// thread, are dropped.
    pub fn per_call() -> Arc<RunLog> {
        Arc::new(RunLog {
            per_call: true,
            ..RunLog::default()
        })
    }

    /// Runs `work`, with what it writes to [`RunLog::per_call`] logs going
    /// to `log` (also when `work` panics or is dropped half-way).
    pub async fn capture<T>(log: Arc<RunLog>, work: impl Future<Output = T>) -> T {
        CAPTURE.scope(log, work).await
    }

    /// Whether an entry written now is kept: a per-call log keeps it only
    /// inside a [`RunLog::capture`] scope.
    fn keeps(&self) -> bool {
        !self.per_call || CAPTURE.try_with(|_| ()).is_ok()
    }

    /// Appends an entry.
    pub fn push(&self, entry: LogEntry) {
        if self.per_call {
            let _ = CAPTURE.try_with(|log| log.push(entry));
            return;
        }
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(entry);
    }

    /// Records a warning of `node` (action `warning`, the text in
    /// `output.warning`), and emits it as a tracing event.
    pub fn warn(&self, node: &str, warning: &str) {
        tracing::warn!(node, warning, "nodekit warning");
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.push(LogEntry {
            node: node.to_owned(),
            action: "warning".into(),
            input: Value::Null,
            output: json!({ "warning": warning }),
            usage: None,
            model: None,
            start_time,
            execution_time: 0.0,
            error: None,
        });
    }

    /// Every entry so far, in order.
    pub fn entries(&self) -> Vec<LogEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The tokens every logged model call reported, summed.
    pub fn total_usage(&self) -> Usage {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut total = Usage::default();
        for usage in entries.iter().filter_map(|e| e.usage.as_ref()) {
            total.add(usage);
        }
        total
    }

    /// The model of the last model call that succeeded: the one that gave
    /// the answer, also when a fallback model stood in.
    pub fn answered_by(&self) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .rev()
            .find(|e| e.model.is_some() && e.error.is_none())
            .and_then(|e| e.model.clone())
    }

    /// The log in n8n's `runData` shape: per node, one run per call, with
    /// `startTime`, `executionTime`, `data` (input and output, and the
    /// token usage), `model` for model calls, and `error`.
    pub fn to_run_data(&self) -> Value {
        let mut out = Map::new();
        for e in self.entries() {
            let runs = out
                .entry(e.node.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            let mut run = json!({
                "startTime": e.start_time,
                "executionTime": e.execution_time,
                "action": e.action,
                "inputOverride": {"json": e.input},
                "data": {"json": e.output},
            });
            if let Some(u) = e.usage {
                run["data"]["tokenUsage"] = serde_json::to_value(u).unwrap_or_default();
            }
            if let Some(model) = e.model {
                run["model"] = json!(model);
            }
            if let Some(err) = e.error {
                run["error"] = json!({"message": err});
            }
            if let Value::Array(runs) = runs {
                runs.push(run);
            }
        }
        Value::Object(out)
    }
}

/// Where a logged object's calls go: the node that supplied it and the
/// run log of its run.
#[derive(Debug, Clone)]
pub struct LogScope {
    node: Arc<str>,
    log: Arc<RunLog>,
}

impl LogScope {
    /// Calls logged as node `node`'s, in `log`.
    pub fn new(node: &str, log: &Arc<RunLog>) -> LogScope {
        LogScope {
            node: node.into(),
            log: log.clone(),
        }
    }

    /// The supplying node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The run log the calls go to.
    pub fn log(&self) -> &Arc<RunLog> {
        &self.log
    }

    /// `work` as one logged call of `action` (its entry's `action`, and
    /// the name of its tracing span). `input` and `output` build the
    /// entry's JSON, only when the log keeps the entry.
    pub fn call<'a, T: Send + 'a>(
        &'a self,
        action: &'static str,
        input: impl FnOnce() -> Value + Send + 'a,
        work: impl Future<Output = Result<T>> + Send + 'a,
        output: impl FnOnce(&T) -> Value + Send + 'a,
    ) -> BoxFuture<'a, Result<T>> {
        self.call_with_usage(action, input, work, output, |_| None)
    }

    /// [`call`](Self::call) for a call that reports token counts (`usage`).
    pub fn call_with_usage<'a, T: Send + 'a>(
        &'a self,
        action: &'static str,
        input: impl FnOnce() -> Value + Send + 'a,
        work: impl Future<Output = Result<T>> + Send + 'a,
        output: impl FnOnce(&T) -> Value + Send + 'a,
        usage: impl FnOnce(&T) -> Option<Usage> + Send + 'a,
    ) -> BoxFuture<'a, Result<T>> {
        self.traced(action, async move {
            let call = self.start(action, input);
            let result = work.await;
            call.finish(&result, output, usage);
            result
        })
    }

    /// `work` inside a tracing span naming the node and the action.
    fn traced<'a, T>(
        &self,
        action: &'static str,
        work: impl Future<Output = T> + Send + 'a,
    ) -> BoxFuture<'a, T> {
        use tracing::Instrument;
        Box::pin(work.instrument(tracing::info_span!("nodekit", node = %self.node, action)))
    }

    /// Starts timing a call; `input` is built only if the log keeps the entry.
    fn start(&self, action: &'static str, input: impl FnOnce() -> Value) -> Call {
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Call {
            scope: self.clone(),
            action,
            model: None,
            input: if self.log.keeps() {
                input()
            } else {
                Value::Null
            },
            start: Instant::now(),
            start_time,
        }
    }
}

/// A call being timed, recorded in the log (and as a tracing event) when it ends.
struct Call {
    scope: LogScope,
    action: &'static str,
    /// The model called, for model calls.
    model: Option<String>,
    input: Value,
    start: Instant,
    start_time: u64,
}

impl Call {
    fn finish<T>(
        self,
        result: &Result<T>,
        output: impl FnOnce(&T) -> Value,
        usage: impl FnOnce(&T) -> Option<Usage>,
    ) {
        match result {
            // An entry nothing keeps (a per-call log outside a capture
            // scope, as `nodekit mcp serve`'s) is not worth building: the
            // output can be a thousand rows. The input was skipped likewise.
            Ok(v) if !self.scope.log.keeps() => self.record(Value::Null, usage(v), None),
            Ok(v) => self.record(output(v), usage(v), None),
            Err(e) => self.record(Value::Null, None, Some(e.to_string())),
        }
    }

    fn record(self, output: Value, usage: Option<Usage>, error: Option<String>) {
        let execution_time = self.start.elapsed().as_secs_f64() * 1000.0;
        tracing::info!(
            node = &*self.scope.node,
            action = self.action,
            ms = execution_time,
            error = error.as_deref(),
            "nodekit call"
        );
        self.scope.log.push(LogEntry {
            node: self.scope.node.to_string(),
            action: self.action.into(),
            input: self.input,
            output,
            usage,
            model: self.model,
            start_time: self.start_time,
            execution_time,
            error,
        });
    }
}

/// An object whose calls go to the run log as the node's that supplied
/// it. Made by the node contexts; a crate with a trait of its own
/// implements that trait for `Logged<dyn ItsTrait>`.
pub struct Logged<T: ?Sized> {
    inner: Arc<T>,
    scope: LogScope,
}

impl<T: ?Sized> Logged<T> {
    /// `inner` with its calls logged in `scope`.
    pub fn new(inner: Arc<T>, scope: LogScope) -> Logged<T> {
        Logged { inner, scope }
    }

    /// The wrapped object.
    pub fn inner(&self) -> &Arc<T> {
        &self.inner
    }

    /// Where its calls are logged.
    pub fn scope(&self) -> &LogScope {
        &self.scope
    }
}

impl<T: ?Sized> std::fmt::Debug for Logged<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logged")
            .field("node", &self.scope.node)
            .finish_non_exhaustive()
    }
}

fn messages_json(messages: &[Message]) -> Value {
    json!({"messages": messages})
}

impl Memory for Logged<dyn Memory> {
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(async move {
            self.inner
                .messages()
                .await
                .map_err(|e| e.in_node(self.scope.node()))
        })
    }

    fn load(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        let node = self.scope.node();
        self.scope.call(
            "loadMemory",
            || Value::Null,
            async move { self.inner.load().await.map_err(|e| e.in_node(node)) },
            |m| json!({"messages": m}),
        )
    }

    fn load_for<'a>(&'a self, input: &'a str) -> BoxFuture<'a, Result<Vec<Message>>> {
        let node = self.scope.node();
        self.scope.call(
            "loadMemory",
            move || json!({"input": input}),
            async move {
                self.inner
                    .load_for(input)
                    .await
                    .map_err(|e| e.in_node(node))
            },
            |m| json!({"messages": m}),
        )
    }

    fn save<'a>(&'a self, input: &'a str, output: &'a str) -> BoxFuture<'a, Result<()>> {
        let node = self.scope.node();
        self.scope.call(
            "saveMemory",
            move || json!({"input": input, "output": output}),
            async move {
                self.inner
                    .save(input, output)
                    .await
                    .map_err(|e| e.in_node(node))
            },
            |_| json!({"saved": true}),
        )
    }

    fn save_turn<'a>(&'a self, input: &'a str, turn: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        let node = self.scope.node();
        self.scope.call(
            "saveMemory",
            // The same entry as `save`'s: the input and the final answer.
            move || {
                json!({
                    "input": input,
                    "output": turn.last().map(Message::text).unwrap_or_default(),
                })
            },
            async move {
                self.inner
                    .save_turn(input, turn)
                    .await
                    .map_err(|e| e.in_node(node))
            },
            |_| json!({"saved": true}),
        )
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .tools()
            .into_iter()
            .map(|inner| Arc::new(Logged::new(inner, self.scope.clone())) as Arc<dyn Tool>)
            .collect()
    }
}

impl Tool for Logged<dyn Tool> {
    fn definition(&self) -> &ToolDefinition {
        self.inner.definition()
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        let input = args.clone();
        self.scope.call(
            "tool",
            move || input,
            self.inner.call(args),
            |v| json!({"response": v}),
        )
    }
}

impl ChatModel for Logged<dyn ChatModel> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        self.scope.traced("invoke", async move {
            let mut call = self.scope.start("invoke", || messages_json(messages));
            call.model = Some(self.inner.name().to_owned());
            let result = self
                .inner
                .invoke(messages, options)
                .await
                .map_err(|e| e.in_node(self.scope.node()));
            call.finish(&result, |m| json!({"message": m}), |m| m.usage);
            result
        })
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        self.scope.traced("stream", async move {
            let mut call = self.scope.start("stream", || messages_json(messages));
            call.model = Some(self.inner.name().to_owned());
            match self.inner.stream(messages, options).await {
                Ok(inner) => Ok(Box::pin(LoggedStream {
                    inner,
                    node: self.scope.node.clone(),
                    acc: StreamAccumulator::default(),
                    call: Some(call),
                }) as ChunkStream),
                Err(e) => {
                    let e = e.in_node(self.scope.node());
                    call.record(Value::Null, None, Some(e.to_string()));
                    Err(e)
                }
            }
        })
    }
}

/// A model stream that records its merged answer when it ends, fails, or is dropped early.
struct LoggedStream {
    inner: ChunkStream,
    node: Arc<str>,
    acc: StreamAccumulator,
    call: Option<Call>,
}

impl futures::Stream for LoggedStream {
    type Item = Result<StreamChunk>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let item = futures::ready!(self.inner.as_mut().poll_next(cx))
            .map(|item| item.map_err(|e| e.in_node(&self.node)));
        match &item {
            Some(Ok(chunk)) => {
                self.acc.push(chunk);
                if matches!(chunk, StreamChunk::Finish { .. }) {
                    self.close(None);
                }
            }
            Some(Err(e)) => self.close(Some(e.to_string())),
            None => self.close(Some("the stream ended without a finish".into())),
        }
        std::task::Poll::Ready(item)
    }
}

impl LoggedStream {
    fn close(&mut self, error: Option<String>) {
        if let Some(call) = self.call.take() {
            let message = std::mem::take(&mut self.acc).into_message();
            let usage = message.usage;
            let output = if error.is_none() {
                json!({"message": message})
            } else {
                Value::Null
            };
            call.record(output, usage, error);
        }
    }
}

impl Drop for LoggedStream {
    fn drop(&mut self) {
        self.close(Some("the stream was dropped before its end".into()));
    }
}

impl Embedder for Logged<dyn Embedder> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        let node = self.scope.node();
        self.scope.call(
            "embed",
            move || json!({"texts": texts.len()}),
            async move { self.inner.embed(texts).await.map_err(|e| e.in_node(node)) },
            |v| json!({"vectors": v.len(), "dimensions": v.first().map_or(0, Vec::len)}),
        )
    }
}

/// Splits are logged with the text's length in and the chunks out (n8n
/// logs the text itself; a long document would fill the log).
impl TextSplitter for Logged<dyn TextSplitter> {
    fn split_text(&self, text: &str) -> Vec<String> {
        let call = self
            .scope
            .start("splitText", || json!({"characters": text.chars().count()}));
        let chunks = self.inner.split_text(text);
        call.record(json!({"response": chunks}), None, None);
        chunks
    }
}

impl DocumentLoader for Logged<dyn DocumentLoader> {
    fn load<'a>(&'a self, item: &'a Value) -> BoxFuture<'a, Result<Vec<Document>>> {
        self.scope.call(
            "loadDocuments",
            move || item.clone(),
            self.inner.load(item),
            |docs| json!({"response": docs}),
        )
    }
}
