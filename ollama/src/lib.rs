//! nodekit's native client of Ollama's API, built on [`nodekit_http`]'s
//! transport and nothing of nodekit's core but its contract.
//!
//! - [`OllamaConfig`] and [`OllamaChatModel`]: `/api/chat`, plain or
//!   streamed (Ollama streams newline-delimited JSON), with tool calling,
//!   thinking ([`OllamaConfig::think`], kept as
//!   [`Thinking`](nodekit_core::message::ContentPart::Thinking) parts),
//!   images, structured output (`format`) and Ollama's runtime options
//!   (`num_ctx`, `top_k`, `repeat_penalty`, … in [`OllamaConfig::options`]);
//! - [`OllamaEmbeddingsConfig`] and [`OllamaEmbedder`]: `/api/embed`.
//!
//! **What Ollama does not take.** Images go as base64, so an image must be
//! a `data:` URL; documents (PDF) and forced tool choices do not exist in
//! Ollama's API. A request with a document or an image by `https://` URL
//! is refused before it is sent, with the message that holds it named.
//!
//! **Usage.** `input_tokens` is Ollama's `prompt_eval_count`,
//! `output_tokens` its `eval_count`.

mod chat;
mod config;
mod embed;

pub use chat::OllamaChatModel;
pub use config::{OLLAMA_BASE_URL, OllamaConfig};
pub use embed::{OllamaEmbedder, OllamaEmbeddingsConfig};
