//! [`GeminiEmbedder`]: `embedContent` and `batchEmbedContents`.

use std::sync::Arc;

use futures::future::BoxFuture;
use nodekit_core::embed::Embedder;
use nodekit_core::error::Result;
use nodekit_core::model::{ModelError, ModelErrorKind};
use nodekit_http::{Authenticate, Transport};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::{
    default_api_version, default_base_url, default_retries, default_timeout, model_path, transport,
};

/// Most texts Gemini embeds in one `batchEmbedContents` request.
const MAX_BATCH: usize = 100;

/// Settings of a Gemini embeddings model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GeminiEmbeddingsConfig {
    /// The API key, sent as `x-goog-api-key`.
    pub api_key: String,
    /// The model, e.g. `gemini-embedding-001` (a `models/` prefix is taken off).
    pub model: String,
    /// API root, as for chat models.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The API version in the path.
    #[serde(default = "default_api_version")]
    pub api_version: String,
    /// What the vectors are for (`RETRIEVAL_DOCUMENT`, `RETRIEVAL_QUERY`,
    /// `SEMANTIC_SIMILARITY`, …); `None` leaves the model's default.
    #[serde(default)]
    pub task_type: Option<String>,
    /// Shorter vectors (`outputDimensionality`), for models that support it.
    #[serde(default)]
    pub dimensions: Option<u32>,
    /// Texts per request (default and most: 100).
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    /// Seconds to wait for a connection and between reads (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 5xx or a broken connection (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// How requests authenticate instead of by `x-goog-api-key`.
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

fn default_batch() -> usize {
    MAX_BATCH
}

impl std::fmt::Debug for GeminiEmbeddingsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiEmbeddingsConfig")
            .field("api_key", &"***")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("task_type", &self.task_type)
            .field("dimensions", &self.dimensions)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl GeminiEmbeddingsConfig {
    /// Settings for `model` with `api_key` and every default.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        GeminiEmbeddingsConfig {
            api_key: api_key.into(),
            model: model.into(),
            base_url: default_base_url(),
            api_version: default_api_version(),
            task_type: None,
            dimensions: None,
            batch_size: default_batch(),
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            authenticate: None,
        }
    }

    /// The same settings with another API root.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }
}

/// `ctx.create_embeddings(config)` makes a [`GeminiEmbedder`].
impl nodekit_core::node::IntoEmbedder for GeminiEmbeddingsConfig {
    fn into_embedder(self) -> Result<Arc<dyn Embedder>> {
        Ok(Arc::new(GeminiEmbedder::new(self)?))
    }
}

/// An embeddings model behind Gemini's API.
#[derive(Debug, Clone)]
pub struct GeminiEmbedder {
    model: String,
    path: String,
    task_type: Option<String>,
    dimensions: Option<u32>,
    batch_size: usize,
    transport: Transport,
}

impl GeminiEmbedder {
    /// A client for `config`.
    pub fn new(config: GeminiEmbeddingsConfig) -> Result<Self> {
        let name = model_path(&config.model)?;
        let timeout = nodekit_http::timeout_secs(config.timeout_secs)?;
        let transport = transport(
            &config.base_url,
            &config.api_key,
            config.authenticate.clone(),
        )?
        .timeout(timeout)
        .max_retries(config.max_retries)
        .build()?;
        Ok(GeminiEmbedder {
            path: format!("{}/models/{name}", config.api_version.trim_matches('/')),
            model: name,
            task_type: config.task_type,
            dimensions: config.dimensions,
            batch_size: config.batch_size.clamp(1, MAX_BATCH),
            transport,
        })
    }

    /// One `EmbedContentRequest`.
    fn request(&self, text: &str, with_model: bool) -> Value {
        let mut request = json!({"content": {"parts": [{"text": text}]}});
        if with_model {
            request["model"] = json!(format!("models/{}", self.model));
        }
        if let Some(task) = &self.task_type {
            request["taskType"] = json!(task);
        }
        if let Some(d) = self.dimensions {
            request["outputDimensionality"] = json!(d);
        }
        request
    }

    async fn post(&self, method: &str, body: Value) -> Result<Value, ModelError> {
        let body = bytes::Bytes::from(body.to_string());
        let answer = self
            .transport
            .post(&format!("{}:{method}", self.path), &body, None, true)
            .await?;
        self.transport.read_json(answer, None).await
    }

    async fn embed_inner(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out = Vec::with_capacity(texts.len());
        if let [text] = texts {
            let v = self.post("embedContent", self.request(text, false)).await?;
            out.push(values(v.get("embedding"))?);
            return Ok(out);
        }
        for batch in texts.chunks(self.batch_size) {
            let requests: Vec<Value> = batch.iter().map(|t| self.request(t, true)).collect();
            let v = self
                .post("batchEmbedContents", json!({"requests": requests}))
                .await?;
            let embeddings = v
                .get("embeddings")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if embeddings.len() != batch.len() {
                return Err(ModelError::new(
                    ModelErrorKind::Protocol,
                    format!(
                        "{} texts were sent and {} vectors came back",
                        batch.len(),
                        embeddings.len()
                    ),
                ));
            }
            for e in embeddings {
                out.push(values(Some(e))?);
            }
        }
        Ok(out)
    }
}

/// `{"values": [...]}` as a vector.
fn values(embedding: Option<&Value>) -> Result<Vec<f32>, ModelError> {
    embedding
        .and_then(|e| e.get("values"))
        .and_then(Value::as_array)
        .and_then(|v| v.iter().map(|x| x.as_f64().map(|x| x as f32)).collect())
        .ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Protocol,
                "an embedding has no numeric `values`",
            )
        })
}

impl Embedder for GeminiEmbedder {
    fn name(&self) -> &str {
        &self.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            if texts.is_empty() {
                return Ok(Vec::new());
            }
            self.embed_inner(texts)
                .await
                .map_err(|e| self.transport.scrub(e).into())
        })
    }
}
