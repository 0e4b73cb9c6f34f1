//! n8n's Chat Trigger (`@n8n/n8n-nodes-langchain.chatTrigger`): the settings
//! a chat server needs from it, read with n8n's defaults.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::WorkflowNode;
use nodekit_core::error::{Result, WorkflowError};

/// The Chat Trigger's node type, as n8n exports it.
pub const CHAT_TRIGGER_TYPE: &str = "@n8n/n8n-nodes-langchain.chatTrigger";

/// Whether `node_type` is the Chat Trigger (any package prefix, as a
/// workflow copied between n8n versions may carry).
pub(super) fn is_chat_trigger(node_type: &str) -> bool {
    node_type.rsplit('.').next() == Some("chatTrigger")
}

/// A Chat Trigger's settings, with n8n's defaults for those an export
/// leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatTrigger {
    /// The node's name.
    pub node: String,
    /// The id in its paths: `/webhook/<webhook_id>/chat`.
    pub webhook_id: String,
    /// "Make Chat Publicly Available": n8n answers its production chat URL
    /// only when set.
    pub public: bool,
    /// Mode "Hosted Chat" (n8n serves a chat page) rather than "Embedded Chat".
    pub hosted: bool,
    /// Whether requests need HTTP basic authentication (the
    /// `httpBasicAuth` credential).
    pub basic_auth: bool,
    /// The hosted page's first bot messages, one per line.
    pub initial_messages: String,
    /// The origins whose pages may call the chat (CORS).
    pub allowed_origins: AllowedOrigins,
    /// Whether `loadPreviousSession` reads the connected memory.
    pub load_previous_session: bool,
    /// How an answer is sent.
    pub response_mode: ResponseMode,
    /// The hosted page's texts and look: `title`, `subtitle`,
    /// `inputPlaceholder`, `getStarted`, `showWelcomeScreen`, `customCss`,
    /// as the export has them.
    pub page: Map<String, Value>,
}

/// How the Chat Trigger answers a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMode {
    /// "When Last Node Finishes": one JSON object, `{"output": ...}`.
    LastNode,
    /// "Streaming": newline-delimited JSON chunks as the model writes.
    Streaming,
}

/// The origins allowed to call the chat from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Any origin (`*`, n8n's default).
    Any,
    /// Only these, as written (`https://example.com`).
    Only(Vec<String>),
}

impl AllowedOrigins {
    /// n8n's setting: `*`, or origins separated by commas.
    pub fn parse(text: &str) -> AllowedOrigins {
        let origins: Vec<String> = text
            .split(',')
            .map(|o| o.trim().trim_end_matches('/').to_owned())
            .filter(|o| !o.is_empty())
            .collect();
        if origins.is_empty() || origins.iter().any(|o| o == "*") {
            AllowedOrigins::Any
        } else {
            AllowedOrigins::Only(origins)
        }
    }

    /// Whether a page from `origin` may call the chat.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            AllowedOrigins::Any => true,
            AllowedOrigins::Only(list) => list.iter().any(|o| o.eq_ignore_ascii_case(origin)),
        }
    }
}

/// The parameters as n8n stores them; absent ones take n8n's defaults.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params {
    #[serde(default)]
    public: bool,
    #[serde(default = "hosted_chat")]
    mode: String,
    #[serde(default = "none")]
    authentication: String,
    #[serde(default = "initial_messages")]
    initial_messages: String,
    #[serde(default)]
    available_in_chat: bool,
    #[serde(default)]
    options: Map<String, Value>,
}

fn hosted_chat() -> String {
    "hostedChat".into()
}

fn none() -> String {
    "none".into()
}

fn initial_messages() -> String {
    "Hi there! 👋\nMy name is Nathan. How can I assist you today?".into()
}

/// The hosted page's settings passed on as they are.
const PAGE_OPTIONS: [&str; 6] = [
    "title",
    "subtitle",
    "inputPlaceholder",
    "getStarted",
    "showWelcomeScreen",
    "customCss",
];

impl ChatTrigger {
    /// Reads the settings of a Chat Trigger node.
    pub fn from_node(node: &WorkflowNode) -> Result<ChatTrigger> {
        let unsupported =
            |setting: &str, value: &str, supported: &str| WorkflowError::UnsupportedSetting {
                node: node.name.clone(),
                setting: setting.into(),
                value: value.into(),
                supported: supported.into(),
            };
        let params: Params = serde_json::from_value(match &node.parameters {
            Value::Null => Value::Object(Map::new()),
            other => other.clone(),
        })
        .map_err(|e| {
            unsupported(
                "parameters",
                &e.to_string(),
                "the settings of n8n's Chat Trigger",
            )
        })?;
        let text = |key: &str, default: &str| -> Result<String> {
            match params.options.get(key) {
                None => Ok(default.to_owned()),
                Some(Value::String(s)) if s.starts_with('=') => {
                    Err(unsupported(key, s, "a fixed value, not an expression").into())
                }
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(unsupported(key, &other.to_string(), "text").into()),
            }
        };
        let basic_auth = match params.authentication.as_str() {
            "none" => false,
            "basicAuth" => true,
            other => {
                return Err(unsupported(
                    "authentication",
                    other,
                    "`none` or `basicAuth` (n8n's user login exists only inside n8n)",
                )
                .into());
            }
        };
        let hosted = match params.mode.as_str() {
            "hostedChat" => true,
            "webhook" => false,
            other => return Err(unsupported("mode", other, "`hostedChat` or `webhook`").into()),
        };
        let load_previous_session = match text("loadPreviousSession", "notSupported")?.as_str() {
            "notSupported" => false,
            "memory" => true,
            other => {
                return Err(unsupported(
                    "loadPreviousSession",
                    other,
                    "`notSupported` or `memory`",
                )
                .into());
            }
        };
        // n8n's Chat Hub streams unless told otherwise.
        let default_mode = if params.available_in_chat {
            "streaming"
        } else {
            "lastNode"
        };
        let response_mode = match text("responseMode", default_mode)?.as_str() {
            "lastNode" => ResponseMode::LastNode,
            "streaming" => ResponseMode::Streaming,
            other => {
                return Err(unsupported(
                    "responseMode",
                    other,
                    "`lastNode` or `streaming` (response nodes are not run here)",
                )
                .into());
            }
        };
        let webhook_id = node
            .webhook_id
            .clone()
            .filter(|id| !id.is_empty())
            .or_else(|| Some(node.id.clone()).filter(|id| !id.is_empty()))
            .ok_or_else(|| {
                unsupported(
                    "webhookId",
                    "",
                    "an export that keeps the node's `webhookId` (or its `id`)",
                )
            })?;
        if !webhook_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(
                unsupported("webhookId", &webhook_id, "letters, digits, `-` and `_`").into(),
            );
        }
        let page = PAGE_OPTIONS
            .iter()
            .filter_map(|&key| Some((key.to_owned(), params.options.get(key)?.clone())))
            .collect();
        Ok(ChatTrigger {
            node: node.name.clone(),
            webhook_id,
            public: params.public,
            hosted,
            basic_auth,
            initial_messages: params.initial_messages,
            allowed_origins: AllowedOrigins::parse(&text("allowedOrigins", "*")?),
            load_previous_session,
            response_mode,
            page,
        })
    }

    /// The path of its chat endpoint: `/webhook/<id>/chat`.
    pub fn path(&self) -> String {
        format!("/webhook/{}/chat", self.webhook_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(parameters: Value) -> WorkflowNode {
        serde_json::from_value(json!({
            "name": "When chat message received", "type": CHAT_TRIGGER_TYPE, "typeVersion": 1.4,
            "webhookId": "0b0c3f5e-chat", "parameters": parameters,
        }))
        .unwrap()
    }

    #[test]
    fn an_export_without_settings_gets_n8ns_defaults() {
        let t = ChatTrigger::from_node(&node(json!({}))).unwrap();
        assert_eq!(t.path(), "/webhook/0b0c3f5e-chat/chat");
        assert!(!t.public && t.hosted && !t.basic_auth && !t.load_previous_session);
        assert_eq!(t.response_mode, ResponseMode::LastNode);
        assert_eq!(t.allowed_origins, AllowedOrigins::Any);
        assert!(t.initial_messages.contains("Nathan"));
    }

    #[test]
    fn settings_are_read_as_n8n_writes_them() {
        let t = ChatTrigger::from_node(&node(json!({
            "public": true, "mode": "webhook", "authentication": "basicAuth", "initialMessages": "",
            "options": {"allowedOrigins": "https://a.example, https://b.example/", "loadPreviousSession": "memory",
                        "responseMode": "streaming", "title": "Shop"}
        })))
        .unwrap();
        assert!(t.public && !t.hosted && t.basic_auth && t.load_previous_session);
        assert_eq!(t.response_mode, ResponseMode::Streaming);
        assert!(t.allowed_origins.allows("https://b.example"));
        assert!(!t.allowed_origins.allows("https://c.example"));
        assert_eq!(
            t.page,
            json!({"title": "Shop"}).as_object().unwrap().clone()
        );
    }

    #[test]
    fn what_cannot_be_served_is_refused_by_name() {
        for (params, named) in [
            (json!({"authentication": "n8nUserAuth"}), "authentication"),
            (
                json!({"options": {"responseMode": "responseNodes"}}),
                "responseMode",
            ),
            (
                json!({"options": {"loadPreviousSession": "manually"}}),
                "loadPreviousSession",
            ),
            (
                json!({"options": {"allowedOrigins": "={{ $env.ORIGINS }}"}}),
                "allowedOrigins",
            ),
        ] {
            let e = ChatTrigger::from_node(&node(params))
                .unwrap_err()
                .to_string();
            assert!(e.contains(named) && e.contains("not supported"), "{e}");
        }
        let mut bad = node(json!({}));
        bad.webhook_id = Some("../admin".into());
        assert!(ChatTrigger::from_node(&bad).is_err());
    }
}
