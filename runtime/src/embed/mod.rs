//! Embeddings: the object-safe [`Embedder`] trait (from `nodekit-core`)
//! and, with the `openai` feature, the OpenAI-compatible `/embeddings`
//! client (batching, `dimensions`, float or base64 encoding).

pub use nodekit_core::embed::*;

#[cfg(feature = "openai")]
mod openai;

#[cfg(feature = "openai")]
pub use openai::{EmbeddingsConfig, Encoding, OpenAiEmbedder};
