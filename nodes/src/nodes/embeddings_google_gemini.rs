//! n8n's Google Gemini embeddings node (`embeddingsGoogleGemini`) on
//! nodekit's native Gemini client.

use nodekit::model::gemini::GeminiEmbeddingsConfig;
use nodekit::prelude::*;

/// Turn text into vectors with Google's Gemini embeddings models.
#[ai_node(
    name = "embeddingsGoogleGemini",
    display_name = "Embeddings Google Gemini",
    output = embeddings,
    credentials = ["googlePalmApi"],
    icon = "fa:vector-square"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsGoogleGemini {
    /// The model, e.g. `models/text-embedding-004`.
    #[param(default = "models/text-embedding-004", required)]
    pub model_name: String,
}

impl SupplyData for EmbeddingsGoogleGemini {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("googlePalmApi")?;
        let api_key = crate::credentials::required(credential, "googlePalmApi", "apiKey")?;
        let mut config = GeminiEmbeddingsConfig::new(api_key, self.model_name);
        // n8n's `host` is the API root.
        if let Some(host) = crate::credentials::text(credential, "host") {
            config.base_url = host.trim_end_matches('/').to_owned();
        }
        Ok(ctx.create_embeddings(config)?.into())
    }
}
