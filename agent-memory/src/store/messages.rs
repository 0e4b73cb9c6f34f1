//! Messages: appending, and reading windows, ranges and counts.

use super::*;

#[cfg(feature = "sqlite")]
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
    let count = i64::try_from(messages.len()).expect("a slice's length fits in i64");
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
        return Err(db_err(sqlx::Error::Protocol(format!(
            "{} messages were written of {}",
            ids.len(),
            messages.len()
        ))));
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
        let count = i64::try_from(messages.len()).expect("a slice's length fits in i64");
        let now = now_ms();
        let stored = |m: &Message, token_count: i64, id, seq| StoredMessage {
            id,
            thread_id: thread.to_owned(),
            seq,
            message: m.clone(),
            token_count,
            created_at: now,
        };
        #[cfg(feature = "sqlite")]
        #[allow(irrefutable_let_patterns)]
        if let Pools::Sqlite { write, .. } = self.db.pools() {
            let ids = sqlite_append(write, resource, thread, &prepared, messages, now).await?;
            return Ok(messages
                .iter()
                .zip(&prepared)
                .zip(ids)
                .map(|((m, (_, tokens)), (id, seq))| stored(m, *tokens, id, seq))
                .collect());
        }
        in_write_tx!(self.db, tx => {
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

    /// The messages with `from_seq <= seq <= to_seq`, in order.
    pub async fn messages_range(
        &self,
        resource: &str,
        thread: &str,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<StoredMessage>> {
        self.db
            .messages_range(resource, thread, from_seq, to_seq)
            .await
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
        self.db.recent(resource, thread, n).await
    }

    /// How many messages the thread has.
    pub async fn message_count(&self, resource: &str, thread: &str) -> Result<i64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        on_reader!(self.db, pool => {
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
        let n: f64 = on_reader!(self.db, pool => {
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
