//! The tools agent (n8n's AI Agent): model → tool calls → tool results →
//! model, until a final answer or the iteration limit.
//!
//! The independent tool calls of one turn run concurrently. A tool's error
//! (unknown tool, unreadable arguments, a failure) goes back to the model as
//! the tool message, so it can recover. Leading tool messages without their
//! call are dropped from loaded memory, as n8n does. The exchange is saved to
//! memory at the end. With an output schema, the final answer must be JSON
//! that follows it; a wrong answer is sent back once per iteration left.

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use nodekit_core::model::CancelToken;
use serde::Serialize;
use serde_json::Value;

use nodekit_core::error::{AgentError, Result, shorten};
use nodekit_core::event::{AgentEvent, EventSender};
use nodekit_core::memory::Memory;
use nodekit_core::message::{Message, Role, ToolCall, Usage};
use nodekit_core::model::{
    CallOptions, ChatModel, RAW_ARGUMENTS, ResponseFormat, StreamAccumulator, StreamChunk,
};
use nodekit_core::tool::{Tool, ToolDefinition};

/// n8n's default system message.
pub const DEFAULT_SYSTEM_MESSAGE: &str = "You are a helpful assistant";

/// Default iteration limit (model calls per run).
pub const DEFAULT_MAX_ITERATIONS: usize = 10;

/// Most tool calls run in one turn; more are answered with an error.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 64;

/// Most tool calls of one turn running at the same time.
pub const MAX_CONCURRENT_TOOLS: usize = 8;

/// Most characters of one tool result sent to the model.
pub const MAX_TOOL_OUTPUT_CHARS: usize = 100_000;

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStep {
    /// The tool.
    pub tool: String,
    /// The model's arguments.
    pub args: Value,
    /// What the model was told.
    pub output: String,
    /// Whether the tool failed.
    pub error: bool,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutput {
    /// The answer: text, or JSON when an output schema was given.
    pub output: Value,
    /// Every tool call, in order.
    pub intermediate_steps: Vec<AgentStep>,
    /// Model calls made.
    pub iterations: usize,
    /// Tokens of all model calls.
    pub usage: Usage,
    /// What the caller should know about the run (a final answer that was
    /// empty); a workflow node writes them to the run log.
    pub warnings: Vec<String>,
}

/// Settings of an agent.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Instructions sent first (default: n8n's "You are a helpful assistant").
    pub system_message: String,
    /// Most model calls in one run (default 10).
    pub max_iterations: usize,
    /// JSON Schema the final answer must follow.
    pub output_schema: Option<Value>,
    /// Stop the run.
    pub cancel: Option<CancelToken>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            system_message: DEFAULT_SYSTEM_MESSAGE.into(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            output_schema: None,
            cancel: None,
        }
    }
}

/// A tools agent: calls the model, runs the tools it asks for (independent
/// calls of one turn concurrently), and answers when the model does.
///
/// ```
/// use std::sync::Arc;
///
/// use nodekit::agent::{Agent, AgentOptions};
/// use nodekit::message::Message;
/// use nodekit::model::ChatModel;
/// use nodekit::model::custom::CustomChatModel;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> nodekit::Result<()> {
/// // Any chat model works; inside a node it comes from `ctx.create_chat_model(..)`.
/// let model: Arc<dyn ChatModel> = Arc::new(CustomChatModel::new("greeter", |_, _| async {
///     Ok(Message::ai("Hello, Ada!"))
/// }));
/// let agent = Agent::new(model, Vec::new(), AgentOptions::default())?;
/// let answer = agent.run("Hi, I am Ada.", None).await?;
/// assert_eq!(answer.output, "Hello, Ada!");
/// assert_eq!(answer.iterations, 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Agent {
    model: Arc<dyn ChatModel>,
    memory: Option<Arc<dyn Memory>>,
    tools: Vec<Arc<dyn Tool>>,
    options: AgentOptions,
}

/// The warning of a run whose final answer had neither text nor tool calls.
pub const EMPTY_ANSWER: &str =
    "the model answered with neither text nor tool calls; the output is empty";

impl Agent {
    /// An agent over `model` with `tools`; fails on two tools with one name.
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: Vec<Arc<dyn Tool>>,
        options: AgentOptions,
    ) -> Result<Self> {
        let mut names = HashSet::new();
        for t in &tools {
            if !names.insert(t.definition().name.clone()) {
                return Err(AgentError::DuplicateTool {
                    name: shorten(&t.definition().name, nodekit_core::error::QUOTE_MAX),
                }
                .into());
            }
        }
        Ok(Agent {
            model,
            memory: None,
            tools,
            options,
        })
    }

    /// The same agent with conversation memory.
    pub fn with_memory(mut self, memory: Arc<dyn Memory>) -> Self {
        // Tools the memory brings (agent memory's) join the agent's own,
        // unless a connected tool already has the name.
        for tool in memory.tools() {
            let name = &tool.definition().name;
            if !self.tools.iter().any(|t| &t.definition().name == name) {
                self.tools.push(tool);
            }
        }
        self.memory = Some(memory);
        self
    }

    /// Answers `input`; progress goes to `events` if given (the model is then streamed).
    ///
    /// The run is one [`run_scope`](nodekit_core::run_scope): what its tools
    /// keep for it ends with it (a SQL transaction the model leaves open
    /// is rolled back).
    pub async fn run(&self, input: &str, events: Option<&EventSender>) -> Result<AgentOutput> {
        nodekit_core::run_scope::scoped(self.answer(input, events)).await
    }

    async fn answer(&self, input: &str, events: Option<&EventSender>) -> Result<AgentOutput> {
        let mut messages = Vec::new();
        if !self.options.system_message.is_empty() {
            messages.push(Message::system(self.options.system_message.as_str()));
        }
        if let Some(memory) = &self.memory {
            let mut history = memory.load_for(input).await?;
            drop_orphaned_tool_messages(&mut history);
            messages.extend(history);
        }
        messages.push(Message::human(input));
        // What the run adds to the conversation (saved to memory at the end).
        let mut turn: Vec<Message> = Vec::new();
        let definitions: Vec<ToolDefinition> =
            self.tools.iter().map(|t| t.definition().clone()).collect();
        let options = CallOptions {
            tools: definitions,
            cancel: self.options.cancel.clone(),
            response_format: self.options.output_schema.as_ref().map(|schema| {
                ResponseFormat::JsonSchema {
                    name: "output".into(),
                    schema: schema.clone(),
                    strict: false,
                }
            }),
            ..CallOptions::default()
        };
        let mut usage = Usage::default();
        let mut steps = Vec::new();
        for iteration in 1..=self.options.max_iterations {
            let answer = self.call_model(&messages, &options, events).await?;
            if let Some(u) = &answer.usage {
                usage.add(u);
            }
            if !answer.tool_calls.is_empty() {
                let calls = answer.tool_calls.clone();
                turn.push(answer.clone());
                messages.push(answer);
                let results = self.call_tools(&calls, events).await?;
                for (call, (output, error)) in calls.iter().zip(results) {
                    let result = Message {
                        name: Some(call.name.clone()),
                        ..Message::tool(output.as_str(), call.id.as_str())
                    };
                    turn.push(result.clone());
                    messages.push(result);
                    steps.push(AgentStep {
                        tool: call.name.clone(),
                        args: call.args.clone(),
                        output,
                        error,
                    });
                }
                continue;
            }
            let text = answer.text();
            // n8n's agent finishes with an empty output here; so does this
            // one, saying so.
            let mut warnings = Vec::new();
            if text.trim().is_empty() && self.options.output_schema.is_none() {
                warnings.push(EMPTY_ANSWER.to_owned());
            }
            let output = match &self.options.output_schema {
                None => Value::String(text.clone()),
                Some(schema) => match structured(&text, schema) {
                    Ok(v) => v,
                    Err(problem) if iteration < self.options.max_iterations => {
                        messages.push(answer);
                        messages.push(Message::human(format!(
                            "Your answer must be only JSON that follows this schema: {schema}. Problem: {problem}"
                        )));
                        continue;
                    }
                    Err(problem) => {
                        return Err(AgentError::OutputSchema { problem }.into());
                    }
                },
            };
            if let Some(memory) = &self.memory {
                turn.push(answer);
                memory.save_turn(input, &turn).await?;
            }
            return Ok(AgentOutput {
                output,
                intermediate_steps: steps,
                iterations: iteration,
                usage,
                warnings,
            });
        }
        Err(AgentError::MaxIterations {
            limit: self.options.max_iterations,
        }
        .into())
    }

    async fn call_model(
        &self,
        messages: &[Message],
        options: &CallOptions,
        events: Option<&EventSender>,
    ) -> Result<Message> {
        let Some(events) = events else {
            return self.model.invoke(messages, options).await;
        };
        let mut stream = self.model.stream(messages, options).await?;
        let mut acc = StreamAccumulator::default();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if let StreamChunk::TextDelta { text } = &chunk {
                events.send(AgentEvent::TextDelta { text: text.clone() });
            }
            acc.push(&chunk);
        }
        Ok(acc.into_message())
    }

    /// Runs one turn's calls, [`MAX_CONCURRENT_TOOLS`] at a time, in order of
    /// the calls; those past [`MAX_TOOL_CALLS_PER_TURN`] are answered with an
    /// error. Cancelling the run stops the tools too.
    async fn call_tools(
        &self,
        calls: &[ToolCall],
        events: Option<&EventSender>,
    ) -> Result<Vec<(String, bool)>> {
        // Owned items: a stream of borrowed ones trips the compiler's Send check.
        let work = futures::stream::iter(calls.iter().cloned().enumerate())
            .map(|(i, call)| async move {
                if i >= MAX_TOOL_CALLS_PER_TURN {
                    let why = format!("Error: at most {MAX_TOOL_CALLS_PER_TURN} tool calls are run per turn; call again with fewer.");
                    return (why, true);
                }
                self.call_tool(&call, events).await
            })
            .buffered(MAX_CONCURRENT_TOOLS)
            .collect::<Vec<_>>();
        match &self.options.cancel {
            Some(token) => tokio::select! {
                biased;
                _ = token.cancelled() => Err(AgentError::Cancelled.into()),
                results = work => Ok(results),
            },
            None => Ok(work.await),
        }
    }

    /// Runs one call; the text for the model, and whether it is an error.
    async fn call_tool(&self, call: &ToolCall, events: Option<&EventSender>) -> (String, bool) {
        if let Some(events) = events {
            events.send(AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                args: call.args.clone(),
            });
        }
        let (output, error) = match self.tools.iter().find(|t| t.definition().name == call.name) {
            None => {
                let names: Vec<&str> = self
                    .tools
                    .iter()
                    .map(|t| t.definition().name.as_str())
                    .collect();
                (
                    format!(
                        "Error: there is no tool named `{}`. Available tools: {}",
                        call.name,
                        names.join(", ")
                    ),
                    true,
                )
            }
            Some(_) if call.args.get(RAW_ARGUMENTS).is_some() => (
                format!(
                    "Error: the arguments are not valid JSON: {}. Send the arguments as one JSON object.",
                    shorten(call.args[RAW_ARGUMENTS].as_str().unwrap_or_default(), 500)
                ),
                true,
            ),
            Some(tool) => match tool.call(call.args.clone()).await {
                Ok(Value::String(s)) => (s, false),
                // Straight into bytes, not through `fmt::Display`: faster on large answers.
                Ok(v) => (serde_json::to_string(&v).unwrap_or_default(), false),
                Err(e) => (format!("Error: {e}"), true),
            },
        };
        let output = shorten(&output, MAX_TOOL_OUTPUT_CHARS);
        if let Some(events) = events {
            events.send(AgentEvent::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                output: output.clone(),
                error,
            });
        }
        (output, error)
    }
}

/// n8n drops tool messages at the start of loaded memory: their calls were cut off by the window.
fn drop_orphaned_tool_messages(history: &mut Vec<Message>) {
    let orphans = history.iter().take_while(|m| m.role == Role::Tool).count();
    history.drain(..orphans);
}

/// The answer as JSON following `schema`, or what is wrong with it.
fn structured(text: &str, schema: &Value) -> std::result::Result<Value, String> {
    let trimmed = text.trim();
    // Models often wrap JSON in a Markdown code fence.
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"))
        .unwrap_or(trimmed);
    let value: Value = serde_json::from_str(body.trim()).map_err(|e| format!("not JSON ({e})"))?;
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the output schema is invalid: {e}"))?;
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems.join("; "))
    }
}
