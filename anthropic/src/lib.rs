//! nodekit's native client of Anthropic's Messages API, built on
//! [`nodekit_http`]'s transport and nothing of nodekit's core but its
//! contract ([`ChatModel`](nodekit_core::model::ChatModel)).
//!
//! - [`AnthropicConfig`]: the model, the key, the sampling settings, extended
//!   thinking ([`AnthropicConfig::thinking_budget`]) and prompt caching
//!   ([`PromptCache`]);
//! - [`AnthropicChatModel`]: `POST /v1/messages`, whole and streamed.
//!
//! What a conversation holds reaches Anthropic as its own content blocks:
//! system messages become the `system` field, images and documents
//! `image` and `document` blocks, tool calls `tool_use` blocks and tool
//! results `tool_result` blocks (those of parallel calls in one user turn),
//! and a signed [`Thinking`](nodekit_core::message::ContentPart::Thinking)
//! part goes back as the `thinking` block it came as, signature included.
//! What Anthropic would refuse (a tool result that answers no call, an
//! image of a type it does not read, more than four cache breakpoints) is
//! refused before anything is sent, naming the message and the block.
//!
//! Usage counts every input token: `input_tokens` is Anthropic's
//! `input_tokens` plus the tokens written to and read from the cache,
//! which [`Usage`](nodekit_core::message::Usage) also gives apart
//! (`cache_creation_tokens`, `cache_read_tokens`), as LangChain counts them.

mod config;
mod model;
mod request;
mod response;

pub use config::{
    ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, AnthropicConfig, DEFAULT_MAX_TOKENS, PromptCache,
};
pub use model::AnthropicChatModel;
