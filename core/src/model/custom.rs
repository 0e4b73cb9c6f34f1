//! Custom chat models (the AI Node SDK's `type: 'custom'`): the author supplies
//! `invoke`, and optionally `stream`; without `stream`, streaming yields the
//! whole answer from `invoke` as chunks.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{CallOptions, ChatModel, ChunkStream, message_stream};
use crate::error::Result;
use crate::message::Message;

type InvokeFn =
    dyn Fn(Vec<Message>, CallOptions) -> BoxFuture<'static, Result<Message>> + Send + Sync;
type StreamFn =
    dyn Fn(Vec<Message>, CallOptions) -> BoxFuture<'static, Result<ChunkStream>> + Send + Sync;

/// A chat model made of author-supplied functions.
#[derive(Clone)]
pub struct CustomChatModel {
    name: String,
    invoke: Arc<InvokeFn>,
    stream: Option<Arc<StreamFn>>,
}

impl std::fmt::Debug for CustomChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomChatModel")
            .field("name", &self.name)
            .field("streams", &self.stream.is_some())
            .finish()
    }
}

impl CustomChatModel {
    /// A model called `name` answering through `invoke`. Tools bound to the
    /// model arrive in `CallOptions::tools`.
    pub fn new<F, Fut>(name: impl Into<String>, invoke: F) -> Self
    where
        F: Fn(Vec<Message>, CallOptions) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Message>> + Send + 'static,
    {
        CustomChatModel {
            name: name.into(),
            invoke: Arc::new(move |m, o| Box::pin(invoke(m, o))),
            stream: None,
        }
    }

    /// Adds a streaming implementation.
    pub fn with_stream<F, Fut>(mut self, stream: F) -> Self
    where
        F: Fn(Vec<Message>, CallOptions) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ChunkStream>> + Send + 'static,
    {
        self.stream = Some(Arc::new(move |m, o| Box::pin(stream(m, o))));
        self
    }
}

impl ChatModel for CustomChatModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        (self.invoke)(messages.to_vec(), options.clone())
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        match &self.stream {
            Some(stream) => stream(messages.to_vec(), options.clone()),
            None => {
                let invoke = (self.invoke)(messages.to_vec(), options.clone());
                Box::pin(async move { Ok(message_stream(invoke.await?)) })
            }
        }
    }
}
