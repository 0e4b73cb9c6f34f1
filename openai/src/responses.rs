//! OpenAI's Responses API (`/responses`), plain and streamed: the API
//! OpenAI's newer models and n8n's OpenAI Chat Model 1.3 use.
//!
//! A conversation goes as input items: messages, `function_call` and
//! `function_call_output`. Each request stands alone: nothing refers to
//! items OpenAI stored, so reasoning another turn returned is not sent back
//! (OpenAI then reasons again). OpenAI's own tools (web search, file
//! search, code interpreter) run on OpenAI's side when
//! [`OpenAiConfig::hosted_tools`] lists them; their results arrive as text.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use nodekit_core::error::Result;
use nodekit_core::message::{Citation, Content, ContentPart, Message, Role};
use nodekit_core::model::{
    BoxFuture, CallOptions, ChatModel, ChunkStream, FinishReason, ModelError, ModelErrorKind,
    ModelSettings, ResponseFormat, StreamAccumulator, StreamChunk, ToolChoice,
};
use nodekit_http::Transport;

use crate::chat::{OpenAiApi, OpenAiConfig, check_parts, embedded_error, parse_usage, protocol};

/// A chat model behind OpenAI's Responses API.
#[derive(Debug, Clone)]
pub struct OpenAiResponsesModel {
    model: String,
    settings: ModelSettings,
    extra_body: serde_json::Map<String, Value>,
    hosted_tools: Vec<Value>,
    transport: Transport,
}

impl OpenAiResponsesModel {
    /// A client for `config` (its `api` is not read). Fails only if the
    /// HTTP client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        let transport = crate::chat::client_transport(&config)?;
        Ok(OpenAiResponsesModel {
            model: config.model,
            settings: config.settings,
            extra_body: config.extra_body,
            hosted_tools: config.hosted_tools,
            transport,
        })
    }

    /// The request body for `messages`, as JSON bytes.
    pub fn request_body(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
    ) -> bytes::Bytes {
        let s = self.settings.merged(&options.overrides);
        let mut tools: Vec<Value> = options
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        tools.extend(self.hosted_tools.iter().cloned());
        let request = WireRequest {
            model: &self.model,
            input: messages.iter().flat_map(input_items).collect(),
            temperature: s.temperature,
            max_output_tokens: s.max_tokens,
            top_p: s.top_p,
            tools,
            tool_choice: options.tool_choice.as_ref().map(|c| match c {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            }),
            text: options.response_format.as_ref().map(|f| {
                let format = match f {
                    ResponseFormat::Text => json!({"type": "text"}),
                    ResponseFormat::JsonObject => json!({"type": "json_object"}),
                    ResponseFormat::JsonSchema {
                        name,
                        schema,
                        strict,
                    } => {
                        json!({"type": "json_schema", "name": name, "schema": schema, "strict": strict})
                    }
                };
                json!({ "format": format })
            }),
            stream: stream.then_some(true),
        };
        crate::chat::body_with_extra(&request, &self.extra_body)
    }

    async fn invoke_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<Message, ModelError> {
        check_parts(messages, OpenAiApi::Responses)?;
        let body = self.request_body(messages, options, false);
        let cancel = options.cancel.as_ref();
        let response = self
            .transport
            .post("responses", &body, cancel, true)
            .await?;
        parse_response(&self.transport.read_json(response, cancel).await?)
    }

    async fn stream_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChunkStream, ModelError> {
        check_parts(messages, OpenAiApi::Responses)?;
        let cancel = options.cancel.clone();
        let body = self.request_body(messages, options, true);
        let response = self
            .transport
            .post("responses", &body, cancel.as_ref(), false)
            .await?;
        self.transport
            .answer_stream(response, cancel, StreamState::default(), parse_response)
            .await
    }
}

/// `ctx.create_chat_model(..)` of an [`OpenAiConfig`] whose `api` is
/// `Responses` makes an [`OpenAiResponsesModel`].
pub(crate) fn into_chat_model(config: OpenAiConfig) -> Result<Arc<dyn ChatModel>> {
    Ok(Arc::new(OpenAiResponsesModel::new(config)?))
}

impl ChatModel for OpenAiResponsesModel {
    fn name(&self) -> &str {
        &self.model
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        self.transport.answer(self.invoke_inner(messages, options))
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        self.transport.answer(self.stream_inner(messages, options))
    }
}

/// The Responses API's request body, borrowing from the caller.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
}

/// The input items of one message: a message item, and for an AI turn
/// that called tools a `function_call` item per call; a tool result is a
/// `function_call_output`. Reasoning is left out.
fn input_items(m: &Message) -> Vec<Value> {
    let role = match m.role {
        Role::Human => "user",
        Role::Ai => "assistant",
        Role::System => "system",
        Role::Tool | Role::Function => {
            let call_id = m.tool_call_id.as_deref().unwrap_or_default();
            return vec![
                json!({"type": "function_call_output", "call_id": call_id, "output": m.text()}),
            ];
        }
        Role::Generic => m.chat_role.as_deref().unwrap_or("user"),
    };
    let mut items = Vec::new();
    let content = message_content(&m.content, m.role == Role::Ai);
    if m.tool_calls.is_empty() || content.as_array().is_none_or(|parts| !parts.is_empty()) {
        items.push(json!({"role": role, "content": content}));
    }
    items.extend(m.tool_calls.iter().map(|c| {
        json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.args.to_string()})
    }));
    items
}

/// A message's content as input parts: text as it is; of parts, text
/// (`output_text` in an AI turn), images and documents.
fn message_content(content: &Content, ai: bool) -> Value {
    let parts = match content {
        Content::Text(text) => return json!(text),
        Content::Parts(parts) => parts,
    };
    let text_type = if ai { "output_text" } else { "input_text" };
    let parts: Vec<Value> = parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text, .. } => Some(json!({"type": text_type, "text": text})),
            ContentPart::ImageUrl { image_url } => {
                let mut part = json!({"type": "input_image", "image_url": image_url.url});
                if let Some(detail) = &image_url.detail {
                    part["detail"] = json!(detail);
                }
                Some(part)
            }
            ContentPart::File { file } => {
                let mut part = if file.url.starts_with("data:") {
                    json!({"type": "input_file", "file_data": file.url})
                } else {
                    json!({"type": "input_file", "file_url": file.url})
                };
                if let Some(name) = &file.filename {
                    part["filename"] = json!(name);
                }
                Some(part)
            }
            _ => None,
        })
        .collect();
    Value::Array(parts)
}

/// Reads a whole response.
fn parse_response(v: &Value) -> Result<Message, ModelError> {
    if let Some(e) = failure(v) {
        return Err(e);
    }
    let output = v.get("output").and_then(Value::as_array).ok_or_else(|| {
        protocol(format!(
            "the response has no output: {}",
            nodekit_core::error::shorten(&v.to_string(), 200)
        ))
    })?;
    let mut chunks = Vec::new();
    let mut calls = 0;
    for item in output {
        item_chunks(item, &mut calls, &mut chunks);
    }
    chunks.push(StreamChunk::Finish {
        reason: finish_reason(v, calls > 0),
        usage: v.get("usage").and_then(parse_usage),
    });
    let mut acc = StreamAccumulator::default();
    for c in &chunks {
        acc.push(c);
    }
    let mut message = acc.into_message();
    message.id = v.get("id").and_then(Value::as_str).map(str::to_owned);
    Ok(message)
}

/// The chunks of one whole output item; `calls` counts the tool calls.
fn item_chunks(item: &Value, calls: &mut usize, out: &mut Vec<StreamChunk>) {
    let text = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match item.get("type").and_then(Value::as_str) {
        Some("message") => {
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let text = match part.get("type").and_then(Value::as_str) {
                    Some("refusal") => text(part, "refusal"),
                    _ => text(part, "text"),
                };
                if !text.is_empty() {
                    out.push(StreamChunk::TextDelta { text });
                }
                out.push(StreamChunk::TextEnd {
                    citations: citations(part.get("annotations")),
                });
            }
        }
        Some("reasoning") => {
            for part in item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let text = text(part, "text");
                if !text.is_empty() {
                    out.push(StreamChunk::ReasoningDelta { text });
                }
            }
        }
        Some("function_call") => {
            out.push(StreamChunk::ToolCallDelta {
                index: *calls,
                id: Some(text(item, "call_id")),
                name: Some(text(item, "name")),
                arguments: text(item, "arguments"),
            });
            *calls += 1;
        }
        // OpenAI's own tools ran on its side; their answer is in a message.
        _ => {}
    }
}

/// An output text's annotations (`url_citation`, `file_citation`...) as
/// citations; those that are not objects with a `type` are left out.
fn citations(annotations: Option<&Value>) -> Vec<Citation> {
    annotations
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| Citation::deserialize(a).ok())
        .collect()
}

/// The error of a failed response, or of an `error` event.
fn failure(v: &Value) -> Option<ModelError> {
    if v.get("status").and_then(Value::as_str) == Some("failed")
        || v.get("error").is_some_and(|e| !e.is_null())
    {
        let mut error = embedded_error(v)
            .unwrap_or_else(|| ModelError::new(ModelErrorKind::Server, "the response failed"));
        if error.code.as_deref() == Some("rate_limit_exceeded") {
            error.kind = ModelErrorKind::RateLimited;
        }
        return Some(error);
    }
    None
}

/// How a response ended: cut at the token limit, filtered, or complete.
fn finish_reason(v: &Value, called_tools: bool) -> FinishReason {
    let incomplete = v
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str);
    match incomplete {
        Some("max_output_tokens") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
        None if called_tools => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    }
}

/// Reads the typed events of a streamed response.
#[derive(Default)]
struct StreamState {
    /// Tool-call index by output index.
    calls: HashMap<u64, usize>,
    /// The annotations of the output text being streamed.
    citations: Vec<Citation>,
}

impl nodekit_http::StreamParser for StreamState {
    fn event(
        &mut self,
        event: &nodekit_http::sse::SseEvent,
        out: &mut Vec<StreamChunk>,
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            let shown = nodekit_core::error::shorten(data, 200);
            protocol(format!("a streamed event is not JSON ({e}): {shown}"))
        })?;
        let delta = || {
            value
                .get("delta")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                out.push(StreamChunk::TextDelta { text: delta() });
            }
            "response.output_text.annotation.added" => {
                let annotation = value.get("annotation");
                self.citations
                    .extend(annotation.and_then(|a| Citation::deserialize(a).ok()));
            }
            "response.output_text.done" => out.push(StreamChunk::TextEnd {
                citations: std::mem::take(&mut self.citations),
            }),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(StreamChunk::ReasoningDelta { text: delta() });
            }
            "response.output_item.added" => {
                let item = value.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let index = self.calls.len();
                    let position = value
                        .get("output_index")
                        .and_then(Value::as_u64)
                        .unwrap_or(index as u64);
                    self.calls.insert(position, index);
                    let text = |key| item.get(key).and_then(Value::as_str).map(str::to_owned);
                    out.push(StreamChunk::ToolCallDelta {
                        index,
                        id: text("call_id"),
                        name: text("name"),
                        arguments: text("arguments").unwrap_or_default(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let position = value.get("output_index").and_then(Value::as_u64);
                let index = position
                    .and_then(|p| self.calls.get(&p).copied())
                    .ok_or_else(|| {
                        protocol("the arguments of a function call that did not start came")
                    })?;
                out.push(StreamChunk::ToolCallDelta {
                    index,
                    id: None,
                    name: None,
                    arguments: delta(),
                });
            }
            "response.completed" | "response.incomplete" => {
                let response = value.get("response").unwrap_or(&Value::Null);
                out.push(StreamChunk::Finish {
                    reason: finish_reason(response, !self.calls.is_empty()),
                    usage: response.get("usage").and_then(parse_usage),
                });
                return Ok(true);
            }
            "response.failed" => {
                let response = value.get("response").unwrap_or(&Value::Null);
                return Err(failure(response).unwrap_or_else(|| {
                    ModelError::new(ModelErrorKind::Server, "the response failed")
                }));
            }
            "error" => {
                return Err(
                    embedded_error(&json!({ "error": value })).unwrap_or_else(|| {
                        ModelError::new(ModelErrorKind::Server, "the stream reported an error")
                    }),
                );
            }
            _ => {}
        }
        Ok(false)
    }

    fn closed(&mut self) -> Result<StreamChunk, ModelError> {
        Err(protocol(
            "the stream ended before the response was complete",
        ))
    }
}
