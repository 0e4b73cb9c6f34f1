//! nodekit's OpenAI-compatible chat-model and embeddings client, built on
//! [`nodekit_http`]'s transport.
//!
//! - [`chat`]: [`OpenAiConfig`] and [`OpenAiChatModel`], `/chat/completions`
//!   plain and streamed (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
//!   llama.cpp, LiteLLM);
//! - [`responses`]: [`OpenAiResponsesModel`], OpenAI's `/responses`, for
//!   an [`OpenAiConfig`] whose `api` is [`OpenAiApi::Responses`];
//! - [`embeddings`]: [`EmbeddingsConfig`] and [`OpenAiEmbedder`].
//!
//! Users reach it through `nodekit` (feature `openai`), as
//! `nodekit::model::openai` and `nodekit::embed`.

pub mod chat;
pub mod embeddings;
pub mod responses;

pub use chat::{OpenAiApi, OpenAiChatModel, OpenAiConfig};
pub use embeddings::{EmbeddingsConfig, Encoding, OpenAiEmbedder};
pub use responses::OpenAiResponsesModel;
