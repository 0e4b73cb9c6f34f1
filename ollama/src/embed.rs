//! [`OllamaEmbedder`]: Ollama's `/api/embed`.

use std::sync::Arc;

use nodekit_core::embed::Embedder;
use nodekit_core::error::Result;
use nodekit_core::model::{BoxFuture, ModelError, ModelErrorKind};
use nodekit_http::{Authenticate, Transport};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::OLLAMA_BASE_URL;

/// Settings of an Ollama embeddings model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OllamaEmbeddingsConfig {
    /// The model, e.g. `nomic-embed-text`.
    pub model: String,
    /// The server's root: [`OLLAMA_BASE_URL`] by default.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// A bearer token, for an Ollama behind a proxy that asks for one.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Texts per request (default 512).
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    /// How long the model stays loaded after the call (`"5m"`, or seconds).
    #[serde(default)]
    pub keep_alive: Option<Value>,
    /// Seconds to wait for a connection and between reads (default 300).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 5xx or a broken connection (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// How requests authenticate instead of by `api_key`.
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

fn default_base_url() -> String {
    OLLAMA_BASE_URL.into()
}
fn default_batch() -> usize {
    512
}
fn default_timeout() -> f64 {
    300.0
}
fn default_retries() -> u32 {
    2
}

impl std::fmt::Debug for OllamaEmbeddingsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OllamaEmbeddingsConfig")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl OllamaEmbeddingsConfig {
    /// Settings for `model` on a local Ollama, with every default.
    pub fn new(model: impl Into<String>) -> Self {
        OllamaEmbeddingsConfig {
            model: model.into(),
            base_url: default_base_url(),
            api_key: None,
            batch_size: default_batch(),
            keep_alive: None,
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            authenticate: None,
        }
    }

    /// The same settings with another server root.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }
}

/// `ctx.create_embeddings(config)` makes an [`OllamaEmbedder`].
impl nodekit_core::node::IntoEmbedder for OllamaEmbeddingsConfig {
    fn into_embedder(self) -> Result<Arc<dyn Embedder>> {
        Ok(Arc::new(OllamaEmbedder::new(self)?))
    }
}

/// An embeddings model served by Ollama.
#[derive(Debug, Clone)]
pub struct OllamaEmbedder {
    model: String,
    batch_size: usize,
    keep_alive: Option<Value>,
    transport: Transport,
}

impl OllamaEmbedder {
    /// A client for `config`.
    pub fn new(config: OllamaEmbeddingsConfig) -> Result<Self> {
        let transport = crate::config::transport(
            &config.base_url,
            config.api_key,
            config.authenticate,
            config.timeout_secs,
        )?
        .max_retries(config.max_retries)
        .max_response_bytes(256 * 1024 * 1024)
        .build()?;
        Ok(OllamaEmbedder {
            model: config.model,
            batch_size: config.batch_size.max(1),
            keep_alive: config.keep_alive,
            transport,
        })
    }

    async fn batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut body = json!({"model": self.model, "input": texts});
        if let Some(keep_alive) = &self.keep_alive {
            body["keep_alive"] = keep_alive.clone();
        }
        let body = bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
        let response = self.transport.post("api/embed", &body, None, true).await?;
        let value = self.transport.read_json(response, None).await?;
        vectors(&value, texts.len())
    }
}

impl Embedder for OllamaEmbedder {
    fn name(&self) -> &str {
        &self.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(texts.len());
            for batch in texts.chunks(self.batch_size) {
                let vectors = self
                    .batch(batch)
                    .await
                    .map_err(|e| self.transport.scrub(e))?;
                out.extend(vectors);
            }
            Ok(out)
        })
    }
}

/// `embeddings`: one list of numbers per text, in order.
fn vectors(v: &Value, expected: usize) -> Result<Vec<Vec<f32>>, ModelError> {
    let protocol = |m: String| ModelError::new(ModelErrorKind::Protocol, m);
    let lists = v
        .get("embeddings")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            protocol(format!(
                "the embeddings answer has no `embeddings` list: {}",
                nodekit_core::error::shorten(&v.to_string(), 200)
            ))
        })?;
    if lists.len() != expected {
        return Err(protocol(format!(
            "asked for {expected} embeddings, got {}",
            lists.len()
        )));
    }
    lists
        .iter()
        .enumerate()
        .map(|(i, list)| {
            list.as_array()
                .and_then(|numbers| {
                    numbers
                        .iter()
                        .map(|n| n.as_f64().map(|f| f as f32))
                        .collect::<Option<Vec<f32>>>()
                })
                .ok_or_else(|| protocol(format!("embedding {i} is not a list of numbers")))
        })
        .collect()
}
