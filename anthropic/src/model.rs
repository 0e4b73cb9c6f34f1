//! [`AnthropicChatModel`]: the Messages API as a nodekit [`ChatModel`].

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::message::Message;
use nodekit_core::model::{BoxFuture, CallOptions, ChatModel, ChunkStream, ModelError};
use nodekit_http::{Authenticate, HeaderKey, Transport};

use crate::config::AnthropicConfig;
use crate::request::Shape;
use crate::response;

/// A chat model behind Anthropic's Messages API (`POST /v1/messages`).
#[derive(Debug, Clone)]
pub struct AnthropicChatModel {
    shape: Arc<Shape>,
    transport: Transport,
}

impl AnthropicChatModel {
    /// A client for `config`. Fails when Anthropic would refuse the
    /// settings on every call (a frequency penalty, a thinking budget
    /// under 1,024 tokens or not under `max_tokens`), or a header cannot
    /// be sent.
    pub fn new(config: AnthropicConfig) -> Result<Self> {
        config.check()?;
        let timeout = nodekit_http::timeout_secs(config.timeout_secs)?;
        let auth: Arc<dyn Authenticate> = match &config.authenticate {
            Some(auth) => auth.clone(),
            None => Arc::new(HeaderKey::new("x-api-key", config.api_key.clone())?),
        };
        let mut builder = Transport::builder(config.base_url.trim_end_matches('/'), auth)
            .header("anthropic-version", config.version.clone());
        if !config.betas.is_empty() {
            builder = builder.header("anthropic-beta", config.betas.join(","));
        }
        let transport = builder
            .headers(config.headers.clone())
            .timeout(timeout)
            .max_retries(config.max_retries)
            .max_response_bytes(config.max_response_bytes)
            .build()?;
        Ok(AnthropicChatModel {
            shape: Arc::new(Shape::new(&config)),
            transport,
        })
    }

    /// The request body for `messages`, as JSON bytes, or the reason
    /// Anthropic would refuse it (it names the message and the block).
    pub fn request_body(
        &self,
        messages: &[Message],
        options: &CallOptions,
        stream: bool,
    ) -> Result<bytes::Bytes> {
        Ok(self.shape.body(messages, options, stream)?)
    }

    async fn invoke_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<Message, ModelError> {
        let body = self.shape.body(messages, options, false)?;
        let cancel = options.cancel.as_ref();
        let answer = self
            .transport
            .post("v1/messages", &body, cancel, true)
            .await?;
        response::message(&self.transport.read_json(answer, cancel).await?)
    }

    async fn stream_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChunkStream, ModelError> {
        let body = self.shape.body(messages, options, true)?;
        let cancel = options.cancel.clone();
        let answer = self
            .transport
            .post("v1/messages", &body, cancel.as_ref(), false)
            .await?;
        self.transport
            .answer_stream(
                answer,
                cancel,
                response::Events::default(),
                response::message,
            )
            .await
    }
}

impl ChatModel for AnthropicChatModel {
    fn name(&self) -> &str {
        &self.shape.model
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        self.transport.answer(self.invoke_inner(messages, options))
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        self.transport.answer(self.stream_inner(messages, options))
    }
}
