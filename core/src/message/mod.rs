//! Chat messages: roles, content (text or parts), tool calls and usage, in
//! nodekit's own JSON form (the field names of the AI Node SDK's `N8nMessage`) and in the
//! stored form LangChain and n8n persist (`{"type": "human", "data": {...}}`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

mod content;

pub use content::{Citation, Content, ContentPart, FileUrl, ImageUrl, data_url};

use crate::error::{Error, Result, describe_value, quoted};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    #[default]
    Human,
    /// The model.
    Ai,
    /// Instructions to the model.
    System,
    /// A function result (OpenAI's legacy function calling).
    Function,
    /// A tool result.
    Tool,
    /// A free role (LangChain's `ChatMessage`, stored as type `generic`):
    /// the role's name is in [`Message::chat_role`].
    Generic,
}

impl Role {
    /// The name LangChain stores (`human`, `ai`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Human => "human",
            Role::Ai => "ai",
            Role::System => "system",
            Role::Function => "function",
            Role::Tool => "tool",
            Role::Generic => "generic",
        }
    }
}

/// A tool call the model asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Identifier the tool result must echo.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as a JSON object.
    pub args: Value,
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model generated.
    pub output_tokens: u64,
    /// Both together.
    pub total_tokens: u64,
    /// Input tokens served from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Input tokens written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_tokens: Option<u64>,
    /// Output tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Adds another call's counts to these.
    pub fn add(&mut self, other: &Usage) {
        // Counts come from servers: saturate rather than overflow.
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.cache_read_tokens = sum(self.cache_read_tokens, other.cache_read_tokens);
        self.cache_creation_tokens = sum(self.cache_creation_tokens, other.cache_creation_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
    }
}

/// One chat message, in nodekit's JSON form (the AI Node SDK's `N8nMessage`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    #[serde(default)]
    pub content: Content,
    /// Name of the author, function or tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For tool results: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For AI messages: the tools the model calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Provider-specific extras, kept as they came.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub additional_kwargs: Map<String, Value>,
    /// For AI messages: token counts of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Provider's message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// For [`Role::Generic`] messages: the role's name, e.g. `critic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_role: Option<String>,
}

impl Message {
    fn with(role: Role, content: impl Into<Content>) -> Self {
        Message {
            role,
            content: content.into(),
            ..Message::default()
        }
    }

    /// A user message.
    pub fn human(content: impl Into<Content>) -> Self {
        Self::with(Role::Human, content)
    }

    /// A model message.
    pub fn ai(content: impl Into<Content>) -> Self {
        Self::with(Role::Ai, content)
    }

    /// A system message.
    pub fn system(content: impl Into<Content>) -> Self {
        Self::with(Role::System, content)
    }

    /// A tool result answering call `tool_call_id`.
    pub fn tool(content: impl Into<Content>, tool_call_id: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            ..Self::with(Role::Tool, content)
        }
    }

    /// A message with a free role (LangChain's `ChatMessage`), e.g.
    /// `Message::chat("critic", "Too long.")`.
    pub fn chat(role: impl Into<String>, content: impl Into<Content>) -> Self {
        Message {
            chat_role: Some(role.into()),
            ..Self::with(Role::Generic, content)
        }
    }

    /// A function result.
    pub fn function(content: impl Into<Content>, name: impl Into<String>) -> Self {
        Message {
            name: Some(name.into()),
            ..Self::with(Role::Function, content)
        }
    }

    /// The text of the content.
    pub fn text(&self) -> String {
        self.content.text()
    }

    /// The model's reasoning: its [`ContentPart::Thinking`] parts joined,
    /// or the `reasoning_content` an OpenAI-compatible server sent
    /// (DeepSeek, vLLM), kept in [`additional_kwargs`](Self::additional_kwargs).
    pub fn reasoning(&self) -> Option<String> {
        if let Content::Parts(parts) = &self.content {
            let thinking: String = parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Thinking { thinking, .. } => Some(thinking.as_str()),
                    _ => None,
                })
                .collect();
            if !thinking.is_empty() {
                return Some(thinking);
            }
        }
        self.additional_kwargs
            .get("reasoning_content")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
    }

    /// LangChain's stored form: `{"type": "human", "data": {...}}`.
    pub fn to_stored(&self) -> Value {
        let mut data = Map::new();
        data.insert(
            "content".into(),
            serde_json::to_value(&self.content).unwrap_or(Value::Null),
        );
        if let Some(name) = &self.name {
            data.insert("name".into(), Value::from(name.as_str()));
        }
        if let Some(id) = &self.tool_call_id {
            data.insert("tool_call_id".into(), Value::from(id.as_str()));
        }
        if let Some(id) = &self.id {
            data.insert("id".into(), Value::from(id.as_str()));
        }
        if self.role == Role::Generic {
            let role = self.chat_role.as_deref().unwrap_or_default();
            data.insert("role".into(), Value::from(role));
        }
        if self.role == Role::Ai {
            // As LangChain's OpenAI parser writes them (the key order shows
            // in `getBufferString`).
            let calls = self
                .tool_calls
                .iter()
                .map(|c| json!({"name": c.name, "args": c.args, "type": "tool_call", "id": c.id}))
                .collect();
            data.insert("tool_calls".into(), Value::Array(calls));
            if let Some(u) = &self.usage {
                let mut usage = json!({
                    "input_tokens": u.input_tokens,
                    "output_tokens": u.output_tokens,
                    "total_tokens": u.total_tokens,
                });
                let mut input = Map::new();
                if let Some(c) = u.cache_read_tokens {
                    input.insert("cache_read".into(), c.into());
                }
                if let Some(c) = u.cache_creation_tokens {
                    input.insert("cache_creation".into(), c.into());
                }
                if !input.is_empty() {
                    usage["input_token_details"] = Value::Object(input);
                }
                if let Some(r) = u.reasoning_tokens {
                    usage["output_token_details"] = json!({"reasoning": r});
                }
                data.insert("usage_metadata".into(), usage);
            }
            data.insert("invalid_tool_calls".into(), json!([]));
        }
        data.insert(
            "additional_kwargs".into(),
            Value::Object(self.additional_kwargs.clone()),
        );
        data.insert("response_metadata".into(), json!({}));
        json!({"type": self.role.as_str(), "data": data})
    }

    /// Reads LangChain's stored form, including messages older LangChain
    /// versions wrote with tool calls only in `additional_kwargs.tool_calls`
    /// (OpenAI's form, arguments as JSON text).
    pub fn from_stored(stored: &Value) -> Result<Message> {
        let bad = |why: &str| Error::InvalidMessage {
            reason: format!("{why}; got {}", describe_value(stored)),
        };
        let kind = stored
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a stored message needs a string `type`"))?;
        let role = match kind {
            "human" | "user" => Role::Human,
            "ai" | "assistant" => Role::Ai,
            "system" | "developer" => Role::System,
            "function" => Role::Function,
            "tool" => Role::Tool,
            "generic" => Role::Generic,
            other => return Err(bad(&format!("unknown message type `{}`", quoted(other)))),
        };
        let data = stored
            .get("data")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("a stored message needs a `data` object"))?;
        let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_owned);
        // LangChain refuses a chat message without its role, too.
        let chat_role = match role {
            Role::Generic => {
                Some(text("role").ok_or_else(|| bad("a generic message needs a string `role`"))?)
            }
            _ => None,
        };
        let content = match data.get("content") {
            None | Some(Value::Null) => Content::default(),
            Some(c) => serde_json::from_value(c.clone())
                .map_err(|e| bad(&format!("unreadable content ({e})")))?,
        };
        let additional_kwargs = data
            .get("additional_kwargs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut tool_calls: Vec<ToolCall> = match data.get("tool_calls") {
            Some(Value::Array(calls)) => calls
                .iter()
                .filter_map(|c| serde_json::from_value(c.clone()).ok())
                .collect(),
            _ => Vec::new(),
        };
        if tool_calls.is_empty() && role == Role::Ai {
            tool_calls = legacy_tool_calls(&additional_kwargs);
        }
        let mut content = content;
        if let (Content::Parts(parts), false) = (&mut content, tool_calls.is_empty()) {
            // The calls as ChatAnthropic and ChatGoogleGenerativeAI also
            // keep them in the content; `tool_calls` is what LangChain
            // sends, and so does nodekit.
            parts.retain(|p| {
                !matches!(p, ContentPart::Other(_))
                    || !["tool_use", "input_json_delta", "functionCall"].contains(&p.kind())
            });
        }
        let usage = data
            .get("usage_metadata")
            .filter(|u| u.is_object())
            .map(|u| {
                let n = |v: Option<&Value>| v.and_then(Value::as_u64);
                Usage {
                    input_tokens: n(u.get("input_tokens")).unwrap_or(0),
                    output_tokens: n(u.get("output_tokens")).unwrap_or(0),
                    total_tokens: n(u.get("total_tokens")).unwrap_or(0),
                    cache_read_tokens: n(u.pointer("/input_token_details/cache_read")),
                    cache_creation_tokens: n(u.pointer("/input_token_details/cache_creation")),
                    reasoning_tokens: n(u.pointer("/output_token_details/reasoning")),
                }
            });
        Ok(Message {
            role,
            content,
            name: text("name"),
            tool_call_id: text("tool_call_id"),
            tool_calls,
            additional_kwargs,
            usage,
            id: text("id"),
            chat_role,
        })
    }

    /// The flat stored form LangChain's SQL stores write (and n8n's
    /// `n8n_chat_histories` holds): the `data` fields with `type` beside them.
    pub fn to_stored_flat(&self) -> Value {
        let mut stored = self.to_stored();
        let mut flat = match stored.get_mut("data").map(Value::take) {
            Some(Value::Object(data)) => data,
            _ => Map::new(),
        };
        flat.insert("type".into(), Value::from(self.role.as_str()));
        Value::Object(flat)
    }

    /// Reads any of the three forms: LangChain's stored form (`type` and
    /// `data`), its flat form (`type` beside the fields), or nodekit's (`role`).
    pub fn from_json(value: &Value) -> Result<Message> {
        if value.get("type").is_some() && value.get("data").is_some() {
            Message::from_stored(value)
        } else if let (Some(kind), Some(Value::Object(fields))) = (value.get("type"), Some(value)) {
            let mut data = fields.clone();
            data.remove("type");
            Message::from_stored(&json!({"type": kind, "data": data}))
        } else {
            serde_json::from_value(value.clone()).map_err(|e| Error::InvalidMessage {
                reason: format!("{}; got {}", quoted(&e.to_string()), describe_value(value)),
            })
        }
    }
}

/// Tool calls in OpenAI's form inside `additional_kwargs` (older LangChain).
fn legacy_tool_calls(kwargs: &Map<String, Value>) -> Vec<ToolCall> {
    let Some(Value::Array(calls)) = kwargs.get("tool_calls") else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|c| {
            let function = c.get("function")?;
            let args = match function.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
                Some(v @ Value::Object(_)) => v.clone(),
                _ => json!({}),
            };
            Some(ToolCall {
                id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: function.get("name")?.as_str()?.to_owned(),
                args,
            })
        })
        .collect()
}
