//! [`OllamaChatModel`]: Ollama's `/api/chat` as a nodekit [`ChatModel`].

use nodekit_core::error::Result;
use nodekit_core::message::Usage;
use nodekit_core::message::{Content, ContentPart, Message, Role};
use nodekit_core::model::{
    BoxFuture, CallOptions, ChatModel, ChunkStream, FinishReason, ModelError, ModelErrorKind,
    ModelSettings, ResponseFormat, StreamAccumulator, StreamChunk, ToolChoice,
};
use nodekit_http::{Transport, error_fields};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::OllamaConfig;

/// A chat model served by Ollama.
#[derive(Debug, Clone)]
pub struct OllamaChatModel {
    model: String,
    settings: ModelSettings,
    options: serde_json::Map<String, Value>,
    format: Option<Value>,
    keep_alive: Option<Value>,
    think: Option<bool>,
    transport: Transport,
}

impl OllamaChatModel {
    /// A client for `config`. Fails only if the HTTP client cannot be built.
    pub fn new(config: OllamaConfig) -> Result<Self> {
        let transport = crate::config::transport(
            &config.base_url,
            config.api_key,
            config.authenticate,
            config.timeout_secs,
        )?
        .headers(config.headers)
        .max_retries(config.max_retries)
        .max_response_bytes(config.max_response_bytes)
        .build()?;
        Ok(OllamaChatModel {
            model: config.model,
            settings: config.settings,
            options: config.options,
            format: config.format,
            keep_alive: config.keep_alive,
            think: config.think,
            transport,
        })
    }

    /// The request body for `messages`, as JSON bytes, or the reason
    /// Ollama could not take it (it names the message).
    pub fn request_body(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
    ) -> Result<bytes::Bytes, ModelError> {
        let s = self.settings.merged(&options.overrides);
        let mut runtime = self.options.clone();
        for (key, value) in [
            ("temperature", s.temperature.map(Value::from)),
            ("top_p", s.top_p.map(Value::from)),
            ("num_predict", s.max_tokens.map(Value::from)),
            ("frequency_penalty", s.frequency_penalty.map(Value::from)),
            ("presence_penalty", s.presence_penalty.map(Value::from)),
            (
                "stop",
                (!options.stop.is_empty()).then(|| json!(options.stop)),
            ),
        ] {
            if let Some(value) = value {
                runtime.insert(key.into(), value);
            }
        }
        // Ollama cannot force a tool; "none" is honoured by sending none.
        let tools = match options.tool_choice {
            Some(ToolChoice::None) => Vec::new(),
            _ => options
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {"name": t.name,
                        "description": t.description, "parameters": t.parameters}})
                })
                .collect(),
        };
        let format = match &options.response_format {
            Some(ResponseFormat::JsonObject) => Some(json!("json")),
            Some(ResponseFormat::JsonSchema { schema, .. }) => Some(schema.clone()),
            Some(ResponseFormat::Text) => None,
            _ => self.format.clone(),
        };
        let mut wire = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            wire.push(wire_message(m).map_err(|problem| {
                ModelError::new(
                    ModelErrorKind::BadRequest,
                    format!("message {i}: {problem}"),
                )
            })?);
        }
        let request = WireRequest {
            model: &self.model,
            messages: wire,
            tools,
            format,
            options: runtime,
            stream,
            keep_alive: self.keep_alive.as_ref(),
            think: self.think,
        };
        serde_json::to_vec(&request)
            .map(bytes::Bytes::from)
            .map_err(|e| protocol(format!("the request could not be written: {e}")))
    }

    async fn invoke_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<Message, ModelError> {
        let body = self.request_body(messages, options, false)?;
        let cancel = options.cancel.as_ref();
        let response = self.transport.post("api/chat", &body, cancel, true).await?;
        whole(&self.transport.read_json(response, cancel).await?)
    }

    async fn stream_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChunkStream, ModelError> {
        let body = self.request_body(messages, options, true)?;
        let cancel = options.cancel.clone();
        let response = self
            .transport
            .post("api/chat", &body, cancel.as_ref(), false)
            .await?;
        self.transport
            .answer_stream(response, cancel, Lines::default(), whole)
            .await
    }
}

impl ChatModel for OllamaChatModel {
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

/// `/api/chat`'s request body.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<Value>,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    options: serde_json::Map<String, Value>,
    /// Always sent: Ollama streams unless told not to.
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    keep_alive: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    think: Option<bool>,
}

/// A message as Ollama takes it: text, images as base64, the reasoning of
/// an earlier answer as `thinking`, tool calls with their arguments as an
/// object, and a tool result with the tool's name.
fn wire_message(m: &Message) -> Result<Value, String> {
    let role = match m.role {
        Role::Human => "user",
        Role::Ai => "assistant",
        Role::System => "system",
        Role::Tool | Role::Function => "tool",
        Role::Generic => m.chat_role.as_deref().unwrap_or("user"),
    };
    let mut images = Vec::new();
    if let Content::Parts(parts) = &m.content {
        for part in parts {
            match part {
                ContentPart::ImageUrl { image_url } => match base64_of(&image_url.url) {
                    Some(data) => images.push(data),
                    None => {
                        return Err(
                            "Ollama takes images as data: URLs (base64), not by address".into()
                        );
                    }
                },
                ContentPart::File { .. } => {
                    return Err("Ollama takes no documents; send their text instead".into());
                }
                ContentPart::Other(_) => {
                    return Err(format!("Ollama does not take a `{}` block", part.kind()));
                }
                _ => {}
            }
        }
    }
    let mut wire = json!({"role": role, "content": m.text()});
    if !images.is_empty() {
        wire["images"] = json!(images);
    }
    if m.role == Role::Ai {
        if let Some(thinking) = m.reasoning().filter(|t| !t.is_empty()) {
            wire["thinking"] = json!(thinking);
        }
        if !m.tool_calls.is_empty() {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| json!({"function": {"name": c.name, "arguments": c.args}}))
                .collect();
            wire["tool_calls"] = json!(calls);
        }
    }
    if matches!(m.role, Role::Tool | Role::Function)
        && let Some(name) = &m.name
    {
        wire["tool_name"] = json!(name);
    }
    Ok(wire)
}

/// The base64 data of a `data:` URL.
fn base64_of(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    meta.ends_with(";base64").then_some(data)
}

fn protocol(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Protocol, message)
}

/// Reads a whole answer.
fn whole(v: &Value) -> Result<Message, ModelError> {
    let mut lines = Lines::default();
    let mut chunks = Vec::new();
    if !lines.line(v, &mut chunks)? {
        return Err(protocol(format!(
            "the answer is not done: {}",
            nodekit_core::error::shorten(&v.to_string(), 200)
        )));
    }
    let mut acc = StreamAccumulator::default();
    for c in &chunks {
        acc.push(c);
    }
    Ok(acc.into_message())
}

/// Reads the lines of a streamed answer.
#[derive(Default)]
struct Lines {
    calls: usize,
}

impl Lines {
    /// Adds the chunks of one answer line to `out`; `Ok(true)` when it is
    /// the last (`done`).
    fn line(&mut self, v: &Value, out: &mut Vec<StreamChunk>) -> Result<bool, ModelError> {
        if v.get("error").is_some_and(|e| !e.is_null()) {
            let (message, code) = error_fields(v);
            let mut error = ModelError::new(ModelErrorKind::Server, message);
            error.code = code;
            return Err(error);
        }
        let message = v.get("message").unwrap_or(&Value::Null);
        let text = |key: &str| {
            message
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        if let Some(text) = text("thinking") {
            out.push(StreamChunk::ReasoningDelta { text });
        }
        if let Some(text) = text("content") {
            out.push(StreamChunk::TextDelta { text });
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let function = call.get("function").unwrap_or(&Value::Null);
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "{}".into(),
                Some(other) => other.to_string(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map_or_else(
                    || format!("call_{}", uuid::Uuid::new_v4().simple()),
                    str::to_owned,
                );
            out.push(StreamChunk::ToolCallDelta {
                index: self.calls,
                id: Some(id),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                arguments,
            });
            self.calls += 1;
        }
        if v.get("done").and_then(Value::as_bool) != Some(true) {
            return Ok(false);
        }
        let count = |key: &str| v.get(key).and_then(Value::as_u64);
        let usage =
            (count("prompt_eval_count").is_some() || count("eval_count").is_some()).then(|| {
                let (input, output) = (
                    count("prompt_eval_count").unwrap_or(0),
                    count("eval_count").unwrap_or(0),
                );
                Usage {
                    input_tokens: input,
                    output_tokens: output,
                    total_tokens: input.saturating_add(output),
                    ..Usage::default()
                }
            });
        let reason = match v.get("done_reason").and_then(Value::as_str) {
            Some("length") => FinishReason::Length,
            _ if self.calls > 0 => FinishReason::ToolCalls,
            None | Some("stop") => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        out.push(StreamChunk::Finish { reason, usage });
        Ok(true)
    }
}

impl nodekit_http::StreamParser for Lines {
    fn event(
        &mut self,
        event: &nodekit_http::sse::SseEvent,
        out: &mut Vec<StreamChunk>,
    ) -> Result<bool, ModelError> {
        let value: Value = serde_json::from_str(&event.data).map_err(|e| {
            let shown = nodekit_core::error::shorten(&event.data, 200);
            protocol(format!("a streamed line is not JSON ({e}): {shown}"))
        })?;
        self.line(&value, out)
    }

    fn closed(&mut self) -> Result<StreamChunk, ModelError> {
        Err(protocol("the stream ended before the answer was done"))
    }
}
