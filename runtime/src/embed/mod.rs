//! Embeddings: the object-safe [`Embedder`] trait (from `nodekit-core`)
//! and, with the `openai` feature, the OpenAI-compatible `/embeddings`
//! client (batching, `dimensions`, float or base64 encoding) from
//! `nodekit-openai`.

pub use nodekit_core::embed::*;

#[cfg(feature = "openai")]
pub use nodekit_openai::embeddings::{EmbeddingsConfig, Encoding, OpenAiEmbedder};
