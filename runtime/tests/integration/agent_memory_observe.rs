//! Observational memory on real databases (a SQLite file; the PostgreSQL
//! server of `scripts/services.sh` when `DATABASE_URL` is set: skipped with
//! a reason otherwise, a failure under `CI=true`) with the observer model
//! behind a scripted OpenAI-compatible server on 127.0.0.1.

use nodekit_test_support::openai as support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::stores::Pg;
use nodekit::agent_memory::observe::{BLOCK_HEADER, MAX_MESSAGE_CHARS};
use nodekit::agent_memory::{
    MemoryConfig, Observer, PartKind, Recaller, Store, assemble, working_memory,
};
use nodekit::embed::{EmbeddingsConfig, OpenAiEmbedder};
use nodekit::message::Message;
use nodekit::model::ChatModel;
use nodekit::model::openai::{OpenAiChatModel, OpenAiConfig};
use nodekit_test_support::embeddings::EmbedServer;
use serde_json::{Value, json};
use support::{Reply, Server, Step};

const R: &str = "user-1";
const T: &str = "thread-1";

/// A store on one backend, cleaned up by `finish`; PostgreSQL ones live in a schema of their own.
struct Db {
    store: Store,
    pg: Option<Pg>,
}

impl Db {
    async fn sqlite() -> Db {
        Db {
            store: crate::stores::sqlite("observe").await,
            pg: None,
        }
    }

    async fn postgres() -> Option<Db> {
        let pg = Pg::new().await?;
        Some(Db {
            store: pg.store.clone(),
            pg: Some(pg),
        })
    }

    async fn finish(self) {
        match self.pg {
            Some(pg) => pg.drop().await,
            None => self.store.close().await,
        }
    }
}

/// Runs `$body(store)` once on SQLite and once on PostgreSQL.
macro_rules! on_both {
    ($sqlite:ident, $postgres:ident, $body:ident) => {
        #[tokio::test]
        async fn $sqlite() {
            let db = Db::sqlite().await;
            $body(db.store.clone()).await;
            db.finish().await;
        }

        #[tokio::test]
        async fn $postgres() {
            let Some(db) = Db::postgres().await else {
                return;
            };
            $body(db.store.clone()).await;
            db.finish().await;
        }
    };
}

fn model(server: &Server) -> Arc<dyn ChatModel> {
    let mut config =
        OpenAiConfig::new("sk-test", "observer-test").base_url(server.base_url.clone());
    config.max_retries = 0;
    Arc::new(OpenAiChatModel::new(config).unwrap())
}

fn answer(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
    )
}

fn observations(text: &str) -> Reply {
    answer(&format!("<observations>\n{text}\n</observations>"))
}

fn config(observer: usize, reflector: usize) -> MemoryConfig {
    MemoryConfig::default()
        .thresholds(observer, reflector)
        .unwrap()
}

/// A user message of about 50 tokens with a recognisable label.
fn message(label: &str) -> Message {
    Message::human(format!(
        "{label}: {}",
        "please keep the workflow running every morning ".repeat(6)
    ))
}

async fn append(store: &Store, labels: &[&str]) {
    let messages: Vec<Message> = labels.iter().map(|l| message(l)).collect();
    store.append(R, T, &messages).await.unwrap();
}

/// The text of every request the observer server received.
fn request_texts(server: &Server) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|s| {
            s.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
                .join("\n---\n")
        })
        .collect()
}

fn user_text_of(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn recent_texts(store: &Store, config: &MemoryConfig) -> (Option<String>, Vec<String>) {
    let ctx = assemble(store, config, R, T, None).await.unwrap();
    let block = ctx
        .parts
        .iter()
        .find(|p| p.kind == PartKind::Observations)
        .map(|p| p.messages[0].text());
    let recent = ctx
        .parts
        .iter()
        .filter(|p| p.kind == PartKind::Recent)
        .flat_map(|p| p.messages.iter().map(|m| m.text()))
        .collect();
    (block, recent)
}

// ------------------------------------------------------------------ observer

async fn observer_compresses_the_oldest_messages(store: Store) {
    let server = Server::start(vec![observations(
        "Date: 2024-05-01\n- [09:00] (!) User wants the workflow to run every morning.",
    )])
    .await;
    let config = config(200, 10_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    append(&store, &["m1", "m2", "m3"]).await;
    // Below the threshold: nothing to do, no model call.
    let done = observer.prepare(R, T).await.unwrap();
    assert_eq!(done, Default::default());
    assert!(server.seen().is_empty());
    append(&store, &["m4", "m5", "m6"]).await;
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.observed && done.activated == 0, "{done:?}");
    assert_eq!(server.seen().len(), 1);
    let obs = store.observations(R, T).await.unwrap();
    assert_eq!(obs.len(), 1);
    assert!(!obs[0].buffered);
    assert_eq!(obs[0].first_seq, 1);
    // The oldest messages that fit in the threshold's tokens.
    let stored = store.messages_range(R, T, 1, 6).await.unwrap();
    let mut sum = 0;
    let fit = stored
        .iter()
        .take_while(|m| {
            sum += m.token_count;
            sum <= 200
        })
        .count();
    assert!((2..6).contains(&fit));
    assert_eq!(obs[0].last_seq, fit as i64, "{obs:?}");
    assert!(obs[0].content.starts_with("Date: 2024-05-01"));
    let sent = user_text_of(&server.seen()[0].body);
    assert!(sent.contains("m1:") && !sent.contains(&format!("m{}:", fit + 1)));
    // The context: the block, then only the messages it does not cover.
    let (block, recent) = recent_texts(&store, &config).await;
    let block = block.expect("an observation block");
    assert!(block.starts_with(BLOCK_HEADER));
    assert!(block.contains("every morning"));
    assert_eq!(recent.len(), 6 - fit);
    assert!(recent[0].starts_with(&format!("m{}:", fit + 1)));
    let (text, tokens) = observer.block(R, T).await.unwrap();
    assert_eq!(text, block);
    assert!(tokens > 0);
}
on_both!(
    observer_compresses_the_oldest_messages_sqlite,
    observer_compresses_the_oldest_messages_postgres,
    observer_compresses_the_oldest_messages
);

// ------------------------------------------------------------------ failures

async fn failures_lose_nothing_and_retry(store: Store) {
    let server = Server::start(vec![
        Reply::json(500, &json!({"error": {"message": "boom"}})),
        answer("Sure! The user likes mornings."),
        answer("<observations>\n   \n</observations>"),
        Reply(vec![Step::Sleep(Duration::from_secs(5))]),
        observations("- [09:00] User wants the workflow every morning."),
    ])
    .await;
    let config = config(200, 10_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server))
        .with_timeout(Duration::from_millis(300));
    append(&store, &["m1", "m2", "m3", "m4", "m5"]).await;
    for attempt in 1..=4 {
        let done = observer.prepare(R, T).await.unwrap();
        assert!(!done.observed, "attempt {attempt}: {done:?}");
        assert!(done.error.is_some(), "attempt {attempt}: {done:?}");
        assert!(store.observations(R, T).await.unwrap().is_empty());
        let (block, recent) = recent_texts(&store, &config).await;
        assert_eq!(block, None);
        assert_eq!(recent.len(), 5, "attempt {attempt}: raw messages stay");
    }
    // The next call succeeds.
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.observed, "{done:?}");
    let (block, recent) = recent_texts(&store, &config).await;
    assert!(block.unwrap().contains("every morning"));
    assert!(recent.len() < 5);
    assert_eq!(server.seen().len(), 5);
}
on_both!(
    failures_lose_nothing_and_retry_sqlite,
    failures_lose_nothing_and_retry_postgres,
    failures_lose_nothing_and_retry
);

async fn a_message_larger_than_the_threshold_is_observed_alone(store: Store) {
    let server = Server::start(vec![observations("- [09:00] User pasted a huge log.")]).await;
    let config = config(200, 10_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    let huge = format!(
        "HUGE-START {} HUGE-END",
        "log line error 42 ".repeat(20_000)
    );
    store
        .append(R, T, &[Message::human(huge), message("after")])
        .await
        .unwrap();
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.observed, "{done:?}");
    let obs = store.observations(R, T).await.unwrap();
    assert_eq!((obs[0].first_seq, obs[0].last_seq), (1, 1));
    let sent = user_text_of(&server.seen()[0].body);
    assert!(sent.chars().count() < MAX_MESSAGE_CHARS + 1_000, "capped");
    assert!(sent.contains("HUGE-START") && sent.contains("HUGE-END"));
    assert!(sent.contains("characters left out"));
    assert!(!sent.contains("after:"));
    let (_, recent) = recent_texts(&store, &config).await;
    assert_eq!(recent.len(), 1);
    assert!(recent[0].starts_with("after:"));
}
on_both!(
    a_message_larger_than_the_threshold_is_observed_alone_sqlite,
    a_message_larger_than_the_threshold_is_observed_alone_postgres,
    a_message_larger_than_the_threshold_is_observed_alone
);

async fn system_and_memory_text_never_reach_the_observer(store: Store) {
    let server = Server::start(vec![observations("- [09:00] User asked for a workflow.")]).await;
    let config = config(200, 10_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    store
        .append(
            R,
            T,
            &[
                Message::system("SYSTEM-SECRET: you are a helpful agent"),
                Message::human(working_memory::system_text("# User\n- Name: WM-SECRET")),
                Message::human(format!("{BLOCK_HEADER}\n\n- OBS-SECRET")),
                Message::human(
                    "<system-reminder>REMINDER-SECRET: call the plan tool</system-reminder>build me a workflow",
                ),
                message("m1"),
                message("m2"),
                message("m3"),
            ],
        )
        .await
        .unwrap();
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.observed, "{done:?}");
    let request = &server.seen()[0].body;
    let system: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(system.len(), 1, "only the observer's instructions");
    assert!(system[0].contains("system reminders"));
    let all = request_texts(&server).join("\n");
    for secret in [
        "SYSTEM-SECRET",
        "WM-SECRET",
        "OBS-SECRET",
        "REMINDER-SECRET",
    ] {
        assert!(!all.contains(secret), "{secret} was sent to the observer");
    }
    let user = user_text_of(request);
    assert!(user.contains("build me a workflow"));
    assert!(user.contains("m1:"));
}
on_both!(
    system_and_memory_text_never_reach_the_observer_sqlite,
    system_and_memory_text_never_reach_the_observer_postgres,
    system_and_memory_text_never_reach_the_observer
);

// ----------------------------------------------------------------- reflector

async fn block_is_append_only_until_a_reflection(store: Store) {
    let filler = |tag: &str| format!("- [09:00] {tag} {}", "fact about the build ".repeat(25));
    let server = Server::start(vec![
        observations(&filler("OBS-1")),
        observations(&filler("OBS-2")),
        observations(&filler("OBS-3")),
        observations("- [09:00] REFLECTED: the user builds a morning workflow."),
        observations(&filler("OBS-4")),
    ])
    .await;
    let config = config(100, 300);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    let mut blocks: Vec<String> = Vec::new();
    for round in 0..4 {
        let labels: Vec<String> = (0..3).map(|i| format!("r{round}m{i}")).collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        append(&store, &labels).await;
        let done = observer.prepare(R, T).await.unwrap();
        assert!(done.observed, "round {round}: {done:?}");
        assert!(done.error.is_none(), "round {round}: {done:?}");
        blocks.push(observer.block(R, T).await.unwrap().0);
    }
    assert!(blocks[1].starts_with(&blocks[0]) && blocks[1].len() > blocks[0].len());
    // Round 3 crossed the reflector's threshold: a new generation.
    assert!(blocks[2].contains("REFLECTED") && !blocks[2].contains("OBS-1"));
    assert!(!blocks[2].starts_with(&blocks[1]));
    // Appending after the reflection keeps the new block's prefix.
    assert!(blocks[3].starts_with(&blocks[2]) && blocks[3].contains("OBS-4"));
    let obs = store.observations(R, T).await.unwrap();
    let newest = obs.iter().map(|o| o.generation).max().unwrap();
    assert_eq!(newest, 1);
    let reflection = obs
        .iter()
        .find(|o| o.content.contains("REFLECTED"))
        .unwrap();
    assert_eq!((reflection.generation, reflection.first_seq), (1, 1));
    // Generation 0 is kept in storage but not shown.
    assert!(
        obs.iter()
            .any(|o| o.generation == 0 && o.content.contains("OBS-1"))
    );
    let reflector_request = user_text_of(&server.seen()[3].body);
    assert!(reflector_request.contains("OBS-1") && reflector_request.contains("OBS-3"));
}
on_both!(
    block_is_append_only_until_a_reflection_sqlite,
    block_is_append_only_until_a_reflection_postgres,
    block_is_append_only_until_a_reflection
);

async fn a_failed_reflection_keeps_the_generation(store: Store) {
    let filler = |tag: &str| format!("- [09:00] {tag} {}", "fact about the build ".repeat(40));
    let server = Server::start(vec![
        observations(&filler("OBS-1")),
        observations(&filler("OBS-2")),
        // Not shorter than its input: refused.
        observations(&[filler("LONG"), filler("LONGER"), filler("LONGEST")].join("\n")),
        observations("- [09:00] REFLECTED."),
    ])
    .await;
    let config = config(100, 250);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    append(&store, &["a1", "a2", "a3"]).await;
    let done = observer.prepare(R, T).await.unwrap();
    assert!(
        done.observed && !done.reflected && done.error.is_none(),
        "{done:?}"
    );
    append(&store, &["b1", "b2", "b3"]).await;
    let done = observer.prepare(R, T).await.unwrap();
    assert!(
        done.observed && !done.reflected && done.error.is_some(),
        "{done:?}"
    );
    let block = observer.block(R, T).await.unwrap().0;
    assert!(block.contains("OBS-1") && block.contains("OBS-2"));
    // Retried on the next call.
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.reflected, "{done:?}");
    let block = observer.block(R, T).await.unwrap().0;
    assert!(block.contains("REFLECTED") && !block.contains("OBS-1"));
}
on_both!(
    a_failed_reflection_keeps_the_generation_sqlite,
    a_failed_reflection_keeps_the_generation_postgres,
    a_failed_reflection_keeps_the_generation
);

/// A reflection computed ahead in the background becomes the new
/// generation with one database update once the threshold is crossed: the
/// request path makes no model call, and the observation made since the
/// reflection was computed follows it in the block.
async fn buffered_reflection_activates_without_a_model_call(store: Store) {
    let filler = |tag: &str| format!("- [09:00] {tag} {}", "fact about the build ".repeat(25));
    let server = Server::start(vec![observations(
        "- [09:00] REFLECTED AHEAD: the user builds a morning workflow.",
    )])
    .await;
    // No observing here (the observations are written directly); reflected
    // ahead past 320 tokens, activated past 400.
    let config = config(100_000, 400);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    append(&store, &["m1", "m2", "m3", "m4"]).await;
    for seq in 1..=3 {
        let content = filler(&format!("OBS-{seq}"));
        store
            .add_observation(R, T, 0, &content, seq, seq)
            .await
            .unwrap();
    }
    let (before, tokens) = observer.block(R, T).await.unwrap();
    assert!((321..=400).contains(&tokens), "{tokens} block tokens");
    // The background run reflects ahead; the block does not change.
    observer.after_append(R, T).await.unwrap();
    assert_eq!(server.seen().len(), 1);
    assert!(user_text_of(&server.seen()[0].body).contains("OBS-3"));
    assert!(
        store
            .observation_marks(R, T)
            .await
            .unwrap()
            .reflection_buffered
    );
    assert_eq!(observer.block(R, T).await.unwrap().0, before);
    assert!(
        store
            .observations(R, T)
            .await
            .unwrap()
            .iter()
            .all(|o| !o.content.contains("REFLECTED")),
        "a buffered reflection is not an observation yet"
    );
    // A later observation crosses the threshold: the request path activates
    // the reflection, with no model call.
    store
        .add_observation(R, T, 0, &filler("OBS-4"), 4, 4)
        .await
        .unwrap();
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.reflection_activated && !done.reflected, "{done:?}");
    assert_eq!(server.seen().len(), 1, "no model call on the request path");
    let (block, _) = observer.block(R, T).await.unwrap();
    assert!(block.contains("REFLECTED AHEAD") && block.contains("OBS-4"));
    assert!(!block.contains("OBS-1") && !block.contains("OBS-3"));
    assert!(block.find("REFLECTED AHEAD") < block.find("OBS-4"));
    let marks = store.observation_marks(R, T).await.unwrap();
    assert_eq!(marks.generation, 1);
    assert!(!marks.reflection_buffered);
}
on_both!(
    buffered_reflection_activates_without_a_model_call_sqlite,
    buffered_reflection_activates_without_a_model_call_postgres,
    buffered_reflection_activates_without_a_model_call
);

/// A buffered reflection of a generation that was reflected meanwhile is
/// dropped, never activated over the newer one.
async fn a_stale_buffered_reflection_is_dropped(store: Store) {
    append(&store, &["a", "b", "c", "d", "e"]).await;
    store
        .add_observation(R, T, 0, "- OBS-A", 1, 2)
        .await
        .unwrap();
    store
        .add_buffered_reflection(R, T, 0, "- STALE", 1, 2)
        .await
        .unwrap();
    assert!(
        store
            .observation_marks(R, T)
            .await
            .unwrap()
            .reflection_buffered
    );
    store
        .add_observation(R, T, 0, "- OBS-B", 3, 4)
        .await
        .unwrap();
    store
        .add_reflection(R, T, 0, "- FRESH", 1, 4)
        .await
        .unwrap();
    assert!(!store.activate_reflection(R, T).await.unwrap());
    // One computed from generation 0 after generation 1 exists.
    store
        .add_buffered_reflection(R, T, 0, "- STALE TOO", 1, 2)
        .await
        .unwrap();
    assert!(
        !store
            .observation_marks(R, T)
            .await
            .unwrap()
            .reflection_buffered
    );
    assert!(!store.activate_reflection(R, T).await.unwrap());
    let block = nodekit::agent_memory::observe::block(&store, R, T)
        .await
        .unwrap();
    assert!(block.text.contains("FRESH") && !block.text.contains("STALE"));
    // Computed ahead for generation 1, then activated.
    store
        .add_buffered_reflection(R, T, 1, "- NEXT", 1, 4)
        .await
        .unwrap();
    store
        .add_observation(R, T, 1, "- OBS-C", 5, 5)
        .await
        .unwrap();
    assert!(store.activate_reflection(R, T).await.unwrap());
    let block = nodekit::agent_memory::observe::block(&store, R, T)
        .await
        .unwrap();
    assert!(block.text.contains("NEXT") && block.text.contains("OBS-C"));
    assert!(!block.text.contains("FRESH"));
    assert_eq!(store.observation_marks(R, T).await.unwrap().generation, 2);
}
on_both!(
    a_stale_buffered_reflection_is_dropped_sqlite,
    a_stale_buffered_reflection_is_dropped_postgres,
    a_stale_buffered_reflection_is_dropped
);

// ----------------------------------------------------------------- buffering

async fn buffered_chunks_activate_without_a_model_call(store: Store) {
    let server = Server::start(vec![observations("- [09:00] BUFFERED chunk.")]).await;
    let config = config(500, 100_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    // About 54 tokens a message; a chunk is buffered every 100 tokens.
    for i in 0..8 {
        append(&store, &[&format!("m{i}")]).await;
        observer.after_append(R, T).await.unwrap();
    }
    let calls = server.seen().len();
    assert!(calls >= 3, "{calls} chunks buffered in the background");
    let obs = store.observations(R, T).await.unwrap();
    assert!(obs.iter().all(|o| o.buffered));
    // Buffered chunks are not in the context yet.
    let (block, recent) = recent_texts(&store, &config).await;
    assert_eq!(block, None);
    assert_eq!(recent.len(), 8);
    // Cross the threshold with no background run.
    append(&store, &["m8", "m9", "m10"]).await;
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.activated >= 3 && !done.observed, "{done:?}");
    assert_eq!(
        server.seen().len(),
        calls,
        "no model call on the request path"
    );
    let obs = store.observations(R, T).await.unwrap();
    assert!(obs.iter().all(|o| !o.buffered));
    let last = obs.iter().map(|o| o.last_seq).max().unwrap();
    let (block, recent) = recent_texts(&store, &config).await;
    assert!(block.unwrap().contains("BUFFERED"));
    assert_eq!(recent.len(), 11 - usize::try_from(last).unwrap());
    assert!(recent.last().unwrap().starts_with("m10:"));
}
on_both!(
    buffered_chunks_activate_without_a_model_call_sqlite,
    buffered_chunks_activate_without_a_model_call_postgres,
    buffered_chunks_activate_without_a_model_call
);

async fn background_runs_observe_once_the_threshold_is_crossed(store: Store) {
    // The observer fails while buffering: nothing is lost, and the request
    // path observes synchronously once the threshold is crossed.
    let server = Server::start(vec![
        Reply::json(500, &json!({"error": {"message": "down"}})),
        observations("- [09:00] SYNC observation."),
    ])
    .await;
    let config = config(500, 100_000);
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    append(&store, &["m0", "m1", "m2"]).await;
    observer.after_append(R, T).await.unwrap();
    assert!(store.observations(R, T).await.unwrap().is_empty());
    append(
        &store,
        &["m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"],
    )
    .await;
    let done = observer.prepare(R, T).await.unwrap();
    assert!(done.observed && done.activated == 0, "{done:?}");
    let (block, _) = recent_texts(&store, &config).await;
    assert!(block.unwrap().contains("SYNC"));
}
on_both!(
    background_runs_observe_once_the_threshold_is_crossed_sqlite,
    background_runs_observe_once_the_threshold_is_crossed_postgres,
    background_runs_observe_once_the_threshold_is_crossed
);

// ------------------------------------------------------------------- scale

/// A thread of a million tokens: each count is stored once when written,
/// the context is still only the recent window, and the background run
/// works through the whole backlog one chunk at a time, never sending the
/// observer more than a chunk (one message here, cut at MAX_MESSAGE_CHARS).
async fn a_million_token_thread(store: Store) {
    let server = Server::start(vec![observations("- [09:00] A long report was pasted.")]).await;
    let config = MemoryConfig::default();
    let observer = Observer::new(store.clone(), config.clone(), model(&server));
    let report = "lorem ".repeat(10_000);
    for batch in 0..10 {
        let messages: Vec<Message> = (0..10)
            .map(|i| Message::human(format!("m{}: {report}", batch * 10 + i)))
            .collect();
        store.append(R, T, &messages).await.unwrap();
    }
    let total = store.unobserved_tokens(R, T, 0).await.unwrap();
    assert!(total >= 1_000_000, "{total} tokens");
    let ctx = assemble(&store, &config, R, T, None).await.unwrap();
    let recent = ctx
        .parts
        .iter()
        .find(|p| p.kind == PartKind::Recent)
        .unwrap();
    assert_eq!(recent.messages.len(), 20);

    observer.after_append(R, T).await.unwrap();
    let seen = server.seen();
    assert_eq!(
        seen.len(),
        100,
        "one observer call per 10,000-token message"
    );
    for request in &seen {
        let sent = user_text_of(&request.body).chars().count();
        assert!(sent < MAX_MESSAGE_CHARS + 4_000, "{sent} characters sent");
    }
    let (block, recent) = recent_texts(&store, &config).await;
    assert!(block.unwrap().contains("A long report was pasted."));
    assert!(
        recent.is_empty(),
        "every message is observed: {}",
        recent.len()
    );
}
on_both!(
    a_million_token_thread_sqlite,
    a_million_token_thread_postgres,
    a_million_token_thread
);

/// A thread deleted while work for it is still in flight stays deleted:
/// each thread is deleted at another moment after its append (at once, or
/// while the observer waits for its model, or while the indexer waits for
/// its embedder), and neither the observation nor the vectors that arrive
/// afterwards bring it back.
async fn a_deleted_thread_stays_deleted(store: Store) {
    const THREADS: u64 = 40;
    let server = Server::start(vec![
        observations("- [09:00] the user keeps a workflow running.")
            .after(Duration::from_millis(20)),
    ])
    .await;
    let embeddings = EmbedServer::start(16).await;
    let mut embed_config = EmbeddingsConfig::new("sk-test", "bow");
    embed_config.base_url = embeddings.base_url.clone();
    embed_config.max_retries = 0;
    let recaller = Recaller::spawn(
        nodekit::agent_memory::Recall::new(store.db()),
        Arc::new(OpenAiEmbedder::new(embed_config).unwrap()),
    );
    // Every append of two messages is a chunk to buffer ahead.
    let observer = Observer::new(store.clone(), config(100, 100_000), model(&server));
    let mut runs = Vec::new();
    for i in 0..THREADS {
        let thread = format!("race-{i}");
        embeddings.delay_ms.store(i % 5 * 6, Ordering::SeqCst);
        store
            .append(R, &thread, &[message("a"), message("b")])
            .await
            .unwrap();
        runs.push(observer.after_append(R, &thread));
        recaller.notify(R, &thread);
        tokio::time::sleep(Duration::from_millis(i % 8 * 5)).await;
        assert!(store.delete_thread(R, &thread).await.unwrap());
    }
    for run in runs {
        run.await.unwrap();
    }
    recaller.flush().await.unwrap();
    assert!(
        !server.seen().is_empty(),
        "the observer never ran: the test raced nothing"
    );
    for i in 0..THREADS {
        let thread = format!("race-{i}");
        assert_eq!(store.thread(R, &thread).await.unwrap(), None, "{thread}");
        assert!(store.observations(R, &thread).await.unwrap().is_empty());
    }
    assert!(store.threads(R).await.unwrap().is_empty());
}
on_both!(
    a_deleted_thread_stays_deleted_sqlite,
    a_deleted_thread_stays_deleted_postgres,
    a_deleted_thread_stays_deleted
);
