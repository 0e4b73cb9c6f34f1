//! n8n's Ollama embeddings node (`embeddingsOllama`) on nodekit's native
//! Ollama client.

use nodekit::model::ollama::OllamaEmbeddingsConfig;
use nodekit::prelude::*;

/// Turn text into vectors with an embeddings model served by Ollama.
#[ai_node(
    name = "embeddingsOllama",
    display_name = "Embeddings Ollama",
    output = embeddings,
    credentials = ["ollamaApi"],
    icon = "fa:vector-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsOllama {
    /// The model, e.g. `nomic-embed-text`.
    #[param(default = "llama3.2", required)]
    pub model: String,
}

impl SupplyData for EmbeddingsOllama {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("ollamaApi")?;
        let base_url = crate::credentials::required(credential, "ollamaApi", "baseUrl")?;
        let mut config = OllamaEmbeddingsConfig::new(self.model).base_url(base_url);
        config.api_key = crate::credentials::text(credential, "apiKey").map(str::to_owned);
        Ok(ctx.create_embeddings(config)?.into())
    }
}
