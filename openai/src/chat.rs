//! The OpenAI-compatible chat model: `/chat/completions`, plain and
//! streamed, against OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
//! llama.cpp's server or LiteLLM.
//!
//! Servers differ, so reading is tolerant: `role`, `content` and
//! `tool_calls` may each be missing from a delta; content may be null, empty
//! or a list of parts; tool calls come by index, by order, whole or in
//! fragments, with arguments as JSON text or as an object; usage may come on
//! any chunk or not at all; unknown fields are ignored; errors come in any of
//! the shapes providers use, also as a JSON body or mid-stream.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::message::{Citation, Content, ContentPart, Message, Role, Usage};
use nodekit_core::model::{
    BoxFuture, CallOptions, ChatModel, ChunkStream, FinishReason, ModelError, ModelErrorKind,
    ModelSettings, ResponseFormat, StreamAccumulator, StreamChunk, ToolChoice,
};
use nodekit_http::{Authenticate, Bearer, HeaderKey, Transport, TransportBuilder, error_fields};

pub use crate::responses::OpenAiResponsesModel;

/// Settings of an OpenAI-compatible chat model (the AI Node SDK's `openaiCompatible` options).
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiConfig {
    /// The API key (sent as a bearer token, or as `api-key` for Azure).
    pub api_key: String,
    /// The model, e.g. `gpt-4o-mini`; for Azure the deployment's model.
    pub model: String,
    /// API root: `https://api.openai.com/v1` (default), `http://localhost:11434/v1`
    /// for Ollama, or for Azure the deployment URL
    /// `https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT`.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Sampling settings.
    #[serde(default, flatten)]
    pub settings: ModelSettings,
    /// Seconds to wait for a connection, and between reads (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 5xx or a broken connection (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Set for Azure OpenAI: the `api-version` query parameter.
    #[serde(default)]
    pub azure_api_version: Option<String>,
    /// Largest answer accepted, in bytes (default 32 MiB).
    #[serde(default = "default_max_bytes")]
    pub max_response_bytes: usize,
    /// Ask for token usage on streams (`stream_options.include_usage`, default
    /// on); a server that refuses the option is asked again without it.
    #[serde(default = "default_true")]
    pub stream_usage: bool,
    /// Fields merged into every request body beyond those nodekit sets,
    /// as the OpenAI SDKs' `extra_body`: what a provider reads besides
    /// OpenAI's own (`reasoning_effort`, Mistral's `safe_prompt`, a default
    /// `response_format`). A field the call sets itself keeps the call's value.
    #[serde(default)]
    pub extra_body: serde_json::Map<String, Value>,
    /// Which of OpenAI's APIs the model is called through (default chat
    /// completions).
    #[serde(default)]
    pub api: OpenAiApi,
    /// OpenAI's own tools (`{"type": "web_search"}`, `file_search`,
    /// `code_interpreter`), added to every request of the Responses API;
    /// they run on OpenAI's side.
    #[serde(default)]
    pub hosted_tools: Vec<Value>,
    /// How requests authenticate instead of by `api_key` (a bearer token,
    /// or `api-key` for Azure): any scheme a server needs, such as a header
    /// of its own or a signature ([`OpenAiConfig::auth`]).
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

/// Which of OpenAI's APIs a model is called through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum OpenAiApi {
    /// `/chat/completions`, which every OpenAI-compatible server speaks
    /// ([`OpenAiChatModel`]).
    #[default]
    ChatCompletions,
    /// `/responses`, OpenAI's newer API
    /// ([`OpenAiResponsesModel`]).
    Responses,
}

fn default_true() -> bool {
    true
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("api_key", &"***")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("settings", &self.settings)
            .field("timeout_secs", &self.timeout_secs)
            .field("max_retries", &self.max_retries)
            .field("azure_api_version", &self.azure_api_version)
            .field("extra_body", &self.extra_body)
            .field("api", &self.api)
            .field("authenticate", &self.authenticate)
            .finish_non_exhaustive()
    }
}

/// OpenAI's API root.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

fn default_base_url() -> String {
    OPENAI_BASE_URL.into()
}
fn default_timeout() -> f64 {
    60.0
}
fn default_retries() -> u32 {
    2
}
fn default_max_bytes() -> usize {
    32 * 1024 * 1024
}

impl OpenAiConfig {
    /// Settings for `model` with `api_key` and every default.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            api_key: api_key.into(),
            model: model.into(),
            base_url: default_base_url(),
            settings: ModelSettings::default(),
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            headers: Vec::new(),
            azure_api_version: None,
            max_response_bytes: default_max_bytes(),
            stream_usage: true,
            extra_body: serde_json::Map::new(),
            api: OpenAiApi::default(),
            hosted_tools: Vec::new(),
            authenticate: None,
        }
    }

    /// The same settings with another API root.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The same settings, requests authenticated by `auth` instead of by
    /// the API key.
    pub fn auth(mut self, auth: impl Authenticate + 'static) -> Self {
        self.authenticate = Some(Arc::new(auth));
        self
    }
}

/// The transport to an OpenAI-compatible server at `base_url`,
/// authenticated by `authenticate` when set, else by `api_key` as a bearer
/// token or, with an Azure `api-version` (then sent in every query), as
/// `api-key`.
pub(crate) fn transport(
    base_url: String,
    api_key: &str,
    azure_api_version: Option<String>,
    authenticate: Option<Arc<dyn Authenticate>>,
) -> Result<TransportBuilder> {
    let auth: Arc<dyn Authenticate> = match (authenticate, &azure_api_version) {
        (Some(auth), _) => auth,
        (None, Some(_)) => Arc::new(HeaderKey::new("api-key", api_key)?),
        (None, None) => Arc::new(Bearer(api_key.to_owned())),
    };
    let builder = Transport::builder(base_url, auth);
    Ok(match azure_api_version {
        Some(version) => builder.query("api-version", version),
        None => builder,
    })
}

/// The transport of a client for `config`.
pub(crate) fn client_transport(config: &OpenAiConfig) -> Result<Transport> {
    let timeout = nodekit_http::timeout_secs(config.timeout_secs)?;
    Ok(transport(
        config.base_url.clone(),
        &config.api_key,
        config.azure_api_version.clone(),
        config.authenticate.clone(),
    )?
    .headers(config.headers.clone())
    .timeout(timeout)
    .max_retries(config.max_retries)
    .max_response_bytes(config.max_response_bytes)
    .build()?)
}

/// `request` as JSON bytes, with the fields of `extra` it does not set,
/// written before its closing brace (the conversation is not copied into a
/// JSON tree to merge them).
pub(crate) fn body_with_extra(
    request: &impl Serialize,
    extra: &serde_json::Map<String, Value>,
) -> bytes::Bytes {
    let Ok(mut body) = serde_json::to_vec(request) else {
        return bytes::Bytes::new();
    };
    if extra.is_empty() {
        return body.into();
    }
    let own: std::collections::HashMap<String, serde::de::IgnoredAny> =
        serde_json::from_slice(&body).unwrap_or_default();
    if body.pop() != Some(b'}') {
        return bytes::Bytes::new();
    }
    for (key, value) in extra.iter().filter(|(key, _)| !own.contains_key(*key)) {
        if body.len() > 1 {
            body.push(b',');
        }
        // A string key and a JSON value always serialize.
        let _ = serde_json::to_writer(&mut body, key);
        body.push(b':');
        let _ = serde_json::to_writer(&mut body, value);
    }
    body.push(b'}');
    body.into()
}

/// `ctx.create_chat_model(config)` makes an [`OpenAiChatModel`], or with
/// [`OpenAiApi::Responses`] an [`OpenAiResponsesModel`].
impl nodekit_core::node::IntoChatModel for OpenAiConfig {
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>> {
        match self.api {
            OpenAiApi::ChatCompletions => Ok(Arc::new(OpenAiChatModel::new(self)?)),
            OpenAiApi::Responses => crate::responses::into_chat_model(self),
        }
    }
}

/// A chat model behind an OpenAI-compatible API.
#[derive(Debug, Clone)]
pub struct OpenAiChatModel {
    model: String,
    settings: ModelSettings,
    stream_usage: bool,
    extra_body: serde_json::Map<String, Value>,
    transport: Transport,
}

impl OpenAiChatModel {
    /// A client for `config`. Fails only if the HTTP client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        let transport = client_transport(&config)?;
        Ok(OpenAiChatModel {
            model: config.model,
            settings: config.settings,
            stream_usage: config.stream_usage,
            extra_body: config.extra_body,
            transport,
        })
    }

    /// The request body for `messages`, as JSON bytes (built once per call,
    /// reused by retries; borrowed, so tool schemas are not copied).
    pub fn request_body(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
    ) -> bytes::Bytes {
        self.request_body_with(messages, options, stream, self.stream_usage)
    }

    fn request_body_with(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
        usage: bool,
    ) -> bytes::Bytes {
        let s = self.settings.merged(&options.overrides);
        let request = WireRequest {
            model: &self.model,
            messages: messages.iter().map(WireMessage::from).collect(),
            temperature: s.temperature,
            max_tokens: s.max_tokens,
            top_p: s.top_p,
            frequency_penalty: s.frequency_penalty,
            presence_penalty: s.presence_penalty,
            stop: &options.stop,
            tools: options
                .tools
                .iter()
                .map(|t| WireTool {
                    kind: "function",
                    function: WireFunction {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
            tool_choice: options.tool_choice.as_ref().map(|c| match c {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            }),
            response_format: options.response_format.as_ref().map(|f| match f {
                ResponseFormat::Text => json!({"type": "text"}),
                ResponseFormat::JsonObject => json!({"type": "json_object"}),
                ResponseFormat::JsonSchema { name, schema, strict } => {
                    json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}})
                }
            }),
            stream: stream.then_some(true),
            stream_options: (stream && usage).then(|| json!({"include_usage": true})),
        };
        body_with_extra(&request, &self.extra_body)
    }

    async fn invoke_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<Message, ModelError> {
        check_parts(messages, OpenAiApi::ChatCompletions)?;
        let body = self.request_body(messages, options, false);
        let cancel = options.cancel.as_ref();
        let response = self
            .transport
            .post("chat/completions", &body, cancel, true)
            .await?;
        parse_completion(&self.transport.read_json(response, cancel).await?)
    }

    async fn stream_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChunkStream, ModelError> {
        check_parts(messages, OpenAiApi::ChatCompletions)?;
        let cancel = options.cancel.clone();
        let with_usage = self.request_body(messages, options, true);
        let response = match self
            .transport
            .post("chat/completions", &with_usage, cancel.as_ref(), false)
            .await
        {
            // Servers that do not know `stream_options` refuse the request: ask again without it.
            Err(e)
                if e.kind == ModelErrorKind::BadRequest && e.message.contains("stream_options") =>
            {
                let body = self.request_body_with(messages, options, true, false);
                self.transport
                    .post("chat/completions", &body, cancel.as_ref(), false)
                    .await?
            }
            other => other?,
        };
        self.transport
            .answer_stream(response, cancel, StreamState::default(), parse_completion)
            .await
    }
}

impl ChatModel for OpenAiChatModel {
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

/// OpenAI's request body, borrowing from the caller.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// A message in OpenAI's request form.
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'a str,
    /// Text, parts, or null (an assistant turn that only calls tools, as OpenAI's SDK sends it).
    content: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
}

impl<'a> From<&'a Message> for WireMessage<'a> {
    fn from(m: &'a Message) -> Self {
        let role = match m.role {
            Role::Human => "user",
            Role::Ai => "assistant",
            Role::System => "system",
            Role::Function => "function",
            Role::Tool => "tool",
            // Sent as it is, as LangChain sends a `ChatMessage`'s role.
            Role::Generic => m.chat_role.as_deref().unwrap_or("user"),
        };
        let content = WireContent::of(&m.content);
        let calls_only = m.role == Role::Ai && !m.tool_calls.is_empty() && content.is_empty();
        WireMessage {
            role,
            content: (!calls_only).then_some(content),
            // OpenAI's tool message has no `name`, and strict gateways
            // refuse fields a message does not document.
            name: m.name.as_deref().filter(|_| m.role != Role::Tool),
            tool_call_id: m.tool_call_id.as_deref(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args.to_string()}}))
                .collect(),
        }
    }
}

/// Content as OpenAI takes it: text as it is; of parts, the text (without
/// citations), images and documents (as `file` parts, a `data:` URL as
/// `file_data`), without the reasoning another provider gave (OpenAI takes
/// none back). Parts of which nothing is left are sent as empty text;
/// [`check_parts`] refuses the ones OpenAI cannot take first.
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<&'a ContentPart>),
}

impl<'a> WireContent<'a> {
    fn of(content: &'a Content) -> Self {
        match content {
            Content::Text(text) => WireContent::Text(text),
            Content::Parts(parts) => WireContent::Parts(
                parts
                    .iter()
                    .filter(|p| {
                        !matches!(
                            p,
                            ContentPart::Thinking { .. } | ContentPart::RedactedThinking { .. }
                        )
                    })
                    .collect(),
            ),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            WireContent::Text(text) => text.is_empty(),
            WireContent::Parts(parts) => parts.is_empty(),
        }
    }
}

impl Serialize for WireContent<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let parts = match self {
            WireContent::Text(text) => return serializer.serialize_str(text),
            WireContent::Parts(parts) if parts.is_empty() => return serializer.serialize_str(""),
            WireContent::Parts(parts) => parts,
        };
        let mut seq = serializer.serialize_seq(Some(parts.len()))?;
        for part in parts {
            match part {
                ContentPart::Text { text, .. } => {
                    seq.serialize_element(&json!({"type": "text", "text": text}))?
                }
                ContentPart::File { file } => {
                    let mut wire = json!({"file_data": file.url});
                    if let Some(name) = &file.filename {
                        wire["filename"] = json!(name);
                    }
                    seq.serialize_element(&json!({"type": "file", "file": wire}))?;
                }
                other => seq.serialize_element(other)?,
            }
        }
        seq.end()
    }
}

/// Refuses, before the request, the parts OpenAI's `api` does not take:
/// blocks of kinds nodekit kept from another provider, and (the Chat
/// Completions API, which takes them inline only) a document by address.
pub(crate) fn check_parts(messages: &[Message], api: OpenAiApi) -> Result<(), ModelError> {
    let name = match api {
        OpenAiApi::ChatCompletions => "the Chat Completions API",
        OpenAiApi::Responses => "the Responses API",
    };
    for (index, message) in messages.iter().enumerate() {
        let Content::Parts(parts) = &message.content else {
            continue;
        };
        for (n, part) in parts.iter().enumerate() {
            let why = match part {
                ContentPart::File { file }
                    if api == OpenAiApi::ChatCompletions && !file.url.starts_with("data:") =>
                {
                    format!(
                        "a document by address, and {name} takes documents only as base64 `data:` URLs"
                    )
                }
                ContentPart::Other(_) => {
                    format!("a `{}` block, which {name} does not take", part.kind())
                }
                _ => continue,
            };
            return Err(ModelError::new(
                ModelErrorKind::BadRequest,
                format!("message {index}: block {n} is {why}"),
            ));
        }
    }
    Ok(())
}

pub(crate) fn protocol(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::Protocol, message)
}

/// An error object inside a 200 answer or an event.
pub(crate) fn embedded_error(v: &Value) -> Option<ModelError> {
    let e = v.get("error").filter(|e| !e.is_null())?;
    let (message, code) = error_fields(v);
    let status = e
        .get("status")
        .or_else(|| e.get("code"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..600).contains(s));
    let kind = match status {
        Some(429) => ModelErrorKind::RateLimited,
        Some(401 | 403) => ModelErrorKind::Auth,
        Some(400..=499) => ModelErrorKind::BadRequest,
        _ => ModelErrorKind::Server,
    };
    let mut error = ModelError::new(kind, message);
    error.status = status;
    error.code = code;
    Some(error)
}

/// Reads a whole (non-streamed) completion.
fn parse_completion(v: &Value) -> Result<Message, ModelError> {
    if let Some(e) = embedded_error(v) {
        return Err(e);
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| {
            protocol(format!(
                "the answer has no choices: {}",
                nodekit_core::error::shorten(&v.to_string(), 200)
            ))
        })?;
    let m = choice
        .get("message")
        .or_else(|| choice.get("delta"))
        .unwrap_or(&Value::Null);
    let mut acc = StreamAccumulator::default();
    let mut state = DeltaState {
        whole: true,
        ..DeltaState::default()
    };
    let mut chunks = Vec::new();
    state.delta(m, &mut chunks);
    for c in &chunks {
        acc.push(c);
    }
    if let Some(u) = v.get("usage").and_then(parse_usage) {
        acc.set_usage(u);
    }
    let mut message = acc.into_message();
    message.id = v.get("id").and_then(Value::as_str).map(str::to_owned);
    if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
        message
            .additional_kwargs
            .insert("finish_reason".into(), Value::from(reason));
    }
    Ok(message)
}

/// OpenAI's usage object (or the `input_tokens` / `output_tokens` spelling).
pub(crate) fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| u.pointer(k).and_then(Value::as_u64))
    };
    let input = n(&["/prompt_tokens", "/input_tokens"]).unwrap_or(0);
    let output = n(&["/completion_tokens", "/output_tokens"]).unwrap_or(0);
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: n(&["/total_tokens"]).unwrap_or(input.saturating_add(output)),
        cache_read_tokens: n(&[
            "/prompt_tokens_details/cached_tokens",
            "/input_tokens_details/cached_tokens",
        ]),
        cache_creation_tokens: None,
        reasoning_tokens: n(&[
            "/completion_tokens_details/reasoning_tokens",
            "/output_tokens_details/reasoning_tokens",
        ]),
    })
}

/// Tool-call bookkeeping across deltas. Calls without `index` are placed by
/// order: in a whole message by position; in a stream, a new id or a new
/// name starts a call, and a fragment with neither continues the last one.
#[derive(Debug, Default)]
struct DeltaState {
    /// Reading a whole message rather than a stream's deltas.
    whole: bool,
    calls: usize,
    last_index: Option<usize>,
    last_id: Option<String>,
}

/// Most tool calls read from one answer; more is a malformed answer.
const MAX_TOOL_CALLS: usize = 1024;

impl DeltaState {
    fn delta(&mut self, d: &Value, out: &mut Vec<StreamChunk>) {
        if let Some(text) = d
            .get("content")
            .and_then(content_text)
            .filter(|t| !t.is_empty())
        {
            out.push(StreamChunk::TextDelta { text });
        }
        // A refusal is the model's answer, in OpenAI's separate field.
        if let Some(text) = d
            .get("refusal")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(StreamChunk::TextDelta {
                text: text.to_owned(),
            });
        }
        // Web search models' sources, `{"type": "url_citation",
        // "url_citation": {"url", "title", "start_index", "end_index"}}`,
        // cite the text so far.
        if let Some(Value::Array(annotations)) = d.get("annotations") {
            let citations: Vec<Citation> = annotations
                .iter()
                .filter_map(|a| {
                    let kind = a.get("type")?.as_str()?;
                    let mut citation = Citation::new(kind);
                    if let Some(Value::Object(fields)) = a.get(kind) {
                        citation.fields = fields.clone();
                    }
                    Some(citation)
                })
                .collect();
            if !citations.is_empty() {
                out.push(StreamChunk::TextEnd { citations });
            }
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = d.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()) {
                out.push(StreamChunk::ReasoningDelta {
                    text: text.to_owned(),
                });
            }
        }
        let calls = match d.get("tool_calls") {
            Some(Value::Array(calls)) => calls.clone(),
            _ => match d.get("function_call") {
                Some(f @ Value::Object(_)) => vec![json!({"function": f})],
                _ => Vec::new(),
            },
        };
        for (position, call) in calls.iter().enumerate() {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            let function = call.get("function").unwrap_or(&Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            let index = match call.get("index").and_then(Value::as_u64) {
                Some(i) => usize::try_from(i).unwrap_or(usize::MAX),
                None if self.whole => position,
                None => match (&id, &name, self.last_index) {
                    (Some(id), _, Some(last)) if self.last_id.as_ref() == Some(id) => last,
                    (None, None, Some(last)) => last,
                    _ => self.calls,
                },
            };
            if index >= MAX_TOOL_CALLS {
                continue;
            }
            self.calls = self.calls.max(index + 1);
            self.last_index = Some(index);
            if id.is_some() {
                self.last_id.clone_from(&id);
            }
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            out.push(StreamChunk::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            });
        }
    }
}

/// Text of a `content` that is a string or a list of parts; null is `None`.
fn content_text(c: &Value) -> Option<String> {
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    }
}

/// Reads an event stream, one chunk of model output at a time
/// ([`Transport::chunk_stream`]).
#[derive(Default)]
struct StreamState {
    deltas: DeltaState,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    saw_tool_calls: bool,
}

impl nodekit_http::StreamParser for StreamState {
    /// Turns an event into chunks, up to `[DONE]` or an error.
    fn event(
        &mut self,
        event: &nodekit_http::sse::SseEvent,
        out: &mut Vec<StreamChunk>,
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            out.push(self.finish());
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            let shown = nodekit_core::error::shorten(data, 200);
            protocol(format!("a streamed event is not JSON ({e}): {shown}"))
        })?;
        let error = embedded_error(&value).or_else(|| {
            (event.event.as_deref() == Some("error")).then(|| {
                let (message, code) = error_fields(&value);
                let mut error = ModelError::new(ModelErrorKind::Server, message);
                error.code = code;
                error
            })
        });
        if let Some(e) = error {
            return Err(e);
        }
        if let Some(u) = value.get("usage").and_then(parse_usage) {
            self.usage = Some(u);
        }
        let Some(choices) = value.get("choices").and_then(Value::as_array) else {
            return Ok(false);
        };
        let first = |c: &&Value| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0;
        for choice in choices.iter().filter(first) {
            let before = out.len();
            if let Some(d) = choice.get("delta").or_else(|| choice.get("message")) {
                self.deltas.delta(d, out);
            }
            self.saw_tool_calls |= out[before..]
                .iter()
                .any(|c| matches!(c, StreamChunk::ToolCallDelta { .. }));
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(FinishReason::parse(r));
            }
        }
        Ok(false)
    }

    /// The server closed the stream, with or without `[DONE]`.
    fn closed(&mut self) -> Result<StreamChunk, ModelError> {
        Ok(self.finish())
    }
}

impl StreamState {
    /// The `Finish` chunk; usage may have come after the finish reason.
    fn finish(&mut self) -> StreamChunk {
        let fallback = if self.saw_tool_calls {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        StreamChunk::Finish {
            reason: self.finish.take().unwrap_or(fallback),
            usage: self.usage,
        }
    }
}
