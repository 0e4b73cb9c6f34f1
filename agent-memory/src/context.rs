//! Context assembly: what goes to the LLM for (resource, thread, new input),
//! in one fixed order, with the tokens of each part.
//!
//! | # | part | scope | source |
//! | --- | --- | --- | --- |
//! | 1 | working memory | resource | a system message with the document (the template until the agent writes one); absent when working memory is off |
//! | 2 | plan | thread | a system message, when the thread has a plan |
//! | 3 | observations | thread | the observation block ([`observe`](super::observe): the newest generation, append-only); absent until the observer runs |
//! | 4 | recalled messages | thread | semantic recall ([`super::recall`]): with `embedder_model` set and an embedder given to [`assemble_with`], the messages most similar to the input, each with its neighbours, minus the recent window |
//! | 5 | recent messages | thread | the last N messages after those the observation block covers, a tool call never split from its result |
//! | 6 | input | | the new user message, when given |
//!
//! The order puts what changes least first, so prompt caches keep hitting.
//! Token counts of stored messages were counted once, when they were
//! written; only the system parts and the input are counted here.

use serde::Serialize;

use nodekit_core::embed::Embedder;
use nodekit_core::error::Result;
use nodekit_core::memory::langchain::Tokenizer;
use nodekit_core::message::Message;

use super::config::MemoryConfig;
use super::plan::Plan;
use super::recall::{self, Recall};
use super::store::{Store, StoredMessage};
use super::working_memory;

/// Which part of the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PartKind {
    /// The resource's working memory.
    WorkingMemory,
    /// The thread's plan.
    Plan,
    /// The observation block.
    Observations,
    /// Messages found by semantic recall.
    Recalled,
    /// The recent-message window.
    Recent,
    /// The new user message.
    Input,
}

/// One part of the assembled context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextPart {
    /// Which part.
    pub kind: PartKind,
    /// Its messages, in order.
    pub messages: Vec<Message>,
    /// Their tokens.
    pub tokens: usize,
}

/// What goes to the LLM, part by part.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembledContext {
    /// The resource (user).
    pub resource: String,
    /// The thread.
    pub thread: String,
    /// The parts, in the documented order; empty parts are left out.
    pub parts: Vec<ContextPart>,
    /// Tokens of all parts.
    pub total_tokens: usize,
}

impl AssembledContext {
    /// Every message, in order: what the model receives.
    pub fn messages(&self) -> Vec<Message> {
        self.parts
            .iter()
            .flat_map(|p| p.messages.iter().cloned())
            .collect()
    }
}

/// What [`assemble_with`] may use beyond the store and configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct AssembleOptions<'a> {
    /// The embedder for semantic recall (used when `embedder_model` is set
    /// and an input is given).
    pub embedder: Option<&'a dyn Embedder>,
    /// How long recall may take before it is left out (default
    /// [`DEFAULT_RECALL_TIMEOUT`](super::recall::DEFAULT_RECALL_TIMEOUT)).
    pub recall_timeout: Option<std::time::Duration>,
}

/// Assembles the context of `thread` of `resource`, followed by `input`
/// (without semantic recall: see [`assemble_with`]).
pub async fn assemble(
    store: &Store,
    config: &MemoryConfig,
    resource: &str,
    thread: &str,
    input: Option<&str>,
) -> Result<AssembledContext> {
    assemble_with(
        store,
        config,
        resource,
        thread,
        input,
        AssembleOptions::default(),
    )
    .await
}

/// [`assemble`] with options: the embedder for semantic recall.
pub async fn assemble_with(
    store: &Store,
    config: &MemoryConfig,
    resource: &str,
    thread: &str,
    input: Option<&str>,
    options: AssembleOptions<'_>,
) -> Result<AssembledContext> {
    let tokenizer = Tokenizer::for_model(&config.observer_model);
    let mut parts = Vec::new();
    let mut system = |kind, text: String| {
        let tokens = tokenizer.count(&text);
        parts.push(ContextPart {
            kind,
            messages: vec![Message::system(text)],
            tokens,
        });
    };
    let recall_with = match (&config.embedder_model, options.embedder, input) {
        (Some(_), Some(embedder), Some(text)) => Some((embedder, text)),
        _ => None,
    };
    let deadline = tokio::time::Instant::now()
        + options
            .recall_timeout
            .unwrap_or(recall::DEFAULT_RECALL_TIMEOUT);
    // Everything that does not need the recent window runs concurrently:
    // the reads, and (the thread's read and the input's embedding, then)
    // recall's search. Every read filters on the resource, so a thread of
    // another resource reads as an unknown one: empty. The search asks for
    // enough candidates that `top_k` remain once the recent window's are
    // left out.
    let top_k = config.semantic_recall_top_k;
    let recall = Recall::new(store.db());
    let search = async {
        let k = top_k + config.last_messages;
        // A held thread is searched beside the check (the answer is used
        // only if the thread turns out to be the caller's).
        let embedding = async {
            Ok(match recall_with {
                Some((embedder, text)) if top_k > 0 => {
                    recall::embed_query(embedder, text, deadline).await
                }
                _ => None,
            })
        };
        let (info, query) = recall
            .checked_and_searched(resource, thread, k, embedding)
            .await?;
        Ok(match (info, query) {
            (Some(info), Some((q, early))) => {
                let found = recall.recall_candidates(resource, &info, &q, k, early);
                recall::by_deadline(deadline, found)
                    .await
                    .map(|candidates| (info, candidates))
            }
            _ => None,
        })
    };
    // The reads are polled first, so their queries are on their way before
    // the search takes the thread.
    let (working, plan, observed, mut recent, searched) = tokio::try_join!(
        async {
            match config.working_memory {
                true => store.working_memory(resource).await,
                false => Ok(None),
            }
        },
        store.plan(resource, thread),
        super::observe::block(store, resource, thread),
        store.recent(resource, thread, config.last_messages),
        search,
    )?;
    if config.working_memory {
        let content = working.map_or_else(|| config.template.clone(), |w| w.content);
        system(
            PartKind::WorkingMemory,
            working_memory::system_text(&content),
        );
    }
    if let Some(plan) = plan
        && let Ok(plan) = serde_json::from_value::<Plan>(plan)
    {
        system(PartKind::Plan, plan.system_text());
    }
    if !observed.text.is_empty() {
        parts.push(ContextPart {
            kind: PartKind::Observations,
            messages: vec![Message::system(observed.text)],
            tokens: observed.tokens,
        });
    }
    recent.retain(|m| m.seq > observed.observed_through);
    if let Some((info, candidates)) = searched {
        let exclude = recent.iter().map(|m| m.seq).collect();
        let around = recall.recall_around(resource, &info, candidates, top_k, &exclude);
        let found = recall::by_deadline(deadline, around)
            .await
            .unwrap_or_default();
        if !found.is_empty() {
            parts.push(ContextPart {
                kind: PartKind::Recalled,
                tokens: message_tokens(&found),
                messages: found.into_iter().map(|m| m.message).collect(),
            });
        }
    }
    if !recent.is_empty() {
        parts.push(ContextPart {
            kind: PartKind::Recent,
            tokens: message_tokens(&recent),
            messages: recent.into_iter().map(|m| m.message).collect(),
        });
    }
    if let Some(text) = input {
        parts.push(ContextPart {
            kind: PartKind::Input,
            tokens: tokenizer.count(text),
            messages: vec![Message::human(text)],
        });
    }
    let total_tokens = parts
        .iter()
        .fold(0usize, |sum, p| sum.saturating_add(p.tokens));
    Ok(AssembledContext {
        resource: resource.to_owned(),
        thread: thread.to_owned(),
        parts,
        total_tokens,
    })
}

/// The stored token counts of `messages`, added up without ever wrapping (a
/// negative count, which no write makes, counts as 0).
fn message_tokens(messages: &[StoredMessage]) -> usize {
    messages.iter().fold(0, |sum: usize, m| {
        sum.saturating_add(usize::try_from(m.token_count).unwrap_or(0))
    })
}
