//! Observational memory (tier 4): an observer model compresses a thread's
//! older messages into dated observations, a reflector condenses the
//! observations when they grow, and the context shows the observation block
//! instead of the messages it covers.
//!
//! # Thresholds
//!
//! Every message's token count is stored once, when it is written; the
//! thresholds compare sums of those counts, nothing is recounted.
//!
//! - **Observer**: when the tokens of the *unobserved* messages (those after
//!   the last seq an active observation covers) exceed
//!   [`MemoryConfig::observer_message_tokens`] (30,000), the oldest
//!   unobserved messages, up to that many tokens, are sent to the observer
//!   model, and its answer is stored as one observation row covering
//!   `first_seq..=last_seq`. A chunk never ends between an AI tool call and
//!   its results. The recent-message part of the context then starts after
//!   the last observed seq: observed messages leave the context, the others
//!   stay.
//! - **Reflector**: when the active observations of the newest generation
//!   exceed [`MemoryConfig::reflector_observation_tokens`] (40,000), the
//!   reflector model condenses them into one row of generation + 1 covering
//!   the same messages. The block shows the newest generation only: the
//!   reflection, then the observations made after it.
//!
//! Both models are called through [`ChatModel`] (the model named by
//! `N8N_INSTANCE_AI_OBSERVER_MODEL`).
//!
//! # Append-only block
//!
//! The block is a header followed by the rows of the newest generation in
//! the order they cover the thread; a new observation is appended at the end
//! and earlier text is never rewritten, so the block of one request is a
//! prefix of the next one's and prompt caches keep hitting. Only a
//! reflection replaces the block (a new generation).
//!
//! # Async buffering
//!
//! [`Observer::after_append`] runs in the background (`tokio::spawn`) after
//! messages are written. Each time the messages not covered by any
//! observation reach a fifth of the observer's threshold
//! ([`BUFFER_STEPS`]), it observes that chunk ahead of time and stores it
//! *buffered*: kept, but not part of the block. When the threshold is
//! crossed, [`Observer::prepare`] (on the request path) activates the
//! buffered chunks with one database update: no model call, no wait. Only
//! when no buffered chunk is ready does it observe synchronously, and only
//! when no background run of the same thread holds the thread's lock
//! (otherwise the request goes on with the raw messages).
//!
//! Reflections are buffered the same way: once the block passes the last
//! step before the reflector's threshold (four fifths of it), the background
//! run reflects ahead and stores the reflection buffered
//! ([`Store::add_buffered_reflection`]); the block does not change. When the
//! threshold is crossed, [`Observer::prepare`] activates it in one
//! transaction ([`Store::activate_reflection`]): it becomes the new
//! generation, followed by the observations made since it was computed.
//! Only without a buffered reflection of the current generation does the
//! request path reflect itself. The background run also activates, observes
//! and reflects once the thresholds are crossed.
//!
//! # Failures
//!
//! If the observer or the reflector fails (an error from the model, no
//! answer within [`DEFAULT_TIMEOUT`], an answer without
//! `<observations>…</observations>` or with nothing in them, or a
//! reflection that is not shorter than its input), nothing is stored: the
//! raw messages stay in the context, the old generation stays in the block,
//! and the next run tries again. Errors are logged, never returned to the
//! request.
//!
//! # What the observer sees
//!
//! Only the conversation: system messages and the memory's own injected
//! text (the working-memory block, an observation block) are left out, and
//! `<system-reminder>` sections are cut from messages, so the observer never
//! records instructions or reminders as user facts; its instructions say so
//! too. A message longer than [`MAX_MESSAGE_CHARS`] characters is sent
//! shortened (its start and end, with a marker), so a single message larger
//! than the threshold is still observed, alone.

mod prompts;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;

use nodekit_core::error::{Error, Result};
use nodekit_core::message::{Message, Role};
use nodekit_core::model::{CallOptions, ChatModel};

use super::AgentMemoryError;
use super::config::MemoryConfig;
use super::store::{Observation, Store, StoredMessage};

/// The first line of the observation block.
pub const BLOCK_HEADER: &str = "OBSERVATIONS: notes on the earlier part of this conversation, \
     whose messages are no longer shown, oldest first.";

/// How many buffered chunks fill the observer's threshold: a chunk is
/// observed in the background each time a fifth of it has accumulated.
pub const BUFFER_STEPS: usize = 5;

/// Longest text of one message sent to the observer, in characters; longer
/// messages are sent as their first three quarters and last quarter of this
/// many characters around a marker.
pub const MAX_MESSAGE_CHARS: usize = 32_000;

/// How long one observer or reflector call may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Messages read from the store per page while building a chunk.
const PAGE: i64 = 128;

/// What [`Observer::prepare`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Buffered observations activated.
    pub activated: u64,
    /// Whether an observation was made on the request path.
    pub observed: bool,
    /// Whether a reflection was made on the request path.
    pub reflected: bool,
    /// Whether a reflection computed ahead was activated (no model call).
    pub reflection_activated: bool,
    /// Why observing or reflecting failed (nothing was lost; it is retried).
    pub error: Option<String>,
}

/// The observation block of a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// The text (empty when the thread has no active observation).
    pub text: String,
    /// Its tokens: the stored counts of its rows and the header's.
    pub tokens: usize,
    /// The last message seq the block covers (0: none).
    pub observed_through: i64,
}

/// The thread's observation block: the active rows of the newest generation.
pub async fn block(store: &Store, resource: &str, thread: &str) -> Result<Block> {
    let rows = store.current_observations(resource, thread).await?;
    Ok(render(store, &rows))
}

fn render(store: &Store, rows: &[Observation]) -> Block {
    let mut text = String::new();
    let mut tokens = 0usize;
    let mut observed_through = 0;
    for row in rows {
        observed_through = observed_through.max(row.last_seq);
        let content = row.content.trim();
        if content.is_empty() {
            continue;
        }
        if text.is_empty() {
            text.push_str(BLOCK_HEADER);
            tokens = tokens.saturating_add(store.tokenizer().count(BLOCK_HEADER));
        }
        text.push_str("\n\n");
        text.push_str(content);
        tokens = tokens.saturating_add(usize::try_from(row.token_count).unwrap_or(0));
    }
    Block {
        text,
        tokens,
        observed_through,
    }
}

/// One thread's lock: one observer or reflector run at a time.
type ThreadLock = Arc<tokio::sync::Mutex<()>>;

/// Runs the observer and the reflector for the threads of one store.
#[derive(Debug, Clone)]
pub struct Observer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    config: MemoryConfig,
    model: Arc<dyn ChatModel>,
    timeout: Duration,
    /// One lock per thread: one observer or reflector run at a time.
    locks: Mutex<HashMap<(String, String), ThreadLock>>,
}

impl Observer {
    /// An observer over `store` with `config`'s thresholds, calling `model`
    /// (for the observer and the reflector).
    pub fn new(store: Store, config: MemoryConfig, model: Arc<dyn ChatModel>) -> Observer {
        Observer {
            inner: Arc::new(Inner {
                store,
                config,
                model,
                timeout: DEFAULT_TIMEOUT,
                locks: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The same observer with another time limit per model call.
    pub fn with_timeout(self, timeout: Duration) -> Observer {
        let inner = Arc::try_unwrap(self.inner).unwrap_or_else(|arc| Inner {
            store: arc.store.clone(),
            config: arc.config.clone(),
            model: arc.model.clone(),
            timeout: arc.timeout,
            locks: Mutex::new(HashMap::new()),
        });
        Observer {
            inner: Arc::new(Inner { timeout, ..inner }),
        }
    }

    /// The thread's observation block and its tokens.
    pub async fn block(&self, resource: &str, thread: &str) -> Result<(String, usize)> {
        let b = block(&self.inner.store, resource, thread).await?;
        Ok((b.text, b.tokens))
    }

    /// Schedules the background work after messages were appended to the
    /// thread and returns at once: buffering chunks ahead of the threshold,
    /// activating or observing once it is crossed, reflecting ahead when the
    /// block nears its threshold and activating (or reflecting) once it is
    /// crossed. Failures are logged. The handle may be awaited
    /// (tests) or dropped.
    pub fn after_append(&self, resource: &str, thread: &str) -> JoinHandle<()> {
        let this = self.clone();
        let (resource, thread) = (resource.to_owned(), thread.to_owned());
        tokio::spawn(async move {
            if let Err(e) = this.background(&resource, &thread).await {
                tracing::warn!(error = %e, "observational memory: background run failed; the raw messages stay in context and it is retried later");
            }
        })
    }

    /// The request path, before the context is assembled: when the
    /// unobserved messages exceed the threshold, activates the buffered
    /// observations (no model call); only when none is ready, observes
    /// synchronously (unless a background run holds the thread). When the
    /// block exceeds its threshold, activates the buffered reflection, or
    /// reflects when there is none and the thread is free.
    /// Observer or reflector failures are reported in [`Prepared::error`],
    /// not as an error: nothing is lost.
    pub async fn prepare(&self, resource: &str, thread: &str) -> Result<Prepared> {
        let store = &self.inner.store;
        let mut done = Prepared::default();
        let marks = store.observation_marks(resource, thread).await?;
        let unobserved = store
            .unobserved_tokens(resource, thread, marks.observed_through)
            .await?;
        if over(unobserved, self.inner.config.observer_message_tokens) {
            if marks.covered_through > marks.observed_through {
                done.activated = store.activate_buffered(resource, thread).await?;
            }
            if done.activated == 0 {
                let Some(_guard) = self.try_lock(resource, thread) else {
                    return Ok(done);
                };
                match self.observe_sync(resource, thread).await {
                    Ok(observed) => done.observed = observed,
                    Err(e) => {
                        warn("observer", &e);
                        done.error = Some(e.to_string());
                        return Ok(done);
                    }
                }
            }
        }
        if self.block_tokens(resource, thread).await? > self.reflector_threshold() {
            if marks.reflection_buffered && store.activate_reflection(resource, thread).await? {
                done.reflection_activated = true;
                return Ok(done);
            }
            let Some(_guard) = self.try_lock(resource, thread) else {
                return Ok(done);
            };
            match self.reflect(resource, thread, false).await {
                Ok(reflected) => done.reflected = reflected,
                Err(e) => {
                    warn("reflector", &e);
                    done.error = Some(e.to_string());
                }
            }
        }
        Ok(done)
    }

    /// Observes (synchronously) if the unobserved messages exceed the
    /// threshold, then reflects if the block exceeds its threshold; returns
    /// the model failure if one happened. No buffering, no activation.
    pub async fn observe_now(&self, resource: &str, thread: &str) -> Result<bool> {
        let lock = self.lock(resource, thread);
        let _guard = lock.lock().await;
        let store = &self.inner.store;
        let marks = store.observation_marks(resource, thread).await?;
        let unobserved = store
            .unobserved_tokens(resource, thread, marks.observed_through)
            .await?;
        let mut any = false;
        if over(unobserved, self.inner.config.observer_message_tokens) {
            any |= self.observe_sync(resource, thread).await?;
        }
        if self.block_tokens(resource, thread).await? > self.reflector_threshold() {
            any |= self.reflect(resource, thread, false).await?;
        }
        Ok(any)
    }

    /// The background run of [`Observer::after_append`].
    async fn background(&self, resource: &str, thread: &str) -> Result<()> {
        let lock = self.lock(resource, thread);
        let _guard = lock.lock().await;
        let store = &self.inner.store;
        let threshold = self.inner.config.observer_message_tokens;
        let step = (threshold / BUFFER_STEPS).max(1);
        // Buffer every full step of messages no observation covers yet.
        loop {
            let marks = store.observation_marks(resource, thread).await?;
            let pending = store
                .unobserved_tokens(resource, thread, marks.covered_through)
                .await?;
            if usize::try_from(pending).unwrap_or(usize::MAX) < step {
                break;
            }
            if self
                .observe_chunk(resource, thread, marks.covered_through, step, true)
                .await?
                .is_none()
            {
                break;
            }
        }
        // Crossed the threshold: activate, or observe when nothing is buffered.
        let marks = store.observation_marks(resource, thread).await?;
        let unobserved = store
            .unobserved_tokens(resource, thread, marks.observed_through)
            .await?;
        if over(unobserved, threshold) {
            let activated = if marks.covered_through > marks.observed_through {
                store.activate_buffered(resource, thread).await?
            } else {
                0
            };
            if activated == 0 {
                self.observe_sync(resource, thread).await?;
            }
        }
        // Over the reflector's threshold: activate the reflection computed
        // ahead, or reflect. Nearly there: compute one ahead.
        let tokens = self.block_tokens(resource, thread).await?;
        let buffered = store
            .observation_marks(resource, thread)
            .await?
            .reflection_buffered;
        if tokens > self.reflector_threshold() {
            if !(buffered && store.activate_reflection(resource, thread).await?) {
                self.reflect(resource, thread, false).await?;
            }
        } else if tokens > self.reflect_ahead_threshold() && !buffered {
            self.reflect(resource, thread, true).await?;
        }
        Ok(())
    }

    fn reflector_threshold(&self) -> usize {
        self.inner.config.reflector_observation_tokens
    }

    /// Where a reflection is computed ahead: the last of the
    /// [`BUFFER_STEPS`] steps before the reflector's threshold.
    fn reflect_ahead_threshold(&self) -> usize {
        self.reflector_threshold() / BUFFER_STEPS * (BUFFER_STEPS - 1)
    }

    async fn block_tokens(&self, resource: &str, thread: &str) -> Result<usize> {
        Ok(block(&self.inner.store, resource, thread).await?.tokens)
    }

    /// Observes the oldest unobserved messages (up to the threshold's
    /// tokens) into an active observation. The caller holds the lock.
    async fn observe_sync(&self, resource: &str, thread: &str) -> Result<bool> {
        let marks = self.inner.store.observation_marks(resource, thread).await?;
        let budget = self.inner.config.observer_message_tokens;
        Ok(self
            .observe_chunk(resource, thread, marks.observed_through, budget, false)
            .await?
            .is_some())
    }

    /// Observes the messages after `after_seq`, up to `budget` tokens (at
    /// least one message, never ending between a tool call and its
    /// results), and stores the observation, buffered or active.
    async fn observe_chunk(
        &self,
        resource: &str,
        thread: &str,
        after_seq: i64,
        budget: usize,
        buffered: bool,
    ) -> Result<Option<Observation>> {
        let store = &self.inner.store;
        let chunk = self.chunk(resource, thread, after_seq, budget).await?;
        let (Some(first), Some(last)) = (chunk.first(), chunk.last()) else {
            return Ok(None);
        };
        let (first_seq, last_seq) = (first.seq, last.seq);
        let transcript = transcript(&chunk);
        let content = if transcript.is_empty() {
            // Only system or memory text: nothing to observe, but covered.
            String::new()
        } else {
            let messages = [
                Message::system(prompts::OBSERVER),
                Message::human(prompts::observer_input(&transcript)),
            ];
            let answer = self.call(&messages).await?;
            dated(&answer, first.created_at)
        };
        let obs = if buffered {
            store
                .add_buffered_observation(resource, thread, &content, first_seq, last_seq)
                .await?
        } else {
            let generation = store.observation_marks(resource, thread).await?.generation;
            store
                .add_observation(resource, thread, generation, &content, first_seq, last_seq)
                .await?
        };
        Ok(Some(obs))
    }

    /// The messages after `after_seq` that fit in `budget` tokens.
    async fn chunk(
        &self,
        resource: &str,
        thread: &str,
        after_seq: i64,
        budget: usize,
    ) -> Result<Vec<StoredMessage>> {
        let store = &self.inner.store;
        let mut chunk: Vec<StoredMessage> = Vec::new();
        let mut tokens = 0usize;
        let mut from = after_seq + 1;
        'pages: loop {
            let page = store
                .messages_range(resource, thread, from, from + PAGE - 1)
                .await?;
            // A thread deleted meanwhile has no messages left to observe.
            let last_of_thread = store
                .thread(resource, thread)
                .await?
                .map_or(0, |t| t.last_seq);
            for m in page {
                let t = usize::try_from(m.token_count).unwrap_or(usize::MAX);
                let result = matches!(m.message.role, Role::Tool | Role::Function);
                if !chunk.is_empty() && tokens.saturating_add(t) > budget && !result {
                    break 'pages;
                }
                tokens = tokens.saturating_add(t);
                chunk.push(m);
            }
            from += PAGE;
            if from > last_of_thread {
                break;
            }
        }
        Ok(chunk)
    }

    /// Condenses the newest generation into the next one; `ahead`: stores
    /// it buffered, for [`Store::activate_reflection`].
    async fn reflect(&self, resource: &str, thread: &str, ahead: bool) -> Result<bool> {
        let store = &self.inner.store;
        let rows = store.current_observations(resource, thread).await?;
        let current = render(store, &rows);
        let threshold = match ahead {
            true => self.reflect_ahead_threshold(),
            false => self.reflector_threshold(),
        };
        if current.tokens <= threshold || rows.is_empty() {
            return Ok(false);
        }
        let input: Vec<&str> = rows
            .iter()
            .map(|r| r.content.trim())
            .filter(|c| !c.is_empty())
            .collect();
        let input = input.join("\n\n");
        let messages = [
            Message::system(prompts::REFLECTOR),
            Message::human(prompts::reflector_input(&input)),
        ];
        let answer = self.call(&messages).await?;
        let input_tokens = store.tokenizer().count(&input);
        if store.tokenizer().count(&answer) >= input_tokens {
            return Err(AgentMemoryError::Observation {
                reason: "the reflector's answer is not shorter than the observations it condenses"
                    .into(),
            }
            .into());
        }
        let first_seq = rows.iter().map(|r| r.first_seq).min().unwrap_or(0);
        let last_seq = rows.iter().map(|r| r.last_seq).max().unwrap_or(0);
        let generation = rows[0].generation;
        match ahead {
            true => {
                store
                    .add_buffered_reflection(
                        resource, thread, generation, &answer, first_seq, last_seq,
                    )
                    .await?
            }
            false => {
                store
                    .add_reflection(resource, thread, generation, &answer, first_seq, last_seq)
                    .await?
            }
        };
        Ok(true)
    }

    /// Calls the model with the time limit; returns the text between the
    /// `<observations>` tags, or an error for anything else.
    async fn call(&self, messages: &[Message]) -> Result<String> {
        let options = CallOptions::default();
        let reply = tokio::time::timeout(
            self.inner.timeout,
            self.inner.model.invoke(messages, &options),
        )
        .await
        .map_err(|_| AgentMemoryError::Observation {
            reason: format!(
                "the observer model did not answer within {} s",
                self.inner.timeout.as_secs_f64()
            ),
        })??;
        observations_of(&reply.text()).ok_or_else(|| {
            AgentMemoryError::Observation {
                reason:
                    "the observer model's answer has no observations between <observations> tags"
                        .into(),
            }
            .into()
        })
    }

    fn lock(&self, resource: &str, thread: &str) -> ThreadLock {
        let mut locks = self.inner.locks.lock().unwrap_or_else(|e| e.into_inner());
        if locks.len() > 1024 {
            locks.retain(|_, l| Arc::strong_count(l) > 1);
        }
        locks
            .entry((resource.to_owned(), thread.to_owned()))
            .or_default()
            .clone()
    }

    fn try_lock(&self, resource: &str, thread: &str) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        self.lock(resource, thread).try_lock_owned().ok()
    }
}

fn over(tokens: i64, threshold: usize) -> bool {
    usize::try_from(tokens).unwrap_or(usize::MAX) > threshold
}

fn warn(which: &str, e: &Error) {
    tracing::warn!(error = %e, "observational memory: the {which} failed; nothing was stored, the raw messages stay in context");
}

/// The text between `<observations>` and `</observations>`, if not empty.
fn observations_of(text: &str) -> Option<String> {
    let start = text.find("<observations>")? + "<observations>".len();
    let end = text[start..]
        .find("</observations>")
        .map_or(text.len(), |e| start + e);
    let inner = text[start..end].trim();
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// `body`, starting with a `Date:` line (the first message's date) unless
/// the observer wrote one.
fn dated(body: &str, first_ms: i64) -> String {
    if body.trim_start().starts_with("Date:") {
        body.to_owned()
    } else {
        format!("Date: {}\n{body}", date_time(first_ms).0)
    }
}

/// Whether `text` is memory the runtime injected (working memory, the
/// observation block): not conversation to observe.
fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with(BLOCK_HEADER)
        || t.starts_with("WORKING MEMORY:")
        || t.contains("<working_memory>")
}

/// `text` without `<system-reminder>…</system-reminder>` sections.
fn without_reminders(text: &str) -> String {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        match rest[i..].find(CLOSE) {
            Some(j) => rest = &rest[i + j + CLOSE.len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` shortened to about [`MAX_MESSAGE_CHARS`] characters.
fn capped(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_MESSAGE_CHARS {
        return text.to_owned();
    }
    let head = MAX_MESSAGE_CHARS * 3 / 4;
    let tail = MAX_MESSAGE_CHARS - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!(
        "{start}\n[... {} characters left out ...]\n{end}",
        n - head - tail
    )
}

/// The chunk as the observer reads it: one entry per message, system and
/// injected memory text left out.
fn transcript(chunk: &[StoredMessage]) -> String {
    let mut out = String::new();
    for m in chunk {
        let who = match m.message.role {
            Role::System => continue,
            Role::Human => "User",
            Role::Ai => "Assistant",
            Role::Tool | Role::Function => "Tool result",
            Role::Generic => m.message.chat_role.as_deref().unwrap_or("Message"),
        };
        let text = m.message.text();
        if is_injected(&text) {
            continue;
        }
        let mut text = without_reminders(&text).trim().to_owned();
        for call in &m.message.tool_calls {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("calls tool {}({})", call.name, call.args));
        }
        if text.is_empty() {
            continue;
        }
        let (date, time) = date_time(m.created_at);
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{date} {time}] {who}: {}", capped(&text)));
    }
    out
}

/// (`YYYY-MM-DD`, `HH:MM`) of Unix milliseconds, UTC.
fn date_time(ms: i64) -> (String, String) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{:02}:{:02}", of_day / 3600, of_day % 3600 / 60),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date_time(0), ("1970-01-01".into(), "00:00".into()));
        // 2024-02-29T13:45:00Z
        assert_eq!(
            date_time(1_709_214_300_000),
            ("2024-02-29".into(), "13:45".into())
        );
    }

    #[test]
    fn answers_need_observations() {
        assert_eq!(
            observations_of("x <observations>\n- a\n</observations>").as_deref(),
            Some("- a")
        );
        assert_eq!(observations_of("<observations> </observations>"), None);
        assert_eq!(observations_of("sure, here you go"), None);
    }

    #[test]
    fn reminders_are_cut_and_long_text_capped() {
        assert_eq!(
            without_reminders("a<system-reminder>secret</system-reminder>b"),
            "ab"
        );
        let long = "x".repeat(MAX_MESSAGE_CHARS * 3);
        let c = capped(&long);
        assert!(c.chars().count() < MAX_MESSAGE_CHARS + 100);
        assert!(c.contains("characters left out"));
    }
}
