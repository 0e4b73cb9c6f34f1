//! Agent memory as the memory of nodekit's tools agent: each request loads
//! the assembled context, each exchange is appended to the thread, and the
//! agent gets the `updateWorkingMemory` and `updatePlan` tools.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::db::check_id;
use super::observe::Observer;
use super::recall::{Recall, Recaller};
use super::{AssembleOptions, MemoryConfig, Store, assemble_with, plan, working_memory};
use nodekit_core::embed::Embedder;
use nodekit_core::error::Result;
use nodekit_core::memory::Memory;
use nodekit_core::message::Message;
use nodekit_core::tool::Tool;

/// One (resource, thread) of agent memory, ready for an agent.
#[derive(Debug, Clone)]
pub struct ThreadMemory {
    store: Store,
    config: MemoryConfig,
    resource: String,
    thread: String,
    observer: Option<Observer>,
    recall: Option<(Arc<dyn Embedder>, Recaller)>,
}

impl ThreadMemory {
    /// The memory of `thread` of `resource`; fails only on an invalid id.
    /// Nothing is read or written yet: the thread is created by the first
    /// save, and a thread of another resource reads as empty and refuses
    /// that save ([`AgentMemoryError::ThreadOwnership`](super::AgentMemoryError::ThreadOwnership)).
    pub async fn new(
        store: Store,
        config: MemoryConfig,
        resource: impl Into<String>,
        thread: impl Into<String>,
    ) -> Result<ThreadMemory> {
        let (resource, thread) = (resource.into(), thread.into());
        check_id("resource", &resource)?;
        check_id("thread", &thread)?;
        Ok(ThreadMemory {
            store,
            config,
            resource,
            thread,
            observer: None,
            recall: None,
        })
    }

    /// Turns semantic recall on (with `embedder_model` set in the config):
    /// each save queues the new messages for indexing in the background, and
    /// each load recalls past messages similar to the input. The thread's
    /// messages not indexed yet are queued at once (only this thread's:
    /// [`Recaller::catch_up`] scans the whole store, for a process start).
    pub fn with_recall(mut self, embedder: Arc<dyn Embedder>) -> ThreadMemory {
        let recaller = Recaller::spawn(Recall::new(self.store.db()), embedder.clone());
        recaller.notify(&self.resource, &self.thread);
        self.recall = Some((embedder, recaller));
        self
    }

    async fn context(&self, input: Option<&str>) -> Result<Vec<Message>> {
        if let Some(observer) = &self.observer {
            // A failed observation keeps the raw messages; it is retried later.
            let prepared = observer.prepare(&self.resource, &self.thread).await?;
            if let Some(e) = prepared.error {
                tracing::warn!(error = %e, "observational memory could not observe; raw messages kept");
            }
        }
        let options = AssembleOptions {
            embedder: self.recall.as_ref().map(|(e, _)| e.as_ref()),
            recall_timeout: None,
        };
        let context = assemble_with(
            &self.store,
            &self.config,
            &self.resource,
            &self.thread,
            input,
            options,
        )
        .await?;
        // The input itself is the agent's to add.
        Ok(context
            .parts
            .into_iter()
            .filter(|p| p.kind != super::PartKind::Input)
            .flat_map(|p| p.messages)
            .collect())
    }

    /// Turns observational memory on: each save schedules the observer in
    /// the background, and each load first activates what it buffered.
    pub fn with_observer(mut self, observer: Observer) -> ThreadMemory {
        self.observer = Some(observer);
        self
    }
}

impl Memory for ThreadMemory {
    fn load(&self) -> BoxFuture<'_, Result<Vec<Message>>> {
        Box::pin(self.context(None))
    }

    fn load_for<'a>(&'a self, input: &'a str) -> BoxFuture<'a, Result<Vec<Message>>> {
        Box::pin(self.context(Some(input)))
    }

    fn save<'a>(&'a self, input: &'a str, output: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.save_turn(input, &[Message::ai(output)]).await })
    }

    /// Stores the input and every message of the turn (tool calls and
    /// results included) in one append.
    fn save_turn<'a>(&'a self, input: &'a str, turn: &'a [Message]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let mut exchange = Vec::with_capacity(turn.len() + 1);
            exchange.push(Message::human(input));
            exchange.extend_from_slice(turn);
            self.store
                .append(&self.resource, &self.thread, &exchange)
                .await?;
            // Both run in the background; the request never waits for them.
            if let Some(observer) = &self.observer {
                drop(observer.after_append(&self.resource, &self.thread));
            }
            if let Some((_, recaller)) = &self.recall {
                recaller.notify(&self.resource, &self.thread);
            }
            Ok(())
        })
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(plan::tool(
            self.store.clone(),
            &self.resource,
            &self.thread,
        ))];
        // A stateless sub-agent gets no working memory, and no tool for it.
        if self.config.working_memory {
            tools.insert(
                0,
                Arc::new(working_memory::tool(
                    self.store.clone(),
                    &self.resource,
                    &self.config.template,
                )),
            );
        }
        tools
    }
}
