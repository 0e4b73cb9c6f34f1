//! n8n's chat models of providers that serve OpenAI's chat completions API
//! (DeepSeek, OpenRouter, xAI Grok, Groq and Mistral), by n8n's names, on
//! nodekit's OpenAI client: a workflow exported from n8n with one of them
//! runs as it is.
//!
//! Each credential may carry a `url` (the API root) that replaces the
//! provider's, for a proxy or a local server; n8n's DeepSeek, OpenRouter and
//! xAI credentials have it as a hidden field already.

use nodekit::model::ModelSettings;
use nodekit::prelude::*;
use serde_json::json;

use super::lm_chat_openai::ChatCompletionsOptions;
use crate::credentials::openai_host;

nodekit::n8n_credentials!(
    "deepSeekApi",
    "openRouterApi",
    "xAiApi",
    "groqApi",
    "mistralCloudApi"
);

/// The temperature LangChain's Groq and Mistral clients send when the
/// option is not added.
const LANGCHAIN_TEMPERATURE: f64 = 0.7;

/// A node of n8n's that runs ChatOpenAI on a provider's API root, with
/// n8n's shared options: its type, n8n's name and label, its credential,
/// the provider's root, the default model, and whether streams ask for
/// their usage (n8n's xAI node does not).
macro_rules! openai_api_node {
    (
        $(#[$doc:meta])*
        $ty:ident: $name:tt, $display:tt, $credential:tt, $url:tt,
        model = $model:tt ($model_doc:tt), stream_usage = $usage:tt
    ) => {
        $(#[$doc])*
        #[ai_node(
            name = $name,
            display_name = $display,
            output = chat_model,
            credentials = [$credential],
            icon = "fa:robot"
        )]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $ty {
            #[doc = $model_doc]
            #[param(default = $model, required)]
            pub model: String,
            /// Additional settings.
            #[param(collection, placeholder = "Add Option")]
            pub options: ChatCompletionsOptions,
        }

        impl SupplyData for $ty {
            async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
                let credential = ctx.credentials($credential)?;
                let mut config = openai_host(credential, $credential, $url, &self.model)?;
                config.stream_usage = $usage;
                Ok(ctx.create_chat_model(self.options.apply(config))?.into())
            }
        }
    };
}

openai_api_node! {
    /// Chat with DeepSeek's models.
    LmChatDeepSeek: "lmChatDeepSeek", "DeepSeek Chat Model", "deepSeekApi", "https://api.deepseek.com",
    model = "deepseek-chat" ("The model, e.g. `deepseek-chat`."), stream_usage = true
}

openai_api_node! {
    /// Chat with the models OpenRouter routes to.
    LmChatOpenRouter: "lmChatOpenRouter", "OpenRouter Chat Model", "openRouterApi", "https://openrouter.ai/api/v1",
    model = "openai/gpt-4.1-mini" ("The model, e.g. `openai/gpt-4.1-mini`."), stream_usage = true
}

openai_api_node! {
    /// Chat with xAI's Grok models.
    LmChatXAiGrok: "lmChatXAiGrok", "xAI Grok Chat Model", "xAiApi", "https://api.x.ai/v1",
    model = "grok-2-vision-1212" ("The model, e.g. `grok-2-vision-1212`."), stream_usage = false
}

/// n8n's "Options" of the Groq Chat Model.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatGroqOptions {
    /// The most tokens to generate.
    #[param(display_name = "Maximum Number of Tokens", default = 4096)]
    pub max_tokens_to_sample: Option<u64>,
    /// Randomness of the answer: 0 is focused, 1 is most random (0.7 when
    /// not added).
    #[param(
        display_name = "Sampling Temperature",
        default = 0.7,
        min = 0,
        max = 1,
        precision = 1
    )]
    pub temperature: Option<f64>,
}

/// Chat with the models Groq serves.
#[ai_node(
    name = "lmChatGroq",
    display_name = "Groq Chat Model",
    output = chat_model,
    credentials = ["groqApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatGroq {
    /// The model, e.g. `llama3-8b-8192`.
    #[param(default = "llama3-8b-8192", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatGroqOptions,
}

impl SupplyData for LmChatGroq {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("groqApi")?;
        let mut config = openai_host(
            credential,
            "groqApi",
            "https://api.groq.com/openai/v1",
            &self.model,
        )?;
        config.settings = ModelSettings {
            temperature: Some(self.options.temperature.unwrap_or(LANGCHAIN_TEMPERATURE)),
            max_tokens: self.options.max_tokens_to_sample,
            ..ModelSettings::default()
        };
        Ok(ctx.create_chat_model(config)?.into())
    }
}

/// n8n's "Options" of the Mistral Cloud Chat Model.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatMistralCloudOptions {
    /// The most tokens to generate; -1 leaves it to the model.
    #[param(display_name = "Maximum Number of Tokens", default = -1)]
    pub max_tokens: Option<i64>,
    /// Randomness of the answer: 0 is focused, 1 is most random (0.7 when
    /// not added).
    #[param(
        display_name = "Sampling Temperature",
        default = 0.7,
        min = 0,
        max = 1,
        precision = 1
    )]
    pub temperature: Option<f64>,
    /// How often a failed request is tried again.
    #[param(default = 2, min = 0)]
    pub max_retries: Option<u32>,
    /// Nucleus sampling: only tokens within this probability mass are
    /// considered (1 when not added).
    #[param(display_name = "Top P", default = 1, min = 0, max = 1, precision = 1)]
    pub top_p: Option<f64>,
    /// Put Mistral's safety prompt before the conversation (`safe_prompt`).
    #[param(display_name = "Enable Safe Mode", default = false)]
    pub safe_mode: Option<bool>,
    /// The seed for random sampling, for repeatable answers.
    #[param(display_name = "Random Seed")]
    pub random_seed: Option<i64>,
}

/// Chat with Mistral's models on Mistral's cloud.
#[ai_node(
    name = "lmChatMistralCloud",
    display_name = "Mistral Cloud Chat Model",
    output = chat_model,
    credentials = ["mistralCloudApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatMistralCloud {
    /// The model, e.g. `mistral-small`.
    #[param(default = "mistral-small", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatMistralCloudOptions,
}

impl SupplyData for LmChatMistralCloud {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let o = &self.options;
        let credential = ctx.credentials("mistralCloudApi")?;
        let mut config = openai_host(
            credential,
            "mistralCloudApi",
            "https://api.mistral.ai/v1",
            &self.model,
        )?;
        config.settings = ModelSettings {
            temperature: Some(o.temperature.unwrap_or(LANGCHAIN_TEMPERATURE)),
            max_tokens: o.max_tokens.and_then(|n| u64::try_from(n).ok()),
            top_p: Some(o.top_p.unwrap_or(1.0)),
            ..ModelSettings::default()
        };
        config.max_retries = o.max_retries.unwrap_or(2);
        // Mistral refuses OpenAI's `stream_options`; it sends the usage anyway.
        config.stream_usage = false;
        if o.safe_mode == Some(true) {
            config.extra_body.insert("safe_prompt".into(), json!(true));
        }
        if let Some(seed) = o.random_seed {
            config.extra_body.insert("random_seed".into(), json!(seed));
        }
        Ok(ctx.create_chat_model(config)?.into())
    }
}
