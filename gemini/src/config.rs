//! [`GeminiConfig`]: what a [`GeminiChatModel`](crate::GeminiChatModel) is made from.

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::model::{ChatModel, ModelError, ModelErrorKind, ModelSettings};
use nodekit_http::{Authenticate, HeaderKey, Transport, TransportBuilder};
use serde::{Deserialize, Serialize};

/// The Generative Language API's root.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// The API version in every path (`/v1beta/models/…`).
pub const GEMINI_API_VERSION: &str = "v1beta";

/// Settings of a Gemini chat model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GeminiConfig {
    /// The API key, sent as `x-goog-api-key`.
    pub api_key: String,
    /// The model, e.g. `gemini-2.5-flash` (a `models/` prefix is taken off).
    pub model: String,
    /// API root: [`GEMINI_BASE_URL`] by default, or a proxy that speaks
    /// the same API (LiteLLM's `/gemini` route).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The API version in the path ([`GEMINI_API_VERSION`]).
    #[serde(default = "default_api_version")]
    pub api_version: String,
    /// Sampling settings: `temperature`, `top_p`, `max_tokens` (Gemini's
    /// `maxOutputTokens`), and the presence and frequency penalties.
    #[serde(default, flatten)]
    pub settings: ModelSettings,
    /// Sample only from the `top_k` likeliest tokens.
    #[serde(default)]
    pub top_k: Option<u64>,
    /// Tokens the model may think with (`thinkingConfig.thinkingBudget`;
    /// 0 turns thinking off where the model allows it, -1 lets it decide);
    /// `None` leaves the model's default.
    #[serde(default)]
    pub thinking_budget: Option<i64>,
    /// Ask for summaries of the model's thoughts (`includeThoughts`), kept
    /// as the text of its `Thinking` parts.
    #[serde(default)]
    pub include_thoughts: bool,
    /// How strictly Gemini's safety filters block each category of harm
    /// (`safetySettings`); empty leaves Google's defaults.
    #[serde(default)]
    pub safety_settings: Vec<SafetySetting>,
    /// Seconds to wait for a connection, and between reads (default 60).
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
    /// How requests authenticate instead of by `x-goog-api-key` (`?key=`
    /// with [`QueryKey`](nodekit_http::QueryKey), a Vertex token): any
    /// [`Authenticate`].
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

/// One of Gemini's safety settings: block content of `category` (e.g.
/// `HARM_CATEGORY_HARASSMENT`) from `threshold` on (e.g.
/// `BLOCK_MEDIUM_AND_ABOVE`), sent as Google names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SafetySetting {
    /// The category of harm.
    pub category: String,
    /// From which probability of harm a part is blocked.
    pub threshold: String,
}

impl SafetySetting {
    /// Block `category` from `threshold` on.
    pub fn new(category: impl Into<String>, threshold: impl Into<String>) -> Self {
        SafetySetting {
            category: category.into(),
            threshold: threshold.into(),
        }
    }
}

impl std::fmt::Debug for GeminiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiConfig")
            .field("api_key", &"***")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_version", &self.api_version)
            .field("settings", &self.settings)
            .field("top_k", &self.top_k)
            .field("thinking_budget", &self.thinking_budget)
            .field("include_thoughts", &self.include_thoughts)
            .field("safety_settings", &self.safety_settings)
            .field("timeout_secs", &self.timeout_secs)
            .field("max_retries", &self.max_retries)
            .field("authenticate", &self.authenticate)
            .finish_non_exhaustive()
    }
}

pub(crate) fn default_base_url() -> String {
    GEMINI_BASE_URL.into()
}
pub(crate) fn default_api_version() -> String {
    GEMINI_API_VERSION.into()
}
pub(crate) fn default_timeout() -> f64 {
    60.0
}
pub(crate) fn default_retries() -> u32 {
    2
}
fn default_max_bytes() -> usize {
    32 * 1024 * 1024
}

impl GeminiConfig {
    /// Settings for `model` with `api_key` and every default.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        GeminiConfig {
            api_key: api_key.into(),
            model: model.into(),
            base_url: default_base_url(),
            api_version: default_api_version(),
            settings: ModelSettings::default(),
            top_k: None,
            thinking_budget: None,
            include_thoughts: false,
            safety_settings: Vec::new(),
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            headers: Vec::new(),
            max_response_bytes: default_max_bytes(),
            authenticate: None,
        }
    }

    /// The same settings with another API root.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The same settings with these sampling settings.
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same settings with a thinking budget of `tokens`.
    pub fn thinking_budget(mut self, tokens: i64) -> Self {
        self.thinking_budget = Some(tokens);
        self
    }

    /// The same settings, requests authenticated by `auth` instead of by
    /// the API key.
    pub fn auth(mut self, auth: impl Authenticate + 'static) -> Self {
        self.authenticate = Some(Arc::new(auth));
        self
    }
}

/// The model's name in a path: without the `models/` prefix, and refused
/// when it would change the path.
pub(crate) fn model_path(model: &str) -> Result<String, ModelError> {
    let name = model.trim().trim_start_matches("models/");
    if name.is_empty() || name.contains(['/', '?', '#', ':']) || name.contains(char::is_whitespace)
    {
        return Err(ModelError::new(
            ModelErrorKind::BadRequest,
            format!("`{model}` is not a Gemini model name"),
        ));
    }
    Ok(name.to_owned())
}

/// The transport to `base_url`, authenticated by `authenticate` or else by
/// `api_key` as `x-goog-api-key`.
pub(crate) fn transport(
    base_url: &str,
    api_key: &str,
    authenticate: Option<Arc<dyn Authenticate>>,
) -> Result<TransportBuilder, ModelError> {
    let auth: Arc<dyn Authenticate> = match authenticate {
        Some(auth) => auth,
        None => Arc::new(HeaderKey::new("x-goog-api-key", api_key)?),
    };
    Ok(Transport::builder(base_url.trim_end_matches('/'), auth))
}

/// `ctx.create_chat_model(config)` makes a [`GeminiChatModel`](crate::GeminiChatModel).
impl nodekit_core::node::IntoChatModel for GeminiConfig {
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>> {
        Ok(Arc::new(crate::GeminiChatModel::new(self)?))
    }
}
