//! The OpenAI-compatible `/embeddings` client.

use std::sync::Arc;

use futures::future::BoxFuture;

use base64::Engine;
use nodekit_core::model::CancelToken;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use nodekit_core::embed::Embedder;
use nodekit_core::error::Result;
use nodekit_core::model::{ModelError, ModelErrorKind};
use nodekit_http::{Authenticate, Transport};

/// How vectors travel over the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// JSON numbers.
    #[default]
    Float,
    /// Little-endian `f32`s in base64: about a quarter of the bytes.
    Base64,
}

/// Settings of an OpenAI-compatible embeddings model.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingsConfig {
    /// The API key.
    pub api_key: String,
    /// The model, e.g. `text-embedding-3-small`.
    pub model: String,
    /// API root, as for chat models.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Shorter vectors, for models that support it.
    #[serde(default)]
    pub dimensions: Option<u32>,
    /// Texts per request (default 512; OpenAI allows 2048).
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    /// Wire encoding (default float).
    #[serde(default)]
    pub encoding: Encoding,
    /// Seconds to wait for a connection and between reads (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Extra attempts after 429, 5xx or a broken connection (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Set for Azure OpenAI: the `api-version`.
    #[serde(default)]
    pub azure_api_version: Option<String>,
    /// Replace each newline of a text by a space before it is sent, as
    /// LangChain's (and so n8n's) embeddings do by default (default off).
    #[serde(default)]
    pub strip_newlines: bool,
    /// How requests authenticate instead of by `api_key`, as for chat
    /// models ([`OpenAiConfig::authenticate`](crate::OpenAiConfig::authenticate)).
    #[serde(skip)]
    pub authenticate: Option<Arc<dyn Authenticate>>,
}

impl std::fmt::Debug for EmbeddingsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingsConfig")
            .field("api_key", &"***")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("dimensions", &self.dimensions)
            .field("batch_size", &self.batch_size)
            .field("authenticate", &self.authenticate)
            .finish_non_exhaustive()
    }
}

fn default_base_url() -> String {
    crate::chat::OPENAI_BASE_URL.into()
}
fn default_batch() -> usize {
    512
}
fn default_timeout() -> f64 {
    60.0
}
fn default_retries() -> u32 {
    2
}

impl EmbeddingsConfig {
    /// Settings for `model` with every default.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        EmbeddingsConfig {
            api_key: api_key.into(),
            model: model.into(),
            base_url: default_base_url(),
            dimensions: None,
            batch_size: default_batch(),
            encoding: Encoding::Float,
            timeout_secs: default_timeout(),
            max_retries: default_retries(),
            azure_api_version: None,
            strip_newlines: false,
            authenticate: None,
        }
    }

    /// The same settings, requests authenticated by `auth` instead of by
    /// the API key.
    pub fn auth(mut self, auth: impl Authenticate + 'static) -> Self {
        self.authenticate = Some(Arc::new(auth));
        self
    }
}

/// `ctx.create_embeddings(config)` makes an [`OpenAiEmbedder`].
impl nodekit_core::node::IntoEmbedder for EmbeddingsConfig {
    fn into_embedder(self) -> Result<Arc<dyn Embedder>> {
        Ok(Arc::new(OpenAiEmbedder::new(self)?))
    }
}

/// An embeddings model behind an OpenAI-compatible API.
#[derive(Debug, Clone)]
pub struct OpenAiEmbedder {
    model: String,
    dimensions: Option<u32>,
    batch_size: usize,
    encoding: Encoding,
    strip_newlines: bool,
    transport: Transport,
}

impl OpenAiEmbedder {
    /// A client for `config`.
    pub fn new(config: EmbeddingsConfig) -> Result<Self> {
        let timeout = nodekit_http::timeout_secs(config.timeout_secs)?;
        let transport = crate::chat::transport(
            config.base_url,
            &config.api_key,
            config.azure_api_version,
            config.authenticate,
        )?
        .timeout(timeout)
        .max_retries(config.max_retries)
        .max_response_bytes(256 * 1024 * 1024)
        .build()?;
        Ok(OpenAiEmbedder {
            model: config.model,
            dimensions: config.dimensions,
            batch_size: config.batch_size.max(1),
            encoding: config.encoding,
            strip_newlines: config.strip_newlines,
            transport,
        })
    }

    async fn batch(&self, texts: &[String], cancel: Option<&CancelToken>) -> Result<Vec<Vec<f32>>> {
        let input = if self.strip_newlines {
            json!(
                texts
                    .iter()
                    .map(|t| t.replace('\n', " "))
                    .collect::<Vec<_>>()
            )
        } else {
            json!(texts)
        };
        let mut body =
            json!({"model": self.model, "input": input, "encoding_format": self.encoding});
        if let Some(d) = self.dimensions {
            body["dimensions"] = json!(d);
        }
        let body = bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
        let response = self
            .transport
            .post("embeddings", &body, cancel, true)
            .await?;
        let bytes = self.transport.read_capped(response).await?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            ModelError::new(
                ModelErrorKind::Protocol,
                format!("the embeddings answer is not JSON ({e})"),
            )
        })?;
        Ok(parse_embeddings(&value, texts.len())?)
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(texts.len());
            for batch in texts.chunks(self.batch_size) {
                out.extend(self.batch(batch, None).await?);
            }
            Ok(out)
        })
    }
}

/// `data[].embedding` (numbers or base64), ordered by `index`.
fn parse_embeddings(v: &Value, expected: usize) -> std::result::Result<Vec<Vec<f32>>, ModelError> {
    let protocol = |m: String| ModelError::new(ModelErrorKind::Protocol, m);
    let data = v.get("data").and_then(Value::as_array).ok_or_else(|| {
        protocol(format!(
            "the embeddings answer has no `data` list: {}",
            nodekit_core::error::shorten(&v.to_string(), 200)
        ))
    })?;
    if data.len() != expected {
        return Err(protocol(format!(
            "asked for {expected} embeddings, got {}",
            data.len()
        )));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| i as usize);
        let vector = match item.get("embedding") {
            Some(Value::Array(numbers)) => numbers
                .iter()
                .map(|n| n.as_f64().map(|f| f as f32))
                .collect::<Option<Vec<f32>>>()
                .ok_or_else(|| {
                    protocol(format!(
                        "embedding {index} holds something other than numbers"
                    ))
                })?,
            Some(Value::String(b64)) => decode_base64(b64).ok_or_else(|| {
                protocol(format!("embedding {index} is not valid base64 of f32s"))
            })?,
            _ => return Err(protocol(format!("embedding {index} is missing"))),
        };
        let slot = slots
            .get_mut(index)
            .ok_or_else(|| protocol(format!("embedding index {index} is out of range")))?;
        *slot = Some(vector);
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| protocol(format!("embedding {i} is missing"))))
        .collect()
}

fn decode_base64(text: &str) -> Option<Vec<f32>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    if bytes.len() % 4 != 0 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}
