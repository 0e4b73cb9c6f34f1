//! [`OllamaConfig`]: what an [`OllamaChatModel`](crate::OllamaChatModel) is made from.

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::model::{ChatModel, ModelSettings};
use nodekit_http::Authenticate;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a local Ollama listens.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434";

/// Settings of an Ollama chat model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OllamaConfig {
    /// The model, e.g. `llama3.2` or `qwen3:8b`.
    pub model: String,
    /// The server's root: [`OLLAMA_BASE_URL`] by default.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// A bearer token, for an Ollama behind a proxy that asks for one
    /// (Open WebUI); a plain Ollama needs none.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Sampling settings, sent in Ollama's `options`: `temperature`,
    /// `top_p`, `max_tokens` (Ollama's `num_predict`) and the presence and
    /// frequency penalties.
    #[serde(default, flatten)]
    pub settings: ModelSettings,
    /// Ollama's other runtime options, sent as they are in `options`
    /// (`num_ctx`, `top_k`, `repeat_penalty`, `seed`, `num_gpu`, …).
    #[serde(default)]
    pub options: serde_json::Map<String, Value>,
    /// The answer's format when a call asks for none: `"json"`, or a JSON
    /// Schema.
    #[serde(default)]
    pub format: Option<Value>,
    /// How long the model stays loaded after the call (`"5m"`, or seconds).
    #[serde(default)]
    pub keep_alive: Option<Value>,
    /// Let a thinking model think (`think`); `None` leaves the model's default.
    #[serde(default)]
    pub think: Option<bool>,
    /// Seconds to wait for a connection, and between reads (default 300:
    /// a model may first have to load).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 5xx or a broken connection (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Largest answer accepted, in bytes (default 32 MiB).
    #[serde(default = "default_max_bytes")]
    pub max_response_bytes: usize,
    /// How requests authenticate instead of by `api_key`: any
    /// [`Authenticate`].
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

impl std::fmt::Debug for OllamaConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OllamaConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("settings", &self.settings)
            .field("options", &self.options)
            .field("format", &self.format)
            .field("think", &self.think)
            .field("timeout_secs", &self.timeout_secs)
            .finish_non_exhaustive()
    }
}

fn default_base_url() -> String {
    OLLAMA_BASE_URL.into()
}
fn default_timeout() -> f64 {
    300.0
}
fn default_retries() -> u32 {
    2
}
fn default_max_bytes() -> usize {
    32 * 1024 * 1024
}

impl OllamaConfig {
    /// Settings for `model` on a local Ollama, with every default.
    pub fn new(model: impl Into<String>) -> Self {
        OllamaConfig {
            model: model.into(),
            base_url: default_base_url(),
            api_key: None,
            settings: ModelSettings::default(),
            options: serde_json::Map::new(),
            format: None,
            keep_alive: None,
            think: None,
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            headers: Vec::new(),
            max_response_bytes: default_max_bytes(),
            authenticate: None,
        }
    }

    /// The same settings with another server root.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }
}

/// The transport to the Ollama at `base_url`, authenticated by
/// `authenticate`, else by `api_key` as a bearer token (none when unset).
pub(crate) fn transport(
    base_url: &str,
    api_key: Option<String>,
    authenticate: Option<Arc<dyn Authenticate>>,
    timeout_secs: f64,
) -> Result<nodekit_http::TransportBuilder> {
    let timeout = nodekit_http::timeout_secs(timeout_secs)?;
    let auth =
        authenticate.unwrap_or_else(|| Arc::new(nodekit_http::Bearer(api_key.unwrap_or_default())));
    Ok(nodekit_http::Transport::builder(base_url.trim_end_matches('/'), auth).timeout(timeout))
}

/// `ctx.create_chat_model(config)` makes an [`OllamaChatModel`](crate::OllamaChatModel).
impl nodekit_core::node::IntoChatModel for OllamaConfig {
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>> {
        Ok(Arc::new(crate::OllamaChatModel::new(self)?))
    }
}
