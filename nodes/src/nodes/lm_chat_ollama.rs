//! n8n's Ollama Chat Model (`lmChatOllama`) on nodekit's native Ollama
//! client: a workflow exported from n8n with this node runs as it is.

use nodekit::model::ModelSettings;
use nodekit::model::ollama::OllamaConfig;
use nodekit::prelude::*;
use serde_json::{Value, json};

nodekit::n8n_credentials!("ollamaApi");

/// n8n's "Options" of the Ollama Chat Model. Options the user has not
/// added are `None` and not sent, so the model's own defaults apply.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct LmChatOllamaOptions {
    /// Randomness of the answer: 0 is focused, 1 is most random.
    #[param(
        display_name = "Sampling Temperature",
        default = 0.7,
        min = 0,
        max = 1,
        precision = 1
    )]
    pub temperature: Option<f64>,
    /// Sample only from the likeliest tokens; -1 turns it off.
    #[param(display_name = "Top K", default = -1, min = -1, max = 100)]
    pub top_k: Option<i64>,
    /// Nucleus sampling: only tokens within this probability mass are considered.
    #[param(display_name = "Top P", default = 1, min = 0, max = 1, precision = 1)]
    pub top_p: Option<f64>,
    /// Penalises tokens by how often they already appear.
    #[param(default = 0, min = 0)]
    pub frequency_penalty: Option<f64>,
    /// How long the model stays loaded after the call, e.g. `5m`.
    #[param(default = "5m")]
    pub keep_alive: Option<String>,
    /// Use less video memory, more slowly.
    #[param(display_name = "Low VRAM Mode", default = false)]
    pub low_vram: Option<bool>,
    /// The GPU that computes what is not split across GPUs.
    #[param(display_name = "Main GPU ID", default = 0)]
    pub main_gpu: Option<i64>,
    /// Tokens read at once while reading the prompt.
    #[param(display_name = "Context Batch Size", default = 512)]
    pub num_batch: Option<i64>,
    /// The context window, in tokens.
    #[param(display_name = "Context Length", default = 2048)]
    pub num_ctx: Option<i64>,
    /// Layers put on GPUs; -1 lets Ollama decide.
    #[param(display_name = "Number of GPUs", default = -1)]
    pub num_gpu: Option<i64>,
    /// The most tokens to generate; -1 has no limit.
    #[param(display_name = "Max Tokens to Generate", default = -1)]
    pub num_predict: Option<i64>,
    /// CPU threads; 0 lets Ollama decide.
    #[param(display_name = "Number of CPU Threads", default = 0)]
    pub num_thread: Option<i64>,
    /// Penalise newlines like other repeated tokens.
    #[param(default = true)]
    pub penalize_newline: Option<bool>,
    /// Penalises tokens that already appear.
    #[param(default = 0)]
    pub presence_penalty: Option<f64>,
    /// How strongly repeated tokens are penalised (1 is not at all).
    #[param(default = 1)]
    pub repeat_penalty: Option<f64>,
    /// Lock the model in memory.
    #[param(
        display_name = "Use Memory Locking",
        name = "useMLock",
        default = false
    )]
    pub use_mlock: Option<bool>,
    /// Map the model's file into memory.
    #[param(display_name = "Use Memory Mapping", name = "useMMap", default = true)]
    pub use_mmap: Option<bool>,
    /// Load only the vocabulary, not the weights.
    #[param(display_name = "Load Vocabulary Only", default = false)]
    pub vocab_only: Option<bool>,
    /// `json` makes the model answer with JSON.
    #[param(display_name = "Output Format", default = "default", options = ["default", "json"])]
    pub format: Option<String>,
}

impl LmChatOllamaOptions {
    /// Ollama's runtime options these set, by Ollama's names.
    fn runtime(&self) -> serde_json::Map<String, Value> {
        let numbers = [
            ("main_gpu", self.main_gpu),
            ("num_batch", self.num_batch),
            ("num_ctx", self.num_ctx),
            ("num_gpu", self.num_gpu),
            ("num_predict", self.num_predict),
            ("num_thread", self.num_thread),
            // -1 (n8n's default) turns top-k off.
            ("top_k", self.top_k.filter(|k| *k >= 0)),
        ];
        let flags = [
            ("low_vram", self.low_vram),
            ("penalize_newline", self.penalize_newline),
            ("use_mlock", self.use_mlock),
            ("use_mmap", self.use_mmap),
            ("vocab_only", self.vocab_only),
        ];
        let mut options = serde_json::Map::new();
        for (key, value) in numbers {
            if let Some(value) = value {
                options.insert(key.into(), json!(value));
            }
        }
        for (key, value) in flags {
            if let Some(value) = value {
                options.insert(key.into(), json!(value));
            }
        }
        if let Some(penalty) = self.repeat_penalty {
            options.insert("repeat_penalty".into(), json!(penalty));
        }
        options
    }
}

/// Chat with models served by Ollama.
#[ai_node(
    name = "lmChatOllama",
    display_name = "Ollama Chat Model",
    output = chat_model,
    credentials = ["ollamaApi"],
    icon = "fa:robot"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct LmChatOllama {
    /// The model, e.g. `llama3.2`.
    #[param(default = "llama3.2", required)]
    pub model: String,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: LmChatOllamaOptions,
}

impl SupplyData for LmChatOllama {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credential = ctx.credentials("ollamaApi")?;
        let base_url = crate::credentials::required(credential, "ollamaApi", "baseUrl")?;
        let o = &self.options;
        let mut config = OllamaConfig::new(&self.model).base_url(base_url);
        config.api_key = crate::credentials::text(credential, "apiKey").map(str::to_owned);
        config.settings = ModelSettings {
            temperature: o.temperature,
            top_p: o.top_p,
            frequency_penalty: o.frequency_penalty,
            presence_penalty: o.presence_penalty,
            ..ModelSettings::default()
        };
        config.options = o.runtime();
        config.keep_alive = o.keep_alive.as_ref().map(|k| json!(k));
        config.format = o
            .format
            .as_deref()
            .filter(|f| *f == "json")
            .map(|f| json!(f));
        Ok(ctx.create_chat_model(config)?.into())
    }
}
