//! n8n's OpenAI Chat Model (`lmChatOpenAi`) and Azure OpenAI Chat Model
//! (`lmChatAzureOpenAi`) on nodekit's OpenAI client: a workflow exported
//! from n8n with either runs as it is. [`ChatCompletionsOptions`] is the
//! "Options" collection they share with the hosted providers' nodes.

use nodekit::model::ModelSettings;
use nodekit::model::openai::OpenAiConfig;
use nodekit::prelude::*;
use serde_json::json;

nodekit::n8n_credentials!("azureOpenAiApi");

/// The timeout when the "Timeout" option is not added: the OpenAI SDK's,
/// which n8n's nodes keep then.
const SDK_TIMEOUT_SECS: f64 = 600.0;

/// n8n's "Options" of the chat models on OpenAI's chat completions API.
/// Options the user has not added are `None` and not sent, so the
/// provider's defaults apply.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct ChatCompletionsOptions {
    /// Penalises tokens by how often they already appear, to reduce repetition.
    #[param(default = 0, min = -2, max = 2, precision = 1)]
    pub frequency_penalty: Option<f64>,
    /// The most tokens to generate; -1 leaves it to the model.
    #[param(display_name = "Maximum Number of Tokens", default = -1)]
    pub max_tokens: Option<i64>,
    /// `json_object` makes the model answer with a JSON object (the prompt
    /// must then say "json").
    #[param(default = "text", options = ["text", "json_object"])]
    pub response_format: Option<String>,
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
    /// Milliseconds to wait for the server (600,000 when not added, the
    /// OpenAI SDK's default).
    #[param(default = 60000, min = 1)]
    pub timeout: Option<u64>,
    /// How often a failed request is tried again.
    #[param(default = 2, min = 0)]
    pub max_retries: Option<u32>,
    /// Nucleus sampling: only tokens within this probability mass are considered.
    #[param(display_name = "Top P", default = 1, min = 0, max = 1, precision = 1)]
    pub top_p: Option<f64>,
}

impl ChatCompletionsOptions {
    /// `config` with these options, as n8n passes them to LangChain's ChatOpenAI.
    pub fn apply(&self, mut config: OpenAiConfig) -> OpenAiConfig {
        config.settings = ModelSettings {
            temperature: self.temperature,
            // -1 (n8n's default) leaves the length to the model.
            max_tokens: self.max_tokens.and_then(|n| u64::try_from(n).ok()),
            top_p: self.top_p,
            frequency_penalty: self.frequency_penalty,
            presence_penalty: self.presence_penalty,
        };
        config.timeout_secs = self
            .timeout
            .map_or(SDK_TIMEOUT_SECS, |ms| ms as f64 / 1000.0);
        config.max_retries = self.max_retries.unwrap_or(2);
        if let Some(format) = &self.response_format {
            config
                .extra_body
                .insert("response_format".into(), json!({"type": format}));
        }
        config
    }
}

/// n8n's "Options" of the OpenAI Chat Model.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatOpenAiOptions {
    /// The API root, instead of the credential's (version 1 only).
    #[param(
        display_name = "Base URL",
        name = "baseURL",
        default = "https://api.openai.com/v1",
        display_options(show("@version" = [1]))
    )]
    pub base_url: Option<String>,
    /// The options every chat-completions model has.
    #[param(flatten)]
    pub common: ChatCompletionsOptions,
    /// How long reasoning models think: `low`, `medium` or `high`.
    #[param(default = "medium", options = ["low", "medium", "high"])]
    pub reasoning_effort: Option<String>,
}

/// Chat with OpenAI's models through the chat completions API.
#[ai_node(
    name = "lmChatOpenAi",
    display_name = "OpenAI Chat Model",
    output = chat_model,
    credentials = ["openAiApi"],
    icon = "fa:robot",
    version = [1, 1.1, 1.2, 1.3],
    default_version = 1.3
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatOpenAi {
    /// The model, e.g. `gpt-5-mini` (from version 1.2 n8n stores it as a
    /// model picked from a list; either form is read).
    #[param(default = "gpt-5-mini", required)]
    pub model: String,
    /// Use OpenAI's Responses API instead of chat completions (version 1.3).
    #[param(
        display_name = "Use Responses API",
        default = true,
        display_options(show("@version" = [1.3]))
    )]
    pub responses_api_enabled: Option<bool>,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatOpenAiOptions,
}

impl SupplyData for LmChatOpenAi {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        // n8n 1.3 uses the Responses API unless it is turned off.
        if ctx.type_version() == Some(1.3) && self.responses_api_enabled != Some(false) {
            return Err(nodekit::Error::NodeFailed {
                node: ctx.node_name().to_owned(),
                message: "nodekit runs the OpenAI Chat Model on the chat completions API: turn \"Use Responses API\" off (responsesApiEnabled: false)".into(),
            });
        }
        let o = &self.options;
        let mut config = crate::credentials::openai(ctx.credentials("openAiApi")?, &self.model)?;
        if let Some(url) = &o.base_url {
            config.base_url = url.clone();
        }
        let mut config = o.common.apply(config);
        if let Some(effort) = &o.reasoning_effort {
            config
                .extra_body
                .insert("reasoning_effort".into(), json!(effort));
        }
        Ok(ctx.create_chat_model(config)?.into())
    }
}

/// Chat with models deployed on Azure OpenAI.
#[ai_node(
    name = "lmChatAzureOpenAi",
    display_name = "Azure OpenAI Chat Model",
    output = chat_model,
    credentials = ["azureOpenAiApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatAzureOpenAi {
    /// How the node signs in: `azureOpenAiApi` (an API key; Entra ID's
    /// OAuth2 is not supported).
    #[param(
        default = "azureOpenAiApi",
        options = ["azureOpenAiApi", "azureEntraCognitiveServicesOAuth2Api"]
    )]
    pub authentication: String,
    /// The name of the model's deployment.
    #[param(display_name = "Model (Deployment) Name", default = "", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: ChatCompletionsOptions,
}

impl SupplyData for LmChatAzureOpenAi {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        if self.authentication != "azureOpenAiApi" {
            return Err(nodekit::Error::NodeFailed {
                node: ctx.node_name().to_owned(),
                message: format!(
                    "authentication `{}` is not supported; use an API key (azureOpenAiApi)",
                    self.authentication
                ),
            });
        }
        let config =
            crate::credentials::azure_openai(ctx.credentials("azureOpenAiApi")?, &self.model)?;
        Ok(ctx.create_chat_model(self.options.apply(config))?.into())
    }
}
