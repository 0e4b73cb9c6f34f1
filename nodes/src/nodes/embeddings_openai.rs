//! n8n's OpenAI, Azure OpenAI and Mistral Cloud embeddings nodes
//! (`embeddingsOpenAi`, `embeddingsAzureOpenAi`, `embeddingsMistralCloud`)
//! on nodekit's OpenAI client: a workflow exported from n8n with one of
//! them runs as it is.

use nodekit::embed::{EmbeddingsConfig, Encoding};
use nodekit::prelude::*;

/// n8n's "Options" of its OpenAI-API embeddings nodes. Options the user
/// has not added keep LangChain's defaults, as in n8n.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct EmbeddingsApiOptions {
    /// Shorter vectors, for models that support it (256 to 3072).
    #[param(min = 1)]
    pub dimensions: Option<u32>,
    /// Texts sent per request.
    #[param(default = 512, min = 1, max = 2048)]
    pub batch_size: Option<u32>,
    /// Replace newlines by spaces before embedding (on when not added).
    #[param(default = true)]
    pub strip_new_lines: Option<bool>,
    /// Milliseconds to wait for the server; -1 keeps the default.
    #[param(default = -1)]
    pub timeout: Option<i64>,
    /// `float`, or `base64` (a quarter of the bytes).
    #[param(options = ["float", "base64"])]
    pub encoding_format: Option<String>,
}

impl EmbeddingsApiOptions {
    /// `config` with these options.
    fn apply(&self, mut config: EmbeddingsConfig) -> EmbeddingsConfig {
        config.dimensions = self.dimensions;
        config.batch_size = self.batch_size.unwrap_or(512) as usize;
        config.strip_newlines = self.strip_new_lines.unwrap_or(true);
        if let Some(ms) = self.timeout.filter(|ms| *ms > 0) {
            config.timeout_secs = ms as f64 / 1000.0;
        }
        if self.encoding_format.as_deref() == Some("base64") {
            config.encoding = Encoding::Base64;
        }
        config
    }
}

/// n8n's "Options" of the OpenAI embeddings node.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct EmbeddingsOpenAiOptions {
    /// The API root, instead of the credential's (versions 1 and 1.1).
    #[param(
        display_name = "Base URL",
        name = "baseURL",
        default = "https://api.openai.com/v1",
        display_options(show("@version" = [1, 1.1]))
    )]
    pub base_url: Option<String>,
    /// The options every OpenAI-API embeddings node has.
    #[param(flatten)]
    pub common: EmbeddingsApiOptions,
}

/// Turn text into vectors with OpenAI's embeddings models.
#[ai_node(
    name = "embeddingsOpenAi",
    display_name = "Embeddings OpenAI",
    output = embeddings,
    credentials = ["openAiApi"],
    icon = "fa:vector-square",
    version = [1, 1.1, 1.2],
    default_version = 1.2
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsOpenAi {
    /// The model (`text-embedding-3-small` when not set; version 1:
    /// `text-embedding-ada-002`).
    #[param(default = "text-embedding-3-small")]
    pub model: Option<String>,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: EmbeddingsOpenAiOptions,
}

impl SupplyData for EmbeddingsOpenAi {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let model = self.model.unwrap_or_else(|| {
            match ctx.type_version() {
                Some(v) if v < 1.1 => "text-embedding-ada-002",
                _ => "text-embedding-3-small",
            }
            .to_owned()
        });
        let chat = crate::credentials::openai(ctx.credentials("openAiApi")?, &model)?;
        let mut config = EmbeddingsConfig::new(chat.api_key, model);
        config.base_url = self.options.base_url.unwrap_or(chat.base_url);
        Ok(ctx
            .create_embeddings(self.options.common.apply(config))?
            .into())
    }
}

/// Turn text into vectors with an embeddings model deployed on Azure OpenAI.
#[ai_node(
    name = "embeddingsAzureOpenAi",
    display_name = "Embeddings Azure OpenAI",
    output = embeddings,
    credentials = ["azureOpenAiApi"],
    icon = "fa:vector-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsAzureOpenAi {
    /// The name of the model's deployment.
    #[param(display_name = "Model (Deployment) Name", default = "", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: EmbeddingsApiOptions,
}

impl SupplyData for EmbeddingsAzureOpenAi {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let chat =
            crate::credentials::azure_openai(ctx.credentials("azureOpenAiApi")?, &self.model)?;
        let mut config = EmbeddingsConfig::new(chat.api_key, self.model);
        config.base_url = chat.base_url;
        config.azure_api_version = chat.azure_api_version;
        Ok(ctx.create_embeddings(self.options.apply(config))?.into())
    }
}

/// n8n's "Options" of the Mistral Cloud embeddings node.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct EmbeddingsMistralCloudOptions {
    /// Texts sent per request.
    #[param(default = 512, min = 1, max = 2048)]
    pub batch_size: Option<u32>,
    /// Replace newlines by spaces before embedding (on when not added).
    #[param(default = true)]
    pub strip_new_lines: Option<bool>,
}

/// Turn text into vectors with Mistral's embeddings models.
#[ai_node(
    name = "embeddingsMistralCloud",
    display_name = "Embeddings Mistral Cloud",
    output = embeddings,
    credentials = ["mistralCloudApi"],
    icon = "fa:vector-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsMistralCloud {
    /// The model, e.g. `mistral-embed`.
    #[param(default = "mistral-embed", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: EmbeddingsMistralCloudOptions,
}

impl SupplyData for EmbeddingsMistralCloud {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("mistralCloudApi")?;
        let chat = crate::credentials::openai_host(
            credential,
            "mistralCloudApi",
            "https://api.mistral.ai/v1",
            &self.model,
        )?;
        let mut config = EmbeddingsConfig::new(chat.api_key, self.model);
        config.base_url = chat.base_url;
        config.batch_size = self.options.batch_size.unwrap_or(512) as usize;
        config.strip_newlines = self.options.strip_new_lines.unwrap_or(true);
        Ok(ctx.create_embeddings(config)?.into())
    }
}
