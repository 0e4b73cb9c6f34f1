//! The OpenAI-compatible chat model node (the AI Node SDK's `createChatModel` with
//! `type: 'openaiCompatible'`): OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
//! llama.cpp server, LiteLLM.

use nodekit::model::ModelSettings;
use nodekit::model::openai::OpenAiConfig;
use nodekit::prelude::*;

/// Chat model settings, n8n's "Options" collection. Options the user has not
/// added are `None` and not sent, so the server's own defaults apply (some
/// models, such as OpenAI's reasoning models, refuse a temperature).
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatOptions {
    /// Penalises tokens by how often they already appear, to reduce repetition.
    #[param(default = 0, min = -2, max = 2, precision = 1)]
    pub frequency_penalty: Option<f64>,
    /// The most tokens to generate; -1 leaves it to the model.
    #[param(display_name = "Maximum Number of Tokens", default = -1)]
    pub max_tokens: Option<i64>,
    /// Penalises tokens that already appear, to encourage new topics.
    #[param(default = 0, min = -2, max = 2, precision = 1)]
    pub presence_penalty: Option<f64>,
    /// Randomness of the answer: 0 is focused, 2 is most random.
    #[param(
        display_name = "Sampling Temperature",
        default = 0.7,
        min = 0,
        max = 2,
        precision = 1
    )]
    pub temperature: Option<f64>,
    /// Milliseconds to wait for an answer before giving up.
    #[param(default = 60000, min = 1)]
    pub timeout: u64,
    /// How often a failed request is tried again.
    #[param(default = 2, min = 0)]
    pub max_retries: u32,
    /// Nucleus sampling: only tokens within this probability mass are considered.
    #[param(display_name = "Top P", default = 1, min = 0, max = 1, precision = 1)]
    pub top_p: Option<f64>,
}

/// Chat with any model served through the OpenAI chat completions API.
#[ai_node(
    name = "lmChatOpenAiCompatible",
    display_name = "OpenAI-Compatible Chat Model",
    output = chat_model,
    credentials = ["openAiApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatOpenAiCompatible {
    /// The model that generates the answer, e.g. `gpt-4o-mini` or `llama3.1`.
    #[param(default = "gpt-4o-mini", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatOptions,
}

impl SupplyData for LmChatOpenAiCompatible {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credentials = ctx.credentials("openAiApi")?;
        let o = &self.options;
        let config = OpenAiConfig {
            settings: ModelSettings {
                temperature: o.temperature,
                // -1 (n8n's default) leaves the length to the model.
                max_tokens: o.max_tokens.and_then(|n| u64::try_from(n).ok()),
                top_p: o.top_p,
                frequency_penalty: o.frequency_penalty,
                presence_penalty: o.presence_penalty,
            },
            timeout_secs: o.timeout as f64 / 1000.0,
            max_retries: o.max_retries,
            ..crate::credentials::openai(credentials, &self.model)?
        };
        Ok(ctx.create_chat_model(config)?.into())
    }
}
