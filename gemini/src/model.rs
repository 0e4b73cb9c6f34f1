//! [`GeminiChatModel`]: `generateContent` as a nodekit [`ChatModel`].

use std::sync::Arc;

use nodekit_core::error::Result;
use nodekit_core::message::Message;
use nodekit_core::model::{BoxFuture, CallOptions, ChatModel, ChunkStream, ModelError};
use nodekit_http::Transport;

use crate::config::{GeminiConfig, model_path, transport};
use crate::request::Shape;
use crate::response;

/// A chat model behind Gemini's `generateContent` and `streamGenerateContent`.
#[derive(Debug, Clone)]
pub struct GeminiChatModel {
    model: String,
    /// `{version}/models/{model}`, the paths' common start.
    path: String,
    shape: Arc<Shape>,
    transport: Transport,
}

impl GeminiChatModel {
    /// A client for `config`. Fails when the model's name would not fit in
    /// a path, or a header cannot be sent.
    pub fn new(config: GeminiConfig) -> Result<Self> {
        let name = model_path(&config.model)?;
        let timeout = nodekit_http::timeout_secs(config.timeout_secs)?;
        let transport = transport(
            &config.base_url,
            &config.api_key,
            config.authenticate.clone(),
        )?
        .headers(config.headers.clone())
        .timeout(timeout)
        .max_retries(config.max_retries)
        .max_response_bytes(config.max_response_bytes)
        .build()?;
        Ok(GeminiChatModel {
            path: format!("{}/models/{name}", config.api_version.trim_matches('/')),
            model: name,
            shape: Arc::new(Shape::new(&config)),
            transport,
        })
    }

    /// The request body for `messages`, as JSON bytes, or the reason Gemini
    /// would refuse it (it names the message and the block).
    pub fn request_body(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<bytes::Bytes> {
        Ok(self.shape.body(messages, options)?)
    }

    async fn invoke_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<Message, ModelError> {
        let body = self.shape.body(messages, options)?;
        let cancel = options.cancel.as_ref();
        let path = format!("{}:generateContent", self.path);
        let answer = self.transport.post(&path, &body, cancel, true).await?;
        response::message(&self.transport.read_json(answer, cancel).await?)
    }

    async fn stream_inner(
        &self,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChunkStream, ModelError> {
        let body = self.shape.body(messages, options)?;
        let cancel = options.cancel.clone();
        let path = format!("{}:streamGenerateContent?alt=sse", self.path);
        let answer = self
            .transport
            .post(&path, &body, cancel.as_ref(), false)
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

impl ChatModel for GeminiChatModel {
    fn name(&self) -> &str {
        &self.model
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
