//! n8n's OpenAI Chat Model (`lmChatOpenAi`) and Azure OpenAI Chat Model
//! (`lmChatAzureOpenAi`) on nodekit's OpenAI client: a workflow exported
//! from n8n with either runs as it is. [`ChatCompletionsOptions`] is the
//! "Options" collection they share with the hosted providers' nodes.

use nodekit::model::ModelSettings;
use nodekit::model::openai::{OpenAiApi, OpenAiConfig};
use nodekit::prelude::*;
use serde_json::{Value, json};

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

/// n8n's "Response Format" of the Responses API (`textFormat.textOptions`).
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct TextOptions {
    /// `text`, `json_schema` (answers that follow `schema`) or `json_object`.
    #[param(name = "type", default = "text", options = ["text", "json_schema", "json_object"])]
    pub kind: String,
    /// How long the answer is: `low`, `medium` or `high`.
    #[param(default = "medium", options = ["low", "medium", "high"])]
    pub verbosity: Option<String>,
    /// The schema's name (`json_schema`).
    #[param(default = "my_schema")]
    pub name: Option<String>,
    /// The JSON Schema the answer follows (`json_schema`).
    pub schema: Option<Value>,
    /// What the schema is for (`json_schema`).
    pub description: Option<String>,
    /// Whether the answer must follow the schema exactly (`json_schema`).
    #[param(default = false)]
    pub strict: Option<bool>,
}

/// n8n's "Prompt": a reusable prompt kept in OpenAI's dashboard.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct PromptOptions {
    /// The prompt's identifier.
    #[param(display_name = "Prompt ID", default = "")]
    pub prompt_id: String,
    /// The prompt's version (its latest when empty).
    pub version: Option<String>,
    /// The values of the prompt's variables, as a JSON object.
    pub variables: Option<Value>,
}

/// OpenAI's web search, run on OpenAI's side.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct WebSearchOptions {
    /// How much of the pages found the model reads: `low`, `medium` or `high`.
    #[param(default = "medium", options = ["low", "medium", "high"])]
    pub search_context_size: Option<String>,
    /// Only these domains, separated by commas.
    pub allowed_domains: Option<String>,
    /// The user's country (two letters, e.g. `US`), to localise results.
    pub country: Option<String>,
    /// The user's city.
    pub city: Option<String>,
    /// The user's region.
    pub region: Option<String>,
}

/// OpenAI's search of its vector stores, run on OpenAI's side.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct FileSearchOptions {
    /// The vector stores to search, as a JSON list of ids.
    #[param(display_name = "Vector Store IDs", default = "[]")]
    pub vector_store_ids: Option<Value>,
    /// A filter on the files' attributes, as JSON.
    #[param(default = "{}")]
    pub filters: Option<Value>,
    /// The most results to return.
    #[param(default = 1, min = 1)]
    pub max_results: Option<u64>,
}

/// n8n's "Built-in Tools": OpenAI's own tools (Responses API).
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct BuiltInTools {
    /// Search the web.
    #[param(collection)]
    pub web_search: Option<WebSearchOptions>,
    /// Search files in OpenAI's vector stores.
    #[param(collection)]
    pub file_search: Option<FileSearchOptions>,
    /// Run code in a sandbox on OpenAI's side.
    #[param(default = true)]
    pub code_interpreter: Option<bool>,
}

impl BuiltInTools {
    /// The tools as the Responses API takes them, as n8n builds them.
    fn hosted_tools(&self) -> Vec<Value> {
        let mut tools = Vec::new();
        if let Some(web) = &self.web_search {
            let mut tool = json!({"type": "web_search",
                "search_context_size": web.search_context_size.as_deref().unwrap_or("medium")});
            let place = [
                ("country", &web.country),
                ("city", &web.city),
                ("region", &web.region),
            ];
            if place.iter().any(|(_, v)| v.is_some()) {
                let mut location = json!({"type": "approximate"});
                for (key, value) in place {
                    if let Some(value) = value {
                        location[key] = json!(value);
                    }
                }
                tool["user_location"] = location;
            }
            if let Some(domains) = &web.allowed_domains {
                let domains: Vec<&str> = domains
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .collect();
                tool["filters"] = json!({"allowed_domains": domains});
            }
            tools.push(tool);
        }
        if self.code_interpreter == Some(true) {
            tools.push(json!({"type": "code_interpreter", "container": {"type": "auto"}}));
        }
        if let Some(files) = &self.file_search {
            let ids = files.vector_store_ids.clone().unwrap_or_else(|| json!([]));
            let mut tool = json!({"type": "file_search", "vector_store_ids": ids});
            if let Some(filters) = files.filters.as_ref().filter(|f| !is_empty(f)) {
                tool["filters"] = filters.clone();
            }
            if let Some(n) = files.max_results {
                tool["max_num_results"] = json!(n);
            }
            tools.push(tool);
        }
        tools
    }
}

/// Whether a JSON parameter holds nothing (`null` or `{}`), which n8n
/// leaves out of a request.
fn is_empty(v: &Value) -> bool {
    v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty)
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
    /// The answer's format (Responses API).
    #[param(
        display_name = "Response Format",
        fixed_collection = "textOptions",
        display_options(show("@version" = [1.3]))
    )]
    pub text_format: Vec<TextOptions>,
    /// A conversation OpenAI keeps, to add this turn to (Responses API).
    #[param(display_name = "Conversation ID", display_options(show("@version" = [1.3])))]
    pub conversation_id: Option<String>,
    /// A key that groups requests for OpenAI's prompt cache (Responses API).
    #[param(display_options(show("@version" = [1.3])))]
    pub prompt_cache_key: Option<String>,
    /// A stable id of the end user, for OpenAI's abuse detection (Responses API).
    #[param(display_options(show("@version" = [1.3])))]
    pub safety_identifier: Option<String>,
    /// The processing tier: `auto`, `flex`, `default` or `priority` (Responses API).
    #[param(
        default = "auto",
        options = ["auto", "flex", "default", "priority"],
        display_options(show("@version" = [1.3]))
    )]
    pub service_tier: Option<String>,
    /// Key-value pairs stored with the response, as a JSON object (Responses API).
    #[param(default = "{}", display_options(show("@version" = [1.3])))]
    pub metadata: Option<Value>,
    /// How many likeliest tokens to return at each position (Responses API).
    #[param(default = 0, min = 0, max = 20, display_options(show("@version" = [1.3])))]
    pub top_logprobs: Option<u64>,
    /// A reusable prompt from OpenAI's dashboard (Responses API).
    #[param(
        display_name = "Prompt",
        fixed_collection = "promptOptions",
        display_options(show("@version" = [1.3]))
    )]
    pub prompt_config: Vec<PromptOptions>,
}

impl LmChatOpenAiOptions {
    /// The body fields of the Responses API these options set, as n8n's
    /// node sends them.
    fn responses_body(&self) -> serde_json::Map<String, Value> {
        let mut body = serde_json::Map::new();
        let mut put = |key: &str, value: Value| {
            body.insert(key.into(), value);
        };
        for (key, value) in [
            ("prompt_cache_key", &self.prompt_cache_key),
            ("safety_identifier", &self.safety_identifier),
            ("service_tier", &self.service_tier),
            ("conversation", &self.conversation_id),
        ] {
            if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                put(key, json!(value));
            }
        }
        if let Some(n) = self.top_logprobs {
            put("top_logprobs", json!(n));
        }
        if let Some(metadata) = &self.metadata {
            put("metadata", metadata.clone());
        }
        if let Some(prompt) = self.prompt_config.first() {
            let mut wire = json!({"id": prompt.prompt_id});
            if let Some(version) = prompt.version.as_deref().filter(|v| !v.is_empty()) {
                wire["version"] = json!(version);
            }
            if let Some(variables) = prompt.variables.as_ref().filter(|v| !is_empty(v)) {
                wire["variables"] = variables.clone();
            }
            put("prompt", wire);
        }
        if let Some(text) = self.text_format.first() {
            let mut format = json!({"type": text.kind});
            if text.kind == "json_schema" {
                format["name"] = json!(text.name.as_deref().unwrap_or("my_schema"));
                format["schema"] = text.schema.clone().unwrap_or_else(|| json!({}));
                if let Some(description) = text.description.as_deref().filter(|d| !d.is_empty()) {
                    format["description"] = json!(description);
                }
                if let Some(strict) = text.strict {
                    format["strict"] = json!(strict);
                }
            }
            let mut wire = json!({"format": format});
            if let Some(verbosity) = &text.verbosity {
                wire["verbosity"] = json!(verbosity);
            }
            put("text", wire);
        }
        if let Some(effort) = &self.reasoning_effort {
            put("reasoning", json!({"effort": effort}));
        }
        body
    }
}

/// Chat with OpenAI's models, through the Responses API (version 1.3,
/// unless turned off) or chat completions.
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
    /// OpenAI's own tools, run on OpenAI's side (Responses API).
    #[param(
        collection,
        display_name = "Built-in Tools",
        placeholder = "Add Built-in Tool",
        display_options(show("@version" = [1.3]))
    )]
    pub built_in_tools: Option<BuiltInTools>,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatOpenAiOptions,
}

impl SupplyData for LmChatOpenAi {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let o = &self.options;
        let mut config = crate::credentials::openai(ctx.credentials("openAiApi")?, &self.model)?;
        if let Some(url) = &o.base_url {
            config.base_url = url.clone();
        }
        let mut config = o.common.apply(config);
        // n8n 1.3 uses the Responses API unless it is turned off.
        if ctx.type_version() == Some(1.3) && self.responses_api_enabled != Some(false) {
            config.api = OpenAiApi::Responses;
            // The Responses API has no such fields; n8n does not send them.
            config.settings.frequency_penalty = None;
            config.settings.presence_penalty = None;
            config.extra_body = o.responses_body();
            if let Some(tools) = &self.built_in_tools {
                config.hosted_tools = tools.hosted_tools();
            }
        } else if let Some(effort) = &o.reasoning_effort {
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
