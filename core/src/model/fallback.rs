//! [`FallbackModel`]: the next model when one fails.

use std::sync::Arc;

use futures::StreamExt;

use super::{BoxFuture, CallOptions, ChatModel, ChunkStream, ModelErrorKind};
use crate::error::{Error, Result};
use crate::message::Message;

/// A chat model that, when its model fails, asks the next one (n8n's
/// agent "Fallback Model", LangChain's `withFallbacks`). A model has
/// retried by itself before it counts as failed, and a cancelled call
/// is not passed on. A stream falls back when it fails before its first
/// chunk; once text has come, an error ends it, as the text was shown.
/// When every model fails, the last one's error is returned (each
/// failure is in the run log, under its own node).
#[derive(Debug, Clone)]
pub struct FallbackModel {
    models: Vec<Arc<dyn ChatModel>>,
}

impl FallbackModel {
    /// `primary`, then each of `fallbacks` in turn.
    pub fn new(primary: Arc<dyn ChatModel>, fallbacks: Vec<Arc<dyn ChatModel>>) -> Self {
        let mut models = vec![primary];
        models.extend(fallbacks);
        FallbackModel { models }
    }
}

/// Whether a failure is one the next model should get the call after.
fn passes_on(e: &Error) -> bool {
    e.model_error()
        .is_none_or(|m| m.kind != ModelErrorKind::Cancelled)
}

impl ChatModel for FallbackModel {
    fn name(&self) -> &str {
        self.models[0].name()
    }

    fn invoke<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Message>> {
        Box::pin(async move {
            let (last, rest) = self.models.split_last().expect("a primary model");
            for model in rest {
                match model.invoke(messages, options).await {
                    Err(e) if passes_on(&e) => continue,
                    answered => return answered,
                }
            }
            last.invoke(messages, options).await
        })
    }

    fn stream<'a>(
        &'a self,
        messages: &'a [Message],
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ChunkStream>> {
        Box::pin(async move {
            let (last, rest) = self.models.split_last().expect("a primary model");
            for model in rest {
                let mut stream = match model.stream(messages, options).await {
                    Err(e) if passes_on(&e) => continue,
                    other => other?,
                };
                match stream.next().await {
                    Some(Err(e)) if passes_on(&e) => continue,
                    Some(first) => {
                        return Ok(
                            Box::pin(futures::stream::once(async { first }).chain(stream))
                                as ChunkStream,
                        );
                    }
                    None => return Ok(Box::pin(futures::stream::empty()) as ChunkStream),
                }
            }
            last.stream(messages, options).await
        })
    }
}
