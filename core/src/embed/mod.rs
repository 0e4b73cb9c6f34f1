//! Embeddings: the object-safe [`Embedder`] trait. Providers' clients are
//! crates of their own (nodekit's OpenAI-compatible one is in
//! `nodekit::embed`).

use futures::future::BoxFuture;

use crate::error::Result;

/// Turns texts into vectors. Object-safe: memory holds `Arc<dyn Embedder>`.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// The model's name.
    fn name(&self) -> &str;

    /// One vector per text, in order.
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>>;
}
