//! nodekit's OpenAI-compatible chat-model and embeddings client, and the
//! HTTP pieces any provider's client is built from.
//!
//! - [`chat`]: [`OpenAiConfig`] and [`OpenAiChatModel`], `/chat/completions`
//!   plain and streamed (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
//!   llama.cpp, LiteLLM);
//! - [`embeddings`]: [`EmbeddingsConfig`] and [`OpenAiEmbedder`];
//! - [`http`]: authentication ([`http::Authenticate`]), retries, timeouts,
//!   cancellation, capped bodies and provider errors, and the process's
//!   shared client ([`http::http_client`]);
//! - [`sse`]: a Server-Sent Events parser.
//!
//! Users reach it through `nodekit` (feature `openai`), as
//! `nodekit::model::openai` and `nodekit::embed`.

pub mod chat;
pub mod embeddings;
pub mod http;
pub mod sse;

pub use chat::{OpenAiChatModel, OpenAiConfig};
pub use embeddings::{EmbeddingsConfig, Encoding, OpenAiEmbedder};
