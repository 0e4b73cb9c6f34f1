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

impl Store {
    /// The thread as JSON: its info, every message (in the stored form, as
    /// written, with seq, token count and time), its plan, observations and
    /// events. Row ids are left out: they belong to one database.
    pub async fn export_thread(&self, resource: &str, thread: &str) -> Result<Value> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let info = match self.find_thread(thread).await? {
            Some(t) if t.resource_id == resource => t,
            Some(_) => return Err(ownership(resource, thread)),
            None => {
                return Err(Error::AgentMemory {
                    what: format!("there is no thread `{}`", shorten(thread, 80)),
                });
            }
        };
        let messages = self
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
        serde_json::to_value(export).map_err(db_err)
    }

    /// Imports an exported thread into `resource` (which may differ from the
    /// exporting one), in one transaction. Refuses a thread id that exists
    /// already: for another resource that is an ownership error; for this
    /// one, delete it first (an import never merges). Messages keep their
    /// seqs, times and token counts (counted now if the export has none).
    pub async fn import_thread(&self, resource: &str, export: Value) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        let export: ThreadExport =
            serde_json::from_value(export).map_err(|e| Error::AgentMemory {
                what: format!("not a thread export: {e}"),
            })?;
        if export.format != EXPORT_FORMAT || export.version != EXPORT_VERSION {
            return Err(Error::AgentMemory {
                what: format!(
                    "unsupported export format {:?} version {} (expected {EXPORT_FORMAT:?} version {EXPORT_VERSION})",
                    shorten(&export.format, 60),
                    export.version
                ),
            });
        }
        let thread = export.thread.id.clone();
        check_id("thread", &thread)?;
        let mut last_seq = export.thread.last_seq;
        let mut prev = 0;
        let mut messages = Vec::with_capacity(export.messages.len());
        for m in &export.messages {
            if m.seq <= prev {
                return Err(Error::AgentMemory {
                    what: format!(
                        "message seqs must be positive and increasing; {} follows {prev}",
                        m.seq
                    ),
                });
            }
            prev = m.seq;
            let message = Message::from_stored(&m.message)?;
            let tokens = match m.token_count {
                Some(t) => t,
                None => message_tokens(self.tokenizer, &message),
            };
            messages.push((m, message.role, tokens));
        }
        last_seq = last_seq.max(prev);
        let info = ThreadInfo {
            resource_id: resource.to_owned(),
            last_seq,
            ..export.thread.clone()
        };
        in_write_tx!(self, tx => {
            let owner: Option<String> = sqlx::query_scalar("SELECT resource_id FROM nodekit_am_threads WHERE id = $1")
                .bind(&thread)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match owner {
                Some(o) if o != resource => return Err(ownership(resource, &thread)),
                Some(_) => {
                    return Err(Error::AgentMemory {
                        what: format!("thread `{}` exists already; delete it before importing it again", shorten(&thread, 80)),
                    })
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
            for (m, role, tokens) in &messages {
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
