//! n8n's Google Gemini Chat Model (`lmChatGoogleGemini`) on nodekit's
//! native Gemini client: a workflow exported from n8n with this node runs
//! as it is.

use nodekit::model::ModelSettings;
use nodekit::model::gemini::{GeminiConfig, SafetySetting};
use nodekit::prelude::*;

nodekit::n8n_credentials!("googlePalmApi");

/// One of n8n's "Safety Settings": block `category` from `threshold` on.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct GeminiSafetyValue {
    /// The category of harmful content to block, e.g. `HARM_CATEGORY_HARASSMENT`.
    #[param(
        display_name = "Safety Category",
        default = "HARM_CATEGORY_UNSPECIFIED"
    )]
    pub category: String,
    /// The threshold of harmful content to block, e.g. `BLOCK_MEDIUM_AND_ABOVE`.
    #[param(
        display_name = "Safety Threshold",
        default = "HARM_BLOCK_THRESHOLD_UNSPECIFIED"
    )]
    pub threshold: String,
}

/// n8n's "Options" of the Google Gemini Chat Model. Options the user has
/// not added are `None` and not sent, so Google's defaults apply.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatGoogleGeminiOptions {
    /// The most tokens to generate.
    #[param(display_name = "Maximum Number of Tokens", default = 2048)]
    pub max_output_tokens: Option<u64>,
    /// Randomness of the answer: 0 is focused, 1 is most random.
    #[param(
        display_name = "Sampling Temperature",
        default = 0.4,
        min = 0,
        max = 1,
        precision = 1
    )]
    pub temperature: Option<f64>,
    /// Sample only from the likeliest tokens; -1 turns it off.
    #[param(display_name = "Top K", default = 32, min = -1, max = 40)]
    pub top_k: Option<i64>,
    /// Nucleus sampling: only tokens within this probability mass are considered.
    #[param(display_name = "Top P", default = 1, min = 0, max = 1, precision = 1)]
    pub top_p: Option<f64>,
    /// How strictly Gemini's safety filters block each category.
    #[param(
        display_name = "Safety Settings",
        fixed_collection = "values",
        placeholder = "Add Option"
    )]
    pub safety_settings: Vec<GeminiSafetyValue>,
}

/// Chat with Google's Gemini models through the Gemini API.
#[ai_node(
    name = "lmChatGoogleGemini",
    display_name = "Google Gemini Chat Model",
    output = chat_model,
    credentials = ["googlePalmApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatGoogleGemini {
    /// The model, e.g. `models/gemini-2.5-flash`.
    #[param(default = "models/gemini-2.5-flash", required)]
    pub model_name: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatGoogleGeminiOptions,
}

impl SupplyData for LmChatGoogleGemini {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("googlePalmApi")?;
        let api_key = crate::credentials::required(credential, "googlePalmApi", "apiKey")?;
        let o = self.options;
        let mut config = GeminiConfig::new(api_key, self.model_name).settings(ModelSettings {
            temperature: o.temperature,
            max_tokens: o.max_output_tokens,
            top_p: o.top_p,
            ..ModelSettings::default()
        });
        // n8n's `host` is the API root, `https://generativelanguage.googleapis.com`.
        if let Some(host) = crate::credentials::text(credential, "host") {
            config.base_url = host.trim_end_matches('/').to_owned();
        }
        config.top_k = o.top_k.and_then(|k| u64::try_from(k).ok());
        config.safety_settings = o
            .safety_settings
            .into_iter()
            .map(|s| SafetySetting::new(s.category, s.threshold))
            .collect();
        Ok(ctx.create_chat_model(config)?.into())
    }
}
