//! Chat models: the object-safe [`ChatModel`] trait, per-call options,
//! streaming chunks, and typed errors (from `nodekit-core`).
//! Implementations: author-supplied custom models ([`custom`]) and, with
//! the `openai` feature, the OpenAI-compatible client (`openai`, from
//! `nodekit-openai`) and the HTTP pieces a provider's client is built from
//! (`http`, from `nodekit-http`); with the `anthropic` feature, Anthropic's
//! Messages API (`anthropic`, from `nodekit-anthropic`); with the `gemini`
//! feature, Google's Gemini API, chat and embeddings (`gemini`, from
//! `nodekit-gemini`); with the `ollama` feature, Ollama's own API (`ollama`,
//! from `nodekit-ollama`).

pub use nodekit_core::model::*;

#[cfg(feature = "anthropic")]
pub use nodekit_anthropic as anthropic;
#[cfg(feature = "gemini")]
pub use nodekit_gemini as gemini;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "ollama"
))]
pub use nodekit_http::{self as http, http_client, shared_http_client};
#[cfg(feature = "ollama")]
pub use nodekit_ollama as ollama;
#[cfg(feature = "openai")]
pub use nodekit_openai::chat as openai;
