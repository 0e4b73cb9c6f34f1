//! The run log: every model, memory, tool and embedder call of a workflow
//! run, in n8n's `runData` shape, and the decorators that write it. The
//! node contexts' factories wrap each object they return in one of these.

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

    /// The log in n8n's `runData` shape: per node, one run per call, with
    /// `startTime`, `executionTime`, `data` (input and output) and `error`.
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

/// Times a call and records it in the log (and as a tracing event).
pub(crate) struct Logged {
    log: Arc<RunLog>,
    node: String,
    action: &'static str,
    input: Value,
    start: Instant,
    start_time: u64,
}

impl Logged {
    /// Starts timing a call; `input` is built only if the log keeps the entry.
    pub(crate) fn start(
        log: &Arc<RunLog>,
        node: &str,
        action: &'static str,
        input: impl FnOnce() -> Value,
    ) -> Self {
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Logged {
            log: log.clone(),
            node: node.to_owned(),
            action,
            input: if log.keeps() { input() } else { Value::Null },
            start: Instant::now(),
            start_time,
        }
    }

    pub(crate) fn finish<T>(
        self,
        result: &Result<T>,
        output: impl FnOnce(&T) -> Value,
        usage: Option<Usage>,
    ) {
        match result {
            // An entry nothing keeps (a per-call log outside a capture
            // scope, as `nodekit mcp serve`'s) is not worth building: the
            // output can be a thousand rows. The input was skipped likewise.
            Ok(_) if !self.log.keeps() => self.record(Value::Null, usage, None),
            Ok(v) => self.record(output(v), usage, None),
            Err(e) => self.record(Value::Null, None, Some(e.to_string())),
        }
    }

    pub(crate) fn record(self, output: Value, usage: Option<Usage>, error: Option<String>) {
        let execution_time = self.start.elapsed().as_secs_f64() * 1000.0;
        tracing::info!(
            node = self.node.as_str(),
            action = self.action,
            ms = execution_time,
            error = error.as_deref(),
            "nodekit call"
        );
        self.log.push(LogEntry {
            node: self.node,
            action: self.action.into(),
            input: self.input,
            output,
            usage,
            start_time: self.start_time,
            execution_time,
            error,
        });
    }
}

/// `work` inside a tracing span naming the node and the action.
fn traced<'a, T>(
    node: &str,
    action: &'static str,
    work: impl Future<Output = T> + Send + 'a,
) -> BoxFuture<'a, T> {
    use tracing::Instrument;
    Box::pin(work.instrument(tracing::info_span!("nodekit", node = %node, action)))
}

fn messages_json(messages: &[Message]) -> Value {
    json!({"messages": messages})
}

/// `inner` with its calls logged as node `node`'s.
pub(crate) fn logged_model(
    inner: Arc<dyn ChatModel>,
    node: &str,
    log: &Arc<RunLog>,
) -> Arc<dyn ChatModel> {
    Arc::new(LoggedModel {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// `inner` with its loads and saves logged as node `node`'s.
pub(crate) fn logged_memory(
    inner: Arc<dyn Memory>,
    node: &str,
    log: &Arc<RunLog>,
) -> Arc<dyn Memory> {
    Arc::new(LoggedMemory {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// `inner` with its calls logged as node `node`'s.
pub(crate) fn logged_tool(inner: Arc<dyn Tool>, node: &str, log: &Arc<RunLog>) -> Arc<dyn Tool> {
    Arc::new(LoggedTool {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// `inner` with its calls logged as node `node`'s.
pub(crate) fn logged_embedder(
    inner: Arc<dyn Embedder>,
    node: &str,
    log: &Arc<RunLog>,
) -> Arc<dyn Embedder> {
    Arc::new(LoggedEmbedder {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// Memory whose loads and saves go to the run log.
#[derive(Debug)]
struct LoggedMemory {
    inner: Arc<dyn Memory>,
    node: String,
    log: Arc<RunLog>,
}

impl Memory for LoggedMemory {
    fn messages(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(async move {
            self.inner
                .messages()
                .await
                .map_err(|e| e.in_node(&self.node))
        })
    }

    fn load(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        traced(&self.node, "loadMemory", async move {
            let call = Logged::start(&self.log, &self.node, "loadMemory", || Value::Null);
            let result = self.inner.load().await.map_err(|e| e.in_node(&self.node));
            call.finish(&result, |m| json!({"messages": m}), None);
            result
        })
    }

    fn load_for<'a>(&'a self, input: &'a str) -> BoxFuture<'a, Result<Vec<Message>>> {
        traced(&self.node, "loadMemory", async move {
            let call = Logged::start(
                &self.log,
                &self.node,
                "loadMemory",
                || json!({"input": input}),
            );
            let result = self
                .inner
                .load_for(input)
                .await
                .map_err(|e| e.in_node(&self.node));
            call.finish(&result, |m| json!({"messages": m}), None);
            result
        })
    }

    fn save<'a>(&'a self, input: &'a str, output: &'a str) -> BoxFuture<'a, Result<()>> {
        traced(&self.node, "saveMemory", async move {
            let call = Logged::start(
                &self.log,
                &self.node,
                "saveMemory",
                || json!({"input": input, "output": output}),
            );
            let result = self
                .inner
                .save(input, output)
                .await
                .map_err(|e| e.in_node(&self.node));
            call.finish(&result, |_| json!({"saved": true}), None);
            result
        })
    }

    fn save_turn<'a>(&'a self, input: &'a str, turn: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        traced(&self.node, "saveMemory", async move {
            let call = Logged::start(
                &self.log,
                &self.node,
                "saveMemory",
                // The same entry as `save`'s: the input and the final answer.
                || {
                    json!({
                        "input": input,
                        "output": turn.last().map(Message::text).unwrap_or_default(),
                    })
                },
            );
            let result = self
                .inner
                .save_turn(input, turn)
                .await
                .map_err(|e| e.in_node(&self.node));
            call.finish(&result, |_| json!({"saved": true}), None);
            result
        })
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .tools()
            .into_iter()
            .map(|inner| {
                Arc::new(LoggedTool {
                    inner,
                    node: self.node.clone(),
                    log: self.log.clone(),
                }) as Arc<dyn Tool>
            })
            .collect()
    }

    fn is_logged(&self) -> bool {
        true
    }
}

/// A tool whose calls go to the run log.
#[derive(Debug)]
struct LoggedTool {
    inner: Arc<dyn Tool>,
    node: String,
    log: Arc<RunLog>,
}

impl Tool for LoggedTool {
    fn definition(&self) -> &ToolDefinition {
        self.inner.definition()
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        traced(&self.node, "tool", async move {
            let call = Logged::start(&self.log, &self.node, "tool", || args.clone());
            let result = self.inner.call(args).await;
            call.finish(&result, |v| json!({"response": v}), None);
            result
        })
    }

    fn is_logged(&self) -> bool {
        true
    }
}

/// A chat model whose calls go to the run log.
#[derive(Debug)]
struct LoggedModel {
    inner: Arc<dyn ChatModel>,
    node: String,
    log: Arc<RunLog>,
}

impl ChatModel for LoggedModel {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        traced(&self.node, "invoke", async move {
            let call = Logged::start(&self.log, &self.node, "invoke", || messages_json(messages));
            let result = self
                .inner
                .invoke(messages, options)
                .await
                .map_err(|e| e.in_node(&self.node));
            let usage = result.as_ref().ok().and_then(|m| m.usage);
            call.finish(&result, |m| json!({"message": m}), usage);
            result
        })
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        traced(&self.node, "stream", async move {
            let call = Logged::start(&self.log, &self.node, "stream", || messages_json(messages));
            match self.inner.stream(messages, options).await {
                Ok(inner) => Ok(Box::pin(LoggedStream {
                    inner,
                    node: self.node.clone(),
                    acc: StreamAccumulator::default(),
                    call: Some(call),
                }) as ChunkStream),
                Err(e) => {
                    let e = e.in_node(&self.node);
                    call.record(Value::Null, None, Some(e.to_string()));
                    Err(e)
                }
            }
        })
    }

    fn is_logged(&self) -> bool {
        true
    }
}

/// A model stream that records its merged answer when it ends, fails, or is dropped early.
struct LoggedStream {
    inner: ChunkStream,
    node: String,
    acc: StreamAccumulator,
    call: Option<Logged>,
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

/// An embedder whose calls go to the run log.
#[derive(Debug)]
struct LoggedEmbedder {
    inner: Arc<dyn Embedder>,
    node: String,
    log: Arc<RunLog>,
}

impl Embedder for LoggedEmbedder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        traced(&self.node, "embed", async move {
            let call = Logged::start(
                &self.log,
                &self.node,
                "embed",
                || json!({"texts": texts.len()}),
            );
            let result = self
                .inner
                .embed(texts)
                .await
                .map_err(|e| e.in_node(&self.node));
            call.finish(
                &result,
                |v| json!({"vectors": v.len(), "dimensions": v.first().map_or(0, Vec::len)}),
                None,
            );
            result
        })
    }

    fn is_logged(&self) -> bool {
        true
    }
}

/// `inner` with its splits logged as node `node`'s (action `splitText`).
pub(crate) fn logged_text_splitter(
    inner: Arc<dyn TextSplitter>,
    node: &str,
    log: &Arc<RunLog>,
) -> Arc<dyn TextSplitter> {
    Arc::new(LoggedTextSplitter {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// `inner` with its loads logged as node `node`'s (action `loadDocuments`).
pub(crate) fn logged_document_loader(
    inner: Arc<dyn DocumentLoader>,
    node: &str,
    log: &Arc<RunLog>,
) -> Arc<dyn DocumentLoader> {
    Arc::new(LoggedDocumentLoader {
        inner,
        node: node.to_owned(),
        log: log.clone(),
    })
}

/// A text splitter whose splits go to the run log: the text's length in,
/// the chunks out (n8n logs the text itself; a long document would fill
/// the log).
#[derive(Debug)]
struct LoggedTextSplitter {
    inner: Arc<dyn TextSplitter>,
    node: String,
    log: Arc<RunLog>,
}

impl TextSplitter for LoggedTextSplitter {
    fn split_text(&self, text: &str) -> Vec<String> {
        let call = Logged::start(
            &self.log,
            &self.node,
            "splitText",
            || json!({"characters": text.chars().count()}),
        );
        let chunks = self.inner.split_text(text);
        call.record(json!({"response": chunks}), None, None);
        chunks
    }

    fn is_logged(&self) -> bool {
        true
    }
}

/// A document loader whose loads go to the run log.
#[derive(Debug)]
struct LoggedDocumentLoader {
    inner: Arc<dyn DocumentLoader>,
    node: String,
    log: Arc<RunLog>,
}

impl DocumentLoader for LoggedDocumentLoader {
    fn load<'a>(&'a self, item: &'a Value) -> BoxFuture<'a, Result<Vec<Document>>> {
        traced(&self.node, "loadDocuments", async move {
            let call = Logged::start(&self.log, &self.node, "loadDocuments", || item.clone());
            let result = self.inner.load(item).await;
            call.finish(&result, |docs| json!({"response": docs}), None);
            result
        })
    }

    fn is_logged(&self) -> bool {
        true
    }
}
