//! Export and import of whole threads.

use super::*;

/// The export format's name and version, checked on import.
const EXPORT_FORMAT: &str = "nodekit-agent-memory-thread";
const EXPORT_VERSION: i64 = 1;

/// One message in an export: the stored JSON exactly as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportedMessage {
    seq: i64,
    message: Value,
    token_count: Option<i64>,
    created_at: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThreadExport {
    format: String,
    version: i64,
    thread: ThreadInfo,
    messages: Vec<ExportedMessage>,
    #[serde(default)]
    plan: Option<Value>,
    #[serde(default)]
    observations: Vec<Observation>,
    #[serde(default)]
    events: Vec<Event>,
}

/// Largest token count an imported message or observation may have: far
/// beyond any model's context, and small enough that no sum of them comes
/// near overflowing.
const MAX_TOKENS: i64 = u32::MAX as i64;

/// Latest time an import may carry: the end of year 9999, Unix milliseconds.
const MAX_TIME_MS: i64 = 253_402_300_799_999;

/// An import refused because of `field` of the record `at`.
fn bad_field(at: &str, field: &str, problem: impl std::fmt::Display) -> Error {
    AgentMemoryError::Import {
        reason: format!("{at}.{field} {problem}"),
    }
    .into()
}

/// Checks a time field: Unix milliseconds between 1970 and the year 9999.
fn check_time(at: &str, field: &str, ms: i64) -> Result<()> {
    if (0..=MAX_TIME_MS).contains(&ms) {
        Ok(())
    } else {
        Err(bad_field(
            at,
            field,
            format!("is {ms}, not a time between 1970 and 9999 in Unix milliseconds"),
        ))
    }
}

/// Checks a token count: between 0 and [`MAX_TOKENS`].
fn check_tokens(at: &str, tokens: i64) -> Result<()> {
    if (0..=MAX_TOKENS).contains(&tokens) {
        Ok(())
    } else {
        Err(bad_field(
            at,
            "tokenCount",
            format!("is {tokens}; it must be between 0 and {MAX_TOKENS}"),
        ))
    }
}

/// Checks a count that starts at 0.
fn check_not_negative(at: &str, field: &str, n: i64) -> Result<()> {
    if n < 0 {
        Err(bad_field(
            at,
            field,
            format!("is {n}; it must be 0 or more"),
        ))
    } else {
        Ok(())
    }
}

/// Checks a text field both databases can store: no NUL character.
fn check_text(at: &str, field: &str, text: &str) -> Result<()> {
    if text.contains('\0') {
        Err(bad_field(at, field, "contains a NUL character"))
    } else {
        Ok(())
    }
}

/// Checks the thread's own fields, its observations and its events against
/// the thread's messages (checked before: their seqs increase); returns the
/// thread's last seq, at least its last message's.
fn check_rest(export: &ThreadExport) -> Result<i64> {
    let t = &export.thread;
    if let Some(title) = &t.title {
        check_text("thread", "title", title)?;
    }
    check_not_negative("thread", "lastSeq", t.last_seq)?;
    check_time("thread", "createdAt", t.created_at)?;
    check_time("thread", "updatedAt", t.updated_at)?;
    let last_seq = t.last_seq.max(export.messages.last().map_or(0, |m| m.seq));
    for (i, o) in export.observations.iter().enumerate() {
        let at = format!("observations[{i}]");
        check_not_negative(&at, "generation", o.generation)?;
        check_text(&at, "content", &o.content)?;
        check_tokens(&at, o.token_count)?;
        let range = format!("seqs 1 to {last_seq}");
        if o.first_seq < 1 {
            let problem = format!(
                "is {}; observations cover the thread's messages, {range}",
                o.first_seq
            );
            return Err(bad_field(&at, "firstSeq", problem));
        }
        if o.last_seq < o.first_seq || o.last_seq > last_seq {
            let problem = format!(
                "is {}; observations cover the thread's messages, {range}, from firstSeq ({}) on",
                o.last_seq, o.first_seq
            );
            return Err(bad_field(&at, "lastSeq", problem));
        }
        check_time(&at, "createdAt", o.created_at)?;
    }
    for (i, e) in export.events.iter().enumerate() {
        let at = format!("events[{i}]");
        check_text(&at, "kind", &e.kind)?;
        check_time(&at, "createdAt", e.created_at)?;
    }
    Ok(last_seq)
}

impl Store {
    /// The role and token count of each message of `export` (counted now
    /// when the export has none), after checking every field: seqs from 1
    /// and increasing, readable messages, token counts and times in range.
    fn checked_messages(&self, export: &ThreadExport) -> Result<Vec<(Role, i64)>> {
        let mut prev = 0;
        let mut out = Vec::with_capacity(export.messages.len());
        for (i, m) in export.messages.iter().enumerate() {
            let at = format!("messages[{i}]");
            if m.seq <= prev {
                return Err(bad_field(
                    &at,
                    "seq",
                    format!(
                        "is {}; seqs start at 1 and increase, and it follows {prev}",
                        m.seq
                    ),
                ));
            }
            prev = m.seq;
            let message = Message::from_stored(&m.message).map_err(|e| {
                let why = shorten(&e.to_string(), 200);
                bad_field(&at, "message", format!("cannot be read: {why}"))
            })?;
            let tokens = match m.token_count {
                Some(t) => {
                    check_tokens(&at, t)?;
                    t
                }
                None => message_tokens(self.tokenizer, &message),
            };
            check_time(&at, "createdAt", m.created_at)?;
            out.push((message.role, tokens));
        }
        Ok(out)
    }

    /// The thread as JSON: its info, every message (in the stored form, as
    /// written, with seq, token count and time), its plan, observations and
    /// events. Row ids are left out: they belong to one database.
    pub async fn export_thread(&self, resource: &str, thread: &str) -> Result<Value> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        // Another resource's thread is refused as an unknown one is.
        let Some(info) = self.thread(resource, thread).await? else {
            return Err(no_thread(thread));
        };
        let messages = self
            .db
            .raw_messages(resource, thread, i64::MIN, i64::MAX)
            .await?
            .into_iter()
            .map(|m| ExportedMessage {
                seq: m.seq,
                message: m.content,
                token_count: Some(m.token_count),
                created_at: m.created_at,
            })
            .collect();
        let export = ThreadExport {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            thread: info,
            messages,
            plan: self.plan(resource, thread).await?,
            observations: self.observations(resource, thread).await?,
            events: self.events(resource, thread).await?,
        };
        Ok(serde_json::to_value(export).expect("an export is JSON"))
    }

    /// Imports an exported thread into `resource` (which may differ from the
    /// exporting one), in one transaction. Refuses a thread id that exists
    /// already: for another resource that is an ownership error; for this
    /// one, delete it first (an import never merges). Messages keep their
    /// seqs, times and token counts (counted now if the export has none).
    pub async fn import_thread(&self, resource: &str, export: Value) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        // The path names the field and record of a value of the wrong type.
        let export: ThreadExport =
            serde_path_to_error::deserialize(export).map_err(|e| AgentMemoryError::Import {
                reason: format!(
                    "not a thread export ({}: {})",
                    shorten(&e.path().to_string(), 80),
                    shorten(&e.inner().to_string(), 200)
                ),
            })?;
        if export.format != EXPORT_FORMAT || export.version != EXPORT_VERSION {
            return Err(AgentMemoryError::Import {
                reason: format!(
                    "unsupported export format {:?} version {} (expected {EXPORT_FORMAT:?} version {EXPORT_VERSION})",
                    shorten(&export.format, 60),
                    export.version
                ),
            }
            .into());
        }
        let thread = export.thread.id.clone();
        check_id("thread", &thread)?;
        let messages = self.checked_messages(&export)?;
        let last_seq = check_rest(&export)?;
        let info = ThreadInfo {
            resource_id: resource.to_owned(),
            last_seq,
            ..export.thread.clone()
        };
        in_write_tx!(self.db, tx => {
            let owner: Option<String> = sqlx::query_scalar("SELECT resource_id FROM nodekit_am_threads WHERE id = $1")
                .bind(&thread)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match owner {
                Some(o) if o != resource => return Err(ownership(resource, &thread)),
                Some(_) => {
                    return Err(AgentMemoryError::Import {
                        reason: format!("thread `{}` exists already; delete it before importing it again", shorten(&thread, 80)),
                    }
                    .into())
                }
                None => {}
            }
            sqlx::query("INSERT INTO nodekit_am_threads (id, resource_id, title, metadata, last_seq, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
                .bind(&info.id)
                .bind(resource)
                .bind(info.title.as_deref())
                .bind(Json(&info.metadata))
                .bind(info.last_seq)
                .bind(info.created_at)
                .bind(info.updated_at)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            for (m, (role, tokens)) in export.messages.iter().zip(&messages) {
                sqlx::query(
                    "INSERT INTO nodekit_am_messages (thread_id, resource_id, seq, role, content, token_count, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&thread)
                .bind(resource)
                .bind(m.seq)
                .bind(role.as_str())
                .bind(Json(&m.message))
                .bind(*tokens)
                .bind(m.created_at)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            }
            if let Some(plan) = &export.plan {
                sqlx::query("INSERT INTO nodekit_am_plans (thread_id, resource_id, plan, updated_at) VALUES ($1, $2, $3, $4)")
                    .bind(&thread)
                    .bind(resource)
                    .bind(Json(plan))
                    .bind(info.updated_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_err)?;
            }
            for o in &export.observations {
                sqlx::query(
                    "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&thread)
                .bind(resource)
                .bind(o.generation)
                .bind(&o.content)
                .bind(o.token_count)
                .bind(o.first_seq)
                .bind(o.last_seq)
                .bind(o.created_at)
                .bind(i64::from(o.buffered))
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            }
            for e in &export.events {
                sqlx::query("INSERT INTO nodekit_am_events (thread_id, resource_id, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5)")
                    .bind(&thread)
                    .bind(resource)
                    .bind(&e.kind)
                    .bind(Json(&e.payload))
                    .bind(e.created_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)?;
            Ok(info)
        })
    }
}
