//! The OpenAI-compatible embeddings node.

use nodekit::embed::{EmbeddingsConfig, Encoding};
use nodekit::prelude::*;

/// Embeddings settings.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct EmbeddingsOptions {
    /// Shorter vectors, for models that support it (0 keeps the model's size).
    #[param(default = 0, min = 0)]
    pub dimensions: u32,
    /// Texts sent per request.
    #[param(default = 512, min = 1, max = 2048)]
    pub batch_size: u32,
    /// Ask for base64-encoded vectors (a quarter of the bytes).
    #[param(default = false)]
    pub base64: bool,
}

/// Turn text into vectors with any model served through the OpenAI embeddings API.
#[ai_node(
    name = "embeddingsOpenAiCompatible",
    display_name = "OpenAI-Compatible Embeddings",
    output = embeddings,
    credentials = ["openAiApi"],
    icon = "fa:vector-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsOpenAiCompatible {
    /// The embeddings model, e.g. `text-embedding-3-small` or `nomic-embed-text`.
    #[param(default = "text-embedding-3-small", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: EmbeddingsOptions,
}

impl SupplyData for EmbeddingsOpenAiCompatible {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let chat = crate::credentials::openai(ctx.credentials("openAiApi")?, &self.model)?;
        let config = EmbeddingsConfig {
            base_url: chat.base_url,
            dimensions: (self.options.dimensions > 0).then_some(self.options.dimensions),
            batch_size: self.options.batch_size as usize,
            encoding: if self.options.base64 {
                Encoding::Base64
            } else {
                Encoding::Float
            },
            azure_api_version: chat.azure_api_version,
            ..EmbeddingsConfig::new(chat.api_key, self.model)
        };
        Ok(ctx.create_embeddings(config)?.into())
    }
}
