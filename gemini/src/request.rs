//! The `generateContent` request body, built from nodekit's messages and
//! checked for what Gemini would refuse, before anything is sent.

use nodekit_core::message::{Content, ContentPart, Message, Role};
use nodekit_core::model::{
    CallOptions, ModelError, ModelErrorKind, ModelSettings, ResponseFormat, ToolChoice,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::config::GeminiConfig;

/// What every request of one model shares, read once from its settings.
#[derive(Debug)]
pub(crate) struct Shape {
    settings: ModelSettings,
    top_k: Option<u64>,
    thinking: Option<Value>,
    safety_settings: Vec<crate::SafetySetting>,
}

impl Shape {
    pub(crate) fn new(config: &GeminiConfig) -> Shape {
        let mut thinking = Map::new();
        if let Some(budget) = config.thinking_budget {
            thinking.insert("thinkingBudget".into(), json!(budget));
        }
        if config.include_thoughts {
            thinking.insert("includeThoughts".into(), json!(true));
        }
        Shape {
            settings: config.settings.clone(),
            top_k: config.top_k,
            thinking: (!thinking.is_empty()).then_some(Value::Object(thinking)),
            safety_settings: config.safety_settings.clone(),
        }
    }

    /// The JSON body for `messages`, or the reason Gemini would refuse it.
    pub(crate) fn body(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<bytes::Bytes, ModelError> {
        let mut system = Vec::new();
        let mut contents: Vec<Turn<'_>> = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            let at = At { index, message };
            match message.role {
                Role::System => {
                    for part in text_parts(&message.content, at)? {
                        system.push(part);
                    }
                }
                Role::Ai => push(&mut contents, "model", model_parts(at)?, at)?,
                Role::Tool => {
                    let name = called_name(messages, at)?;
                    let part = Part::FunctionResponse {
                        function_response: FunctionResponse {
                            name,
                            response: tool_response(&message.content),
                        },
                    };
                    push(&mut contents, "user", vec![part], at)?;
                }
                Role::Human | Role::Function | Role::Generic => {
                    push(&mut contents, "user", user_parts(&message.content, at)?, at)?;
                }
            }
        }
        if contents.is_empty() {
            return Err(refused(
                "the conversation has no message besides the system instruction",
            ));
        }
        let s = self.settings.merged(&options.overrides);
        let mut generation = Map::new();
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                generation.insert(key.into(), value);
            }
        };
        set("temperature", s.temperature.map(Value::from));
        set("topP", s.top_p.map(Value::from));
        set("topK", self.top_k.map(Value::from));
        set("maxOutputTokens", s.max_tokens.map(Value::from));
        set("presencePenalty", s.presence_penalty.map(Value::from));
        set("frequencyPenalty", s.frequency_penalty.map(Value::from));
        set(
            "stopSequences",
            (!options.stop.is_empty()).then(|| json!(options.stop)),
        );
        match &options.response_format {
            Some(ResponseFormat::JsonSchema { schema, .. }) => {
                set("responseMimeType", Some(json!("application/json")));
                set("responseJsonSchema", Some(schema.clone()));
            }
            Some(ResponseFormat::JsonObject) => {
                set("responseMimeType", Some(json!("application/json")))
            }
            _ => {}
        }
        set("thinkingConfig", self.thinking.clone());
        let declarations: Vec<Value> = options
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}))
            .collect();
        let body = Body {
            contents: contents
                .into_iter()
                .map(|t| Wire {
                    role: t.role,
                    parts: t.parts,
                })
                .collect(),
            system_instruction: (!system.is_empty()).then_some(SystemInstruction {
                role: "user",
                parts: system,
            }),
            tools: if declarations.is_empty() {
                Vec::new()
            } else {
                vec![json!({"functionDeclarations": declarations})]
            },
            tool_config: options.tool_choice.as_ref().map(|c| {
                let config = match c {
                    ToolChoice::Auto => json!({"mode": "AUTO"}),
                    ToolChoice::None => json!({"mode": "NONE"}),
                    ToolChoice::Required => json!({"mode": "ANY"}),
                    ToolChoice::Tool(name) => {
                        json!({"mode": "ANY", "allowedFunctionNames": [name]})
                    }
                };
                json!({"functionCallingConfig": config})
            }),
            safety_settings: &self.safety_settings,
            generation_config: (!generation.is_empty()).then_some(Value::Object(generation)),
        };
        serde_json::to_vec(&body)
            .map(bytes::Bytes::from)
            .map_err(|e| refused(format!("the request cannot be written as JSON: {e}")))
    }
}

/// A message of the conversation, for errors that name it.
#[derive(Clone, Copy)]
struct At<'a> {
    index: usize,
    message: &'a Message,
}

impl At<'_> {
    fn refuse(&self, what: impl std::fmt::Display) -> ModelError {
        let role = match self.message.role {
            Role::Ai => "an assistant message",
            Role::Tool => "a tool result",
            Role::System => "a system message",
            _ => "a user message",
        };
        refused(format!("message {} ({role}): {what}", self.index))
    }
}

fn refused(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::BadRequest, message)
}

struct Turn<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

/// Adds a message's parts to the last turn when it is of the same role,
/// else as a new turn.
fn push<'a>(
    turns: &mut Vec<Turn<'a>>,
    role: &'static str,
    parts: Vec<Part<'a>>,
    at: At<'_>,
) -> Result<(), ModelError> {
    if parts.is_empty() {
        return Err(at.refuse("it is empty, and Gemini takes no empty message"));
    }
    match turns.last_mut().filter(|t| t.role == role) {
        Some(turn) => turn.parts.extend(parts),
        None => turns.push(Turn { role, parts }),
    }
    Ok(())
}

/// The function a tool result answers: the name of the call with its id in
/// the assistant messages before it (Gemini matches results by name).
fn called_name<'a>(messages: &'a [Message], at: At<'a>) -> Result<&'a str, ModelError> {
    let id = at.message.tool_call_id.as_deref().unwrap_or_default();
    messages[..at.index]
        .iter()
        .rev()
        .filter(|m| m.role == Role::Ai)
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.id == id)
        .map(|c| c.name.as_str())
        .ok_or_else(|| {
            at.refuse(format_args!(
                "the functionResponse for `{id}` answers no functionCall of the messages before it"
            ))
        })
}

/// A tool's output as Gemini's `response` object: a JSON object as it is,
/// anything else under `result`.
fn tool_response(content: &Content) -> Value {
    let text = content.text();
    match serde_json::from_str::<Value>(&text) {
        Ok(object @ Value::Object(_)) => object,
        Ok(other) => json!({"result": other}),
        Err(_) => json!({"result": text}),
    }
}

fn text_parts<'a>(content: &'a Content, at: At<'_>) -> Result<Vec<Part<'a>>, ModelError> {
    let mut parts = Vec::new();
    match content {
        Content::Text(text) => parts.extend(text_part(text)),
        Content::Parts(list) => {
            for (n, part) in list.iter().enumerate() {
                match part {
                    ContentPart::Text { text, .. } => parts.extend(text_part(text)),
                    other => {
                        return Err(at.refuse(format_args!(
                            "block {n} is {}, and a system instruction holds only text",
                            describe(other)
                        )));
                    }
                }
            }
        }
    }
    Ok(parts)
}

fn text_part(text: &str) -> Option<Part<'_>> {
    (!text.is_empty()).then_some(Part::Text {
        text,
        thought_signature: None,
    })
}

fn user_parts<'a>(content: &'a Content, at: At<'_>) -> Result<Vec<Part<'a>>, ModelError> {
    let Content::Parts(list) = content else {
        return text_parts(content, at);
    };
    let mut parts = Vec::new();
    for (n, part) in list.iter().enumerate() {
        match part {
            ContentPart::Text { text, .. } => parts.extend(text_part(text)),
            ContentPart::ImageUrl { image_url } => parts.push(
                media(&image_url.url, None)
                    .map_err(|why| at.refuse(format_args!("block {n} (an image): {why}")))?,
            ),
            ContentPart::File { file } => parts.push(
                media(&file.url, file.mime_type.as_deref())
                    .map_err(|why| at.refuse(format_args!("block {n} (a document): {why}")))?,
            ),
            ContentPart::Other(_) => {
                return Err(at.refuse(format_args!(
                    "block {n} is {}, which Gemini does not take",
                    describe(part)
                )));
            }
            other => {
                return Err(at.refuse(format_args!(
                    "block {n} is {}, which only an assistant message holds",
                    describe(other)
                )));
            }
        }
    }
    Ok(parts)
}

/// An image or document: inline from a base64 `data:` URL, or by URI
/// with its media type (given, or told from the name).
fn media<'a>(url: &'a str, mime_type: Option<&'a str>) -> Result<Part<'a>, String> {
    if let Some(rest) = url.strip_prefix("data:") {
        let (head, data) = rest.split_once(',').ok_or("its `data:` URL has no data")?;
        let mime_type = head
            .strip_suffix(";base64")
            .ok_or("its `data:` URL is not base64")?;
        return Ok(Part::InlineData {
            inline_data: Blob { mime_type, data },
        });
    }
    if url.starts_with("https://") || url.starts_with("http://") || url.starts_with("gs://") {
        // Gemini needs the type of a file it fetches.
        let mime_type = mime_type.or_else(|| mime_of(url)).ok_or(
            "its type cannot be told from its URL; give its `mime_type`, or send it as a base64 `data:` URL",
        )?;
        return Ok(Part::FileData {
            file_data: FileData {
                mime_type,
                file_uri: url,
            },
        });
    }
    Err("its URL is neither http(s), gs:// nor a base64 `data:` URL".into())
}

fn mime_of(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next()?.to_ascii_lowercase();
    let ext = path.rsplit('.').next()?;
    Some(match ext {
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "txt" => "text/plain",
        _ => return None,
    })
}

/// An assistant message's parts: its text and function calls, and its
/// first thought signature on the first call (else on the last text).
fn model_parts(at: At<'_>) -> Result<Vec<Part<'_>>, ModelError> {
    let mut parts = Vec::new();
    let mut signature = None;
    match &at.message.content {
        Content::Text(text) => parts.extend(text_part(text)),
        Content::Parts(list) => {
            for (n, part) in list.iter().enumerate() {
                match part {
                    ContentPart::Text { text, .. } => parts.extend(text_part(text)),
                    ContentPart::Thinking { signature: s, .. } => {
                        if signature.is_none() {
                            signature = s.as_deref();
                        }
                    }
                    // Another provider's encrypted reasoning means nothing to Gemini.
                    ContentPart::RedactedThinking { .. } => {}
                    other => {
                        return Err(at.refuse(format_args!(
                            "block {n} is {}, and Gemini takes none from the model",
                            describe(other)
                        )));
                    }
                }
            }
        }
    }
    let text_parts = parts.len();
    for call in &at.message.tool_calls {
        if !call.args.is_object() {
            return Err(at.refuse(format_args!(
                "the functionCall `{}` ({}) has arguments that are not a JSON object",
                call.id, call.name
            )));
        }
        parts.push(Part::FunctionCall {
            function_call: FunctionCall {
                name: &call.name,
                args: &call.args,
            },
            thought_signature: None,
        });
    }
    if let Some(signature) = signature {
        let target = if parts.len() > text_parts {
            text_parts
        } else {
            parts.len().saturating_sub(1)
        };
        match parts.get_mut(target) {
            Some(
                Part::FunctionCall {
                    thought_signature, ..
                }
                | Part::Text {
                    thought_signature, ..
                },
            ) => {
                *thought_signature = Some(signature);
            }
            // Only a signature: Gemini takes it on an empty text part.
            _ => parts.push(Part::Text {
                text: "",
                thought_signature: Some(signature),
            }),
        }
    }
    Ok(parts)
}

fn describe(part: &ContentPart) -> std::borrow::Cow<'static, str> {
    std::borrow::Cow::Borrowed(match part {
        ContentPart::Text { .. } => "text",
        ContentPart::ImageUrl { .. } => "an image",
        ContentPart::File { .. } => "a document",
        ContentPart::Thinking { .. } => "a thinking block",
        ContentPart::RedactedThinking { .. } => "a redacted_thinking block",
        other => return format!("a `{}` block", other.kind()).into(),
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    contents: Vec<Wire<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<Value>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    safety_settings: &'a [crate::SafetySetting],
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<Value>,
}

/// The system instruction: a `user` content, as Google's SDK sends it.
#[derive(Serialize)]
struct SystemInstruction<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Serialize)]
struct Wire<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

/// A part of a request's content.
#[derive(Serialize)]
#[serde(untagged)]
enum Part<'a> {
    #[serde(rename_all = "camelCase")]
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    #[serde(rename_all = "camelCase")]
    InlineData { inline_data: Blob<'a> },
    #[serde(rename_all = "camelCase")]
    FileData { file_data: FileData<'a> },
    #[serde(rename_all = "camelCase")]
    FunctionCall {
        function_call: FunctionCall<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    #[serde(rename_all = "camelCase")]
    FunctionResponse {
        function_response: FunctionResponse<'a>,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Blob<'a> {
    mime_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileData<'a> {
    mime_type: &'a str,
    file_uri: &'a str,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    args: &'a Value,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    name: &'a str,
    response: Value,
}
