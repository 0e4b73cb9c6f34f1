//! nodekit's native client of Google's Gemini API (the Generative
//! Language API), built on [`nodekit_http`]'s transport and nothing of
//! nodekit's core but its contract.
//!
//! - [`GeminiConfig`] and [`GeminiChatModel`]: `generateContent` and
//!   `streamGenerateContent`, with function calling, thinking
//!   ([`GeminiConfig::thinking_budget`]) and structured output;
//! - [`GeminiEmbeddingsConfig`] and [`GeminiEmbedder`]: `embedContent` for
//!   one text, `batchEmbedContents` for more.
//!
//! **Thought signatures.** Gemini signs its reasoning on the part that
//! follows it (the first function call of a step, or the answer's text)
//! and needs the signature back on the next turn. An answer keeps each as a
//! [`Thinking`](nodekit_core::message::ContentPart::Thinking) part (its text
//! the thought summary, when one was asked for), so memory keeps them; sent
//! back, the first signature goes on the message's first function call, or
//! else on its text, as Gemini gave it.
//!
//! **Usage.** `input_tokens` is Gemini's `promptTokenCount` (the cached
//! tokens included, also given as `cache_read_tokens`); `output_tokens`
//! counts the answer and the thinking, which `reasoning_tokens` gives apart.
//!
//! **Safety.** A prompt or an answer blocked by Gemini's safety filters is
//! an error that names the categories that blocked it.

mod config;
mod embed;
mod model;
mod request;
mod response;

pub use config::{GEMINI_API_VERSION, GEMINI_BASE_URL, GeminiConfig, SafetySetting};
pub use embed::{GeminiEmbedder, GeminiEmbeddingsConfig};
pub use model::GeminiChatModel;
