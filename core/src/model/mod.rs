//! Chat models: the object-safe [`ChatModel`] trait, per-call options,
//! streaming chunks, and typed errors. Implementations: author-supplied
//! custom models ([`custom`]); providers' clients are crates of their own
//! (nodekit's OpenAI-compatible one is `nodekit::model::openai`).

pub mod custom;
mod fallback;

pub use fallback::FallbackModel;

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::message::{Citation, Content, ContentPart, Message, Role, ToolCall, Usage};
use crate::tool::ToolDefinition;

pub use crate::error::{ModelError, ModelErrorKind};
/// A boxed, sendable future (what object-safe async methods return).
pub use futures::future::BoxFuture;

/// A boxed stream of model output; it owns what it needs, so it outlives the call's arguments.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<StreamChunk>> + Send>>;

/// A chat model. Object-safe: agents hold `Arc<dyn ChatModel>`.
pub trait ChatModel: Send + Sync + fmt::Debug {
    /// The model's name, e.g. `gpt-4o-mini`.
    fn name(&self) -> &str;

    /// Sends the conversation and returns the model's message.
    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>>;

    /// Sends the conversation and streams the answer as it is generated.
    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>>;
}

impl dyn ChatModel {
    /// This model with `tools` sent on every call (LangChain's `bindTools`).
    pub fn bind_tools(self: Arc<Self>, tools: Vec<ToolDefinition>) -> Arc<dyn ChatModel> {
        Arc::new(BoundTools { inner: self, tools })
    }
}

/// A model with tools bound to it.
#[derive(Debug)]
struct BoundTools {
    inner: Arc<dyn ChatModel>,
    tools: Vec<ToolDefinition>,
}

impl BoundTools {
    fn options(&self, options: &CallOptions) -> CallOptions {
        let mut options = options.clone();
        if options.tools.is_empty() {
            options.tools = self.tools.clone();
        }
        options
    }
}

impl ChatModel for BoundTools {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        Box::pin(async move { self.inner.invoke(messages, &self.options(options)).await })
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        Box::pin(async move { self.inner.stream(messages, &self.options(options)).await })
    }
}

/// Stops model calls and agent runs: cancelling it (or any clone) drops the
/// HTTP requests of the calls that hold it at once.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(tokio_util::sync::CancellationToken);

impl CancelToken {
    /// A token that is not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every call holding this token or a clone of it.
    pub fn cancel(&self) {
        self.0.cancel();
    }

    /// Whether the token is cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        self.0.cancelled().await;
    }
}

/// Options of one model call.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Stop sequences.
    pub stop: Vec<String>,
    /// Cancels the call: the HTTP request is dropped at once.
    pub cancel: Option<CancelToken>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Whether and which tool the model must call.
    pub tool_choice: Option<ToolChoice>,
    /// Plain text, any JSON object, or JSON following a schema.
    pub response_format: Option<ResponseFormat>,
    /// Settings that override the model's for this call only.
    pub overrides: ModelSettings,
}

/// Sampling settings; `None` leaves the provider's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// Randomness, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens to generate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Penalty for repeated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Penalty for tokens already present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
}

impl ModelSettings {
    /// These settings with `overrides`' values where set.
    pub fn merged(&self, overrides: &ModelSettings) -> ModelSettings {
        ModelSettings {
            temperature: overrides.temperature.or(self.temperature),
            max_tokens: overrides.max_tokens.or(self.max_tokens),
            top_p: overrides.top_p.or(self.top_p),
            frequency_penalty: overrides.frequency_penalty.or(self.frequency_penalty),
            presence_penalty: overrides.presence_penalty.or(self.presence_penalty),
        }
    }
}

/// OpenAI's `tool_choice`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Tool(String),
}

/// OpenAI's `response_format`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON that follows `schema`.
    JsonSchema {
        /// Schema name.
        name: String,
        /// The JSON Schema.
        schema: Value,
        /// Whether the provider must follow it exactly.
        strict: bool,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end or a stop sequence.
    Stop,
    /// It wants tools called.
    ToolCalls,
    /// The token limit.
    Length,
    /// A content filter.
    ContentFilter,
    /// Anything else the provider said.
    Other(String),
}

impl FinishReason {
    /// OpenAI's name for it.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
        }
    }

    /// Reads OpenAI's `finish_reason`.
    pub fn parse(s: &str) -> FinishReason {
        match s {
            "stop" | "end_turn" | "eos" => FinishReason::Stop,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StreamChunk {
    /// More answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// More reasoning text (models that expose it).
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// The provider's signature over the reasoning streamed since the last
    /// signature (Anthropic's `signature_delta`, Gemini's
    /// `thoughtSignature`): it ends that block of reasoning, which the
    /// final message keeps as a signed [`ContentPart::Thinking`].
    ReasoningSignature {
        /// The signature.
        signature: String,
    },
    /// A block of encrypted reasoning (Anthropic's `redacted_thinking`),
    /// kept as a [`ContentPart::RedactedThinking`].
    RedactedReasoning {
        /// The encrypted reasoning.
        data: String,
    },
    /// The end of a block of text, with the sources it cites (Anthropic's
    /// `citations`, OpenAI's annotations, Gemini's citation sources). It
    /// closes the text streamed since the previous one; the final message
    /// keeps such blocks apart, as [`ContentPart::Text`] parts, when one of
    /// them cites something, and joins them otherwise.
    TextEnd {
        /// What the block cites (may be empty).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        citations: Vec<Citation>,
    },
    /// A fragment of a tool call; fragments with one `index` make one call.
    ToolCallDelta {
        /// Which call of this answer.
        index: usize,
        /// The call id, when this fragment carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool name, when this fragment carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// More of the arguments' JSON text.
        arguments: String,
    },
    /// The end of the answer.
    Finish {
        /// Why it ended.
        reason: FinishReason,
        /// Token counts, when the provider sent them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
}

/// Merges stream chunks into the final AI message.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    /// The text since the last [`StreamChunk::TextEnd`].
    text: String,
    /// Blocks of text closed by [`StreamChunk::TextEnd`].
    texts: Vec<(String, Vec<Citation>)>,
    /// The reasoning being streamed, not yet ended by a signature.
    reasoning: String,
    /// Blocks of reasoning ended by a signature, and redacted ones.
    thinking: Vec<ContentPart>,
    calls: std::collections::BTreeMap<usize, PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

impl StreamAccumulator {
    /// Adds one chunk.
    pub fn push(&mut self, chunk: &StreamChunk) {
        match chunk {
            StreamChunk::TextDelta { text } => self.text.push_str(text),
            StreamChunk::TextEnd { citations } => {
                self.texts
                    .push((std::mem::take(&mut self.text), citations.clone()));
            }
            StreamChunk::ReasoningDelta { text } => self.reasoning.push_str(text),
            StreamChunk::ReasoningSignature { signature } => {
                self.thinking.push(ContentPart::Thinking {
                    thinking: std::mem::take(&mut self.reasoning),
                    signature: Some(signature.clone()),
                });
            }
            StreamChunk::RedactedReasoning { data } => {
                self.end_reasoning();
                self.thinking
                    .push(ContentPart::RedactedThinking { data: data.clone() });
            }
            StreamChunk::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => {
                let call = self.calls.entry(*index).or_default();
                if let Some(id) = id.as_ref().filter(|s| !s.is_empty()) {
                    call.id = Some(id.clone());
                }
                // Some servers repeat the whole name in every fragment.
                if let Some(name) = name.as_ref().filter(|n| **n != call.name) {
                    call.name.push_str(name);
                }
                call.arguments.push_str(arguments);
            }
            StreamChunk::Finish { reason, usage } => {
                self.finish = Some(reason.clone());
                if usage.is_some() {
                    self.usage = *usage;
                }
            }
        }
    }

    /// Ends the reasoning streamed so far as an unsigned block, after
    /// signed ones.
    fn end_reasoning(&mut self) {
        if !self.reasoning.is_empty() {
            self.thinking.push(ContentPart::Thinking {
                thinking: std::mem::take(&mut self.reasoning),
                signature: None,
            });
        }
    }

    /// Records usage that came without a finish chunk.
    pub fn set_usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
    }

    /// Why the answer ended, if the stream said.
    pub fn finish_reason(&self) -> Option<&FinishReason> {
        self.finish.as_ref()
    }

    /// The final message. Tool-call arguments that are not valid JSON are
    /// kept as text under `{"__raw": ...}` so the agent can report them.
    /// Reasoning that came with a signature, or redacted, is kept as
    /// [`ContentPart::Thinking`] and [`ContentPart::RedactedThinking`]
    /// parts before the text; unsigned reasoning alone (OpenAI-compatible
    /// servers) as `additional_kwargs.reasoning_content`.
    pub fn into_message(mut self) -> Message {
        if !self.thinking.is_empty() {
            self.end_reasoning();
        }
        let tool_calls = self
            .calls
            .into_values()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c.id.unwrap_or_else(|| format!("call_{i}")),
                name: c.name,
                args: parse_arguments(&c.arguments),
            })
            .collect();
        let cited = self.texts.iter().any(|(_, c)| !c.is_empty());
        if !cited {
            let mut joined: String = self.texts.drain(..).map(|(text, _)| text).collect();
            joined.push_str(&self.text);
            self.text = joined;
        } else if !self.text.is_empty() {
            self.texts
                .push((std::mem::take(&mut self.text), Vec::new()));
        }
        let mut message = if self.thinking.is_empty() && !cited {
            Message::ai(self.text)
        } else {
            let mut parts = self.thinking;
            if !self.text.is_empty() {
                parts.push(ContentPart::text(self.text));
            }
            parts.extend(
                self.texts
                    .into_iter()
                    .map(|(text, citations)| ContentPart::Text { text, citations }),
            );
            Message::ai(Content::Parts(parts))
        };
        message.tool_calls = tool_calls;
        message.usage = self.usage;
        if !self.reasoning.is_empty() {
            message
                .additional_kwargs
                .insert("reasoning_content".into(), Value::String(self.reasoning));
        }
        if let Some(reason) = self.finish {
            message
                .additional_kwargs
                .insert("finish_reason".into(), Value::from(reason.as_str()));
        }
        message
    }
}

/// A whole message as a stream of its chunks ([`message_chunks`]): the
/// `stream` of a model that answers only whole.
pub fn message_stream(message: Message) -> ChunkStream {
    Box::pin(futures::stream::iter(
        message_chunks(message).into_iter().map(Ok),
    ))
}

/// The chunks that stream a whole message: text, reasoning, one delta per
/// tool call, and the finish (from `additional_kwargs.finish_reason` when set).
pub fn message_chunks(message: Message) -> Vec<StreamChunk> {
    let mut out = Vec::new();
    if let Content::Parts(parts) = &message.content {
        for part in parts {
            match part {
                ContentPart::Thinking {
                    thinking,
                    signature,
                } => {
                    if !thinking.is_empty() {
                        out.push(StreamChunk::ReasoningDelta {
                            text: thinking.clone(),
                        });
                    }
                    if let Some(signature) = signature {
                        out.push(StreamChunk::ReasoningSignature {
                            signature: signature.clone(),
                        });
                    }
                }
                ContentPart::RedactedThinking { data } => {
                    out.push(StreamChunk::RedactedReasoning { data: data.clone() });
                }
                _ => {}
            }
        }
    }
    let cited = match &message.content {
        Content::Parts(parts) => parts
            .iter()
            .any(|p| matches!(p, ContentPart::Text { citations, .. } if !citations.is_empty())),
        Content::Text(_) => false,
    };
    match &message.content {
        Content::Parts(parts) if cited => {
            for part in parts {
                if let ContentPart::Text { text, citations } = part {
                    out.push(StreamChunk::TextDelta { text: text.clone() });
                    out.push(StreamChunk::TextEnd {
                        citations: citations.clone(),
                    });
                }
            }
        }
        _ => {
            let text = message.text();
            if !text.is_empty() {
                out.push(StreamChunk::TextDelta { text });
            }
        }
    }
    if let Some(Value::String(r)) = message.additional_kwargs.get("reasoning_content") {
        out.push(StreamChunk::ReasoningDelta { text: r.clone() });
    }
    for (index, c) in message.tool_calls.iter().enumerate() {
        out.push(StreamChunk::ToolCallDelta {
            index,
            id: Some(c.id.clone()),
            name: Some(c.name.clone()),
            arguments: c.args.to_string(),
        });
    }
    let reason = match message
        .additional_kwargs
        .get("finish_reason")
        .and_then(Value::as_str)
    {
        Some(r) => FinishReason::parse(r),
        None if message.tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    out.push(StreamChunk::Finish {
        reason,
        usage: message.usage,
    });
    out
}

/// Tool-call arguments from JSON text; empty text is `{}`.
pub fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::json!({ RAW_ARGUMENTS: text }))
}

/// Key under which unparseable tool-call arguments are kept.
pub const RAW_ARGUMENTS: &str = "__raw";

/// Whether a message asks for tools.
pub fn wants_tools(message: &Message) -> bool {
    message.role == Role::Ai && !message.tool_calls.is_empty()
}
