//! n8n's Anthropic Chat Model (`lmChatAnthropic`) on nodekit's native
//! Anthropic client: a workflow exported from n8n with this node runs as it is.

use nodekit::model::ModelSettings;
use nodekit::model::anthropic::DEFAULT_MAX_TOKENS;
use nodekit::prelude::*;

nodekit::n8n_credentials!("anthropicApi");

/// The smallest thinking budget Anthropic accepts, n8n's default.
const MIN_THINKING_BUDGET: u64 = 1024;

/// n8n's "Options" of the Anthropic Chat Model. Options the user has not
/// added are `None` and not sent, so Anthropic's defaults apply.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatAnthropicOptions {
    /// The most tokens to generate (4,096 when not set: Anthropic needs a limit).
    #[param(display_name = "Maximum Number of Tokens", default = 4096)]
    pub max_tokens_to_sample: Option<u64>,
    /// Randomness of the answer: 0 is focused, 1 is most random.
    #[param(
        display_name = "Sampling Temperature",
        default = 0.7,
        min = 0,
        max = 1,
        precision = 1,
        display_options(hide(thinking = [true]))
    )]
    pub temperature: Option<f64>,
    /// Sample only from the likeliest tokens; -1 turns it off.
    #[param(
        display_name = "Top K",
        default = -1,
        min = -1,
        display_options(hide(thinking = [true]))
    )]
    pub top_k: Option<i64>,
    /// Nucleus sampling: only tokens within this probability mass are considered.
    #[param(
        display_name = "Top P",
        default = 1,
        min = 0,
        max = 1,
        precision = 1,
        display_options(hide(thinking = [true]))
    )]
    pub top_p: Option<f64>,
    /// Let the model think before it answers (extended thinking).
    #[param(display_name = "Enable Thinking", default = false)]
    pub thinking: Option<bool>,
    /// The most tokens the model may think with.
    #[param(
        display_name = "Thinking Budget (Tokens)",
        default = 1024,
        min = 1024,
        display_options(show(thinking = [true]))
    )]
    pub thinking_budget: Option<u64>,
}

/// Chat with Anthropic's Claude models through the Messages API.
#[ai_node(
    name = "lmChatAnthropic",
    display_name = "Anthropic Chat Model",
    output = chat_model,
    credentials = ["anthropicApi"],
    icon = "fa:robot",
    version = [1, 1.1, 1.2, 1.3],
    default_version = 1.3
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatAnthropic {
    /// The model, e.g. `claude-sonnet-4-5-20250929` (n8n 1.3 stores it as a
    /// model picked from a list; either form is read).
    #[param(default = "claude-sonnet-4-5-20250929", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatAnthropicOptions,
}

impl SupplyData for LmChatAnthropic {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let o = &self.options;
        let mut config =
            crate::credentials::anthropic(ctx.credentials("anthropicApi")?, &self.model)?;
        let max_tokens = o.max_tokens_to_sample.or(Some(DEFAULT_MAX_TOKENS));
        if o.thinking == Some(true) {
            // As n8n: with thinking on, the sampling settings are not sent
            // (Anthropic refuses them).
            config.settings = ModelSettings {
                max_tokens,
                ..ModelSettings::default()
            };
            config.thinking_budget = Some(o.thinking_budget.unwrap_or(MIN_THINKING_BUDGET));
        } else {
            config.settings = ModelSettings {
                temperature: o.temperature,
                max_tokens,
                top_p: o.top_p,
                ..ModelSettings::default()
            };
            // -1 (n8n's default) turns top-k off.
            config.top_k = o.top_k.and_then(|k| u64::try_from(k).ok());
        }
        Ok(ctx.create_chat_model(config)?.into())
    }
}
