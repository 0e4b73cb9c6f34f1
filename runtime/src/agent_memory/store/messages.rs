//! Messages: appending, and reading windows, ranges and counts.

use super::*;

/// [`Store::append`] on SQLite as one command to the connection's thread:
/// the transaction, the thread's claim and the inserts in one round trip
/// (each statement is a hop to the SQLite worker thread and back, which
/// costs more than the statement). Returns each message's (id, seq), in
/// order.
async fn sqlite_append(
    write: &sqlx::SqlitePool,
    resource: &str,
    thread: &str,
    prepared: &[(Value, i64)],
    messages: &[Message],
    now: i64,
) -> Result<Vec<(i64, i64)>> {
    // The messages as one JSON array of [role, content, tokens]; a thread
    // of another resource claims nothing, so no message is inserted.
    const SQL: &str = "BEGIN IMMEDIATE;
        INSERT INTO nodekit_am_threads (id, resource_id, last_seq, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $4)
          ON CONFLICT (id) DO UPDATE
            SET last_seq = nodekit_am_threads.last_seq + excluded.last_seq,
                updated_at = excluded.updated_at
            WHERE nodekit_am_threads.resource_id = excluded.resource_id;
        INSERT INTO nodekit_am_messages (thread_id, resource_id, seq, role, content, token_count, created_at)
          SELECT t.id, t.resource_id, t.last_seq - $3 + 1 + m.key, m.value ->> 0, m.value ->> 1, m.value ->> 2, $4
          FROM nodekit_am_threads t CROSS JOIN json_each($5) m
          WHERE t.id = $1 AND t.resource_id = $2
          RETURNING id, seq;
        COMMIT";
    let rows: Vec<Value> = messages
        .iter()
        .zip(prepared)
        .map(|(m, (content, tokens))| json!([m.role.as_str(), content.to_string(), tokens]))
        .collect();
    let count = i64::try_from(messages.len()).map_err(db_err)?;
    let mut conn = write.acquire().await.map_err(db_err)?;
    let done: std::result::Result<Vec<(i64, i64)>, sqlx::Error> = sqlx::query_as(SQL)
        .bind(thread)
        .bind(resource)
        .bind(count)
        .bind(now)
        .bind(Value::Array(rows).to_string())
        .fetch_all(&mut *conn)
        .await;
    let mut ids = match done {
        Ok(ids) => ids,
        Err(e) => {
            // The transaction may be left open: the connection is not reused.
            conn.close_on_drop();
            return Err(db_err(e));
        }
    };
    if ids.is_empty() {
        return Err(ownership(resource, thread));
    }
    if ids.len() != messages.len() {
        return Err(db_err(format!(
            "{} messages were written of {}",
            ids.len(),
            messages.len()
        )));
    }
    ids.sort_unstable_by_key(|(_, seq)| *seq);
    Ok(ids)
}

impl Store {
    /// Appends `messages` to the thread (created on first use) in one
    /// transaction, numbering them after the thread's last seq: concurrent
    /// appends to one thread queue on the thread row, so seqs have no gaps
    /// and no duplicates. Token counts are computed here, once, before the
    /// transaction starts.
    pub async fn append(
        &self,
        resource: &str,
        thread: &str,
        messages: &[Message],
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        if messages.is_empty() {
            self.check_not_foreign(resource, thread).await?;
            return Ok(Vec::new());
        }
        let prepared: Vec<(Value, i64)> = messages
            .iter()
            .map(|m| (m.to_stored(), message_tokens(self.tokenizer, m)))
            .collect();
        let count = i64::try_from(messages.len()).map_err(db_err)?;
        let now = now_ms();
        let stored = |m: &Message, token_count: i64, id, seq| StoredMessage {
            id,
            thread_id: thread.to_owned(),
            seq,
            message: m.clone(),
            token_count,
            created_at: now,
        };
        if let Db::Sqlite { write, .. } = &*self.db {
            let ids = sqlite_append(write, resource, thread, &prepared, messages, now).await?;
            return Ok(messages
                .iter()
                .zip(&prepared)
                .zip(ids)
                .map(|((m, (_, tokens)), (id, seq))| stored(m, *tokens, id, seq))
                .collect());
        }
        in_write_tx!(self, tx => {
            let last = claim_thread!(tx, resource, thread, now, count);
            let mut out = Vec::with_capacity(messages.len());
            for (i, (m, (content, tokens))) in messages.iter().zip(&prepared).enumerate() {
                let seq = last - count + 1 + i as i64;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO nodekit_am_messages (thread_id, resource_id, seq, role, content, token_count, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(thread)
                .bind(resource)
                .bind(seq)
                .bind(m.role.as_str())
                .bind(Json(content))
                .bind(*tokens)
                .bind(now)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
                out.push(stored(m, *tokens, id, seq));
            }
            tx.commit().await.map_err(db_err)?;
            Ok(out)
        })
    }

    pub(super) async fn raw_messages(
        &self,
        resource: &str,
        thread: &str,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<RawMessage>> {
        let sql = "SELECT id, thread_id, seq, content, token_count, created_at FROM nodekit_am_messages
                   WHERE thread_id = $1 AND resource_id = $2 AND seq >= $3 AND seq <= $4 ORDER BY seq";
        on_reader!(self, pool => {
            let rows = sqlx::query(sql)
                .bind(thread)
                .bind(resource)
                .bind(from_seq)
                .bind(to_seq)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(raw_from_row).collect()
        })
    }

    /// The messages of the thread in any of the seq ranges `ranges`
    /// (inclusive, not overlapping), in seq order: one query for all of them.
    pub(crate) async fn messages_in_ranges(
        &self,
        resource: &str,
        thread: &str,
        ranges: &[(i64, i64)],
    ) -> Result<Vec<StoredMessage>> {
        // SQLite: the ranges go as one JSON array of [from, to] pairs,
        // driving the join so each range is one search of the (thread, seq)
        // index. PostgreSQL: the seqs themselves, as an array (its planner
        // may scan a large thread for a join on ranges computed from JSON).
        const SQLITE: &str =
            "SELECT m.id, m.thread_id, m.seq, m.content, m.token_count, m.created_at
             FROM json_each($3) AS r CROSS JOIN nodekit_am_messages AS m
               ON m.thread_id = $1 AND m.seq BETWEEN r.value ->> 0 AND r.value ->> 1
             WHERE m.resource_id = $2 ORDER BY m.seq";
        const POSTGRES: &str = "SELECT id, thread_id, seq, content, token_count, created_at
             FROM nodekit_am_messages
             WHERE thread_id = $1 AND resource_id = $2 AND seq = ANY($3) ORDER BY seq";
        let raw: Vec<RawMessage> = match &*self.db {
            Db::Sqlite { read, .. } => {
                let ranges = serde_json::to_string(ranges).expect("ranges serialise");
                let rows = sqlx::query(SQLITE)
                    .bind(thread)
                    .bind(resource)
                    .bind(&ranges)
                    .fetch_all(read)
                    .await
                    .map_err(db_err)?;
                rows.iter().map(raw_from_row).collect::<Result<_>>()?
            }
            Db::Postgres(pool) => {
                let seqs: Vec<i64> = ranges.iter().flat_map(|&(a, b)| a..=b).collect();
                let rows = sqlx::query(POSTGRES)
                    .bind(thread)
                    .bind(resource)
                    .bind(&seqs)
                    .fetch_all(pool)
                    .await
                    .map_err(db_err)?;
                rows.iter().map(raw_from_row).collect::<Result<_>>()?
            }
        };
        Ok(raw.into_iter().filter_map(RawMessage::decode).collect())
    }

    /// Up to `limit` messages before seq `before`, newest first.
    pub(super) async fn messages_before(
        &self,
        resource: &str,
        thread: &str,
        before: i64,
        limit: i64,
    ) -> Result<Vec<StoredMessage>> {
        on_reader!(self, pool => {
            let rows = sqlx::query(
                "SELECT id, thread_id, seq, content, token_count, created_at FROM nodekit_am_messages
                 WHERE thread_id = $1 AND resource_id = $2 AND seq < $3 ORDER BY seq DESC LIMIT $4",
            )
            .bind(thread)
            .bind(resource)
            .bind(before)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            let raw: Result<Vec<_>> = rows.iter().map(raw_from_row).collect();
            Ok(raw?.into_iter().filter_map(RawMessage::decode).collect())
        })
    }

    /// The messages with `from_seq <= seq <= to_seq`, in order.
    pub async fn messages_range(
        &self,
        resource: &str,
        thread: &str,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let raw = self
            .raw_messages(resource, thread, from_seq, to_seq)
            .await?;
        Ok(raw.into_iter().filter_map(RawMessage::decode).collect())
    }

    /// The last `n` messages of the thread, oldest first, never splitting a
    /// tool call from its results.
    ///
    /// If the window would start with tool results whose AI tool-call
    /// message lies before it, the window is extended back to that message
    /// (and everything after it), so `n` is a target that can be exceeded:
    /// dropping the results instead would hide what the tools returned, and
    /// providers reject a tool result without its call. Only if the call is
    /// not found within 1,000 earlier messages (a damaged thread) are the
    /// orphaned results left out.
    pub async fn recent(
        &self,
        resource: &str,
        thread: &str,
        n: usize,
    ) -> Result<Vec<StoredMessage>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        let mut window = self.messages_before(resource, thread, i64::MAX, n).await?;
        if window.is_empty() {
            return Ok(window);
        }
        window.reverse();
        let (mut missing, any) = unmatched_results(&window);
        if missing.is_empty() && !any {
            return Ok(window);
        }
        // Walk back in pages until every orphaned result has its call.
        let mut extension: Vec<StoredMessage> = Vec::new();
        let mut start = window[0].seq;
        let mut scanned = 0;
        let mut found = false;
        'pages: while scanned < MAX_TOOL_CALL_LOOKBACK {
            let page = self.messages_before(resource, thread, start, 64).await?;
            if page.is_empty() {
                break;
            }
            scanned += page.len() as i64;
            for m in page {
                start = m.seq;
                let is_ai = m.message.role == Role::Ai;
                if is_ai {
                    for c in &m.message.tool_calls {
                        missing.remove(&c.id);
                    }
                }
                extension.push(m);
                // The nearest AI message also owns id-less results (`any`).
                if is_ai && missing.is_empty() {
                    found = true;
                    break 'pages;
                }
            }
        }
        if found {
            extension.reverse();
            extension.append(&mut window);
            return Ok(extension);
        }
        // A damaged thread: leave out the results whose call is lost.
        let (missing, any) = unmatched_results(&window);
        let mut seen_other = false;
        window.retain(|m| {
            let orphan = matches!(m.message.role, Role::Tool | Role::Function)
                && match &m.message.tool_call_id {
                    Some(id) => missing.contains(id),
                    None => any && !seen_other,
                };
            if !orphan {
                seen_other = true;
            }
            !orphan
        });
        Ok(window)
    }

    /// How many messages the thread has.
    pub async fn message_count(&self, resource: &str, thread: &str) -> Result<i64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        on_reader!(self, pool => {
            sqlx::query_scalar("SELECT COUNT(*) FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2")
                .bind(thread)
                .bind(resource)
                .fetch_one(pool)
                .await
                .map_err(db_err)
        })
    }

    /// The sum of the stored token counts of the messages after `after_seq`
    /// (the observer's trigger: nothing is recounted).
    pub async fn unobserved_tokens(
        &self,
        resource: &str,
        thread: &str,
        after_seq: i64,
    ) -> Result<i64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        // Summed as floats, so the sum saturates instead of overflowing
        // (SQLite's integer SUM fails on overflow, PostgreSQL's cast back to
        // BIGINT too); a threshold needs no more precision than that.
        let n: f64 = on_reader!(self, pool => {
            sqlx::query_scalar("SELECT CAST(COALESCE(SUM(CAST(token_count AS DOUBLE PRECISION)), 0) AS DOUBLE PRECISION) FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2 AND seq > $3")
                .bind(thread)
                .bind(resource)
                .bind(after_seq)
                .fetch_one(pool)
                .await
                .map_err(db_err)?
        });
        // `as` saturates.
        Ok(n as i64)
    }
}
