//! [`AnthropicConfig`]: what an [`AnthropicChatModel`](crate::AnthropicChatModel)
//! is made from.

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::model::{ChatModel, ModelError, ModelErrorKind, ModelSettings};
use nodekit_http::Authenticate;
use serde::{Deserialize, Serialize};

/// Anthropic's API root (requests go to `{base_url}/v1/messages`).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent by default.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The answer's length when none is set: Anthropic requires one (n8n's
/// Anthropic node asks for 4,096 tokens by default too).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// Settings of an Anthropic chat model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The API key, sent as `x-api-key`.
    pub api_key: String,
    /// The model, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// API root: [`ANTHROPIC_BASE_URL`] by default, or a proxy that speaks
    /// the Messages API (LiteLLM's `/v1/messages`).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Sampling settings: `temperature`, `top_p` and `max_tokens`
    /// ([`DEFAULT_MAX_TOKENS`] when unset). Anthropic has no frequency or
    /// presence penalty; a model made with one is refused.
    #[serde(default, flatten)]
    pub settings: ModelSettings,
    /// Sample only from the `top_k` likeliest tokens.
    #[serde(default)]
    pub top_k: Option<u64>,
    /// Extended thinking with this many tokens for it (at least 1,024,
    /// and fewer than `max_tokens`); `None` turns it off.
    #[serde(default)]
    pub thinking_budget: Option<u64>,
    /// Where the request marks the prompt for Anthropic's cache.
    #[serde(default)]
    pub prompt_cache: PromptCache,
    /// Seconds to wait for a connection, and between reads (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 529 (overloaded), other 5xx or a broken
    /// connection (default 2); `retry-after` is honoured.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// The `anthropic-version` header ([`ANTHROPIC_VERSION`]).
    #[serde(default = "default_version")]
    pub version: String,
    /// Beta features, sent as `anthropic-beta`.
    #[serde(default)]
    pub betas: Vec<String>,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Largest answer accepted, in bytes (default 32 MiB).
    #[serde(default = "default_max_bytes")]
    pub max_response_bytes: usize,
    /// How requests authenticate instead of by `x-api-key` (a proxy's
    /// bearer token, a signature): any [`Authenticate`].
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

/// Where a request marks the prompt for Anthropic's cache (`cache_control`
/// breakpoints): the system prompt, the tools, and the conversation so far
/// (its last message), so that the next call reads them from the cache.
/// A message is also marked when its `additional_kwargs` has
/// `"cache_control": {"type": "ephemeral"}`. Anthropic takes at most four
/// breakpoints in a request; more are refused before it is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptCache {
    /// Mark the system prompt.
    #[serde(default)]
    pub system: bool,
    /// Mark the tools (their last definition).
    #[serde(default)]
    pub tools: bool,
    /// Mark the last message.
    #[serde(default)]
    pub conversation: bool,
    /// How long the marked prefix stays cached: `5m` (Anthropic's default
    /// when unset) or `1h`.
    #[serde(default)]
    pub ttl: Option<String>,
}

impl PromptCache {
    /// System prompt, tools and conversation all marked, with Anthropic's
    /// default lifetime.
    pub fn all() -> Self {
        PromptCache {
            system: true,
            tools: true,
            conversation: true,
            ttl: None,
        }
    }
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("api_key", &"***")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("settings", &self.settings)
            .field("top_k", &self.top_k)
            .field("thinking_budget", &self.thinking_budget)
            .field("prompt_cache", &self.prompt_cache)
            .field("timeout_secs", &self.timeout_secs)
            .field("max_retries", &self.max_retries)
            .field("version", &self.version)
            .field("betas", &self.betas)
            .field("authenticate", &self.authenticate)
            .finish_non_exhaustive()
    }
}

fn default_base_url() -> String {
    ANTHROPIC_BASE_URL.into()
}
fn default_timeout() -> f64 {
    60.0
}
fn default_retries() -> u32 {
    2
}
fn default_version() -> String {
    ANTHROPIC_VERSION.into()
}
fn default_max_bytes() -> usize {
    32 * 1024 * 1024
}

impl AnthropicConfig {
    /// Settings for `model` with `api_key` and every default.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        AnthropicConfig {
            api_key: api_key.into(),
            model: model.into(),
            base_url: default_base_url(),
            settings: ModelSettings::default(),
            top_k: None,
            thinking_budget: None,
            prompt_cache: PromptCache::default(),
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            version: default_version(),
            betas: Vec::new(),
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

    /// The same settings with extended thinking of `budget_tokens`.
    pub fn thinking_budget(mut self, budget_tokens: u64) -> Self {
        self.thinking_budget = Some(budget_tokens);
        self
    }

    /// The same settings with the prompt marked for the cache as `cache` says.
    pub fn prompt_cache(mut self, cache: PromptCache) -> Self {
        self.prompt_cache = cache;
        self
    }

    /// The same settings, requests authenticated by `auth` instead of by
    /// the API key.
    pub fn auth(mut self, auth: impl Authenticate + 'static) -> Self {
        self.authenticate = Some(Arc::new(auth));
        self
    }

    /// Refuses settings Anthropic would refuse on every call.
    pub(crate) fn check(&self) -> Result<(), ModelError> {
        let bad = |message: String| Err(ModelError::new(ModelErrorKind::BadRequest, message));
        if self.settings.frequency_penalty.is_some() || self.settings.presence_penalty.is_some() {
            return bad("Anthropic's models take no frequency or presence penalty".into());
        }
        if let Some(budget) = self.thinking_budget {
            let max = self.settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
            if budget < 1024 {
                return bad(format!(
                    "the thinking budget must be at least 1024 tokens, not {budget}"
                ));
            }
            if budget >= max {
                return bad(format!(
                    "the thinking budget ({budget} tokens) must be less than max_tokens ({max})"
                ));
            }
        }
        if let Some(ttl) = self
            .prompt_cache
            .ttl
            .as_deref()
            .filter(|t| !["5m", "1h"].contains(t))
        {
            return bad(format!("the cache's ttl must be `5m` or `1h`, not `{ttl}`"));
        }
        Ok(())
    }
}

/// `ctx.create_chat_model(config)` makes an [`AnthropicChatModel`](crate::AnthropicChatModel).
impl nodekit_core::node::IntoChatModel for AnthropicConfig {
    fn into_chat_model(self) -> Result<Arc<dyn ChatModel>> {
        Ok(Arc::new(crate::AnthropicChatModel::new(self)?))
    }
}
