//! Chat models: the object-safe [`ChatModel`] trait, per-call options,
//! streaming chunks, and typed errors (from `nodekit-core`).
//! Implementations: author-supplied custom models ([`custom`]) and, with
//! the `openai` feature, the OpenAI-compatible client (`openai`) and the
//! HTTP pieces a provider's client is built from (`http`), from
//! `nodekit-openai`.

pub use nodekit_core::model::*;

#[cfg(feature = "openai")]
pub use nodekit_openai::chat as openai;
#[cfg(feature = "openai")]
pub use nodekit_openai::http::{self, http_client, shared_http_client};
