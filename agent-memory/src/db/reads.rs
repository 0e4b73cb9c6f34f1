//! The reads every tier shares: a thread, its messages by seq, its recent
//! window.

use std::collections::HashSet;

use super::{Db, Pools, RawMessage, StoredMessage, ThreadInfo, check_id, db_err, on_reader};
use super::{raw_from_row, thread_from_row};
use nodekit_core::error::Result;
use nodekit_core::message::Role;

/// How far back [`Db::recent`] looks for the tool call of a tool result at
/// the start of its window before giving up on it (messages).
const MAX_TOOL_CALL_LOOKBACK: i64 = 1000;

impl Db {
    /// The thread's row, whoever owns it.
    pub(crate) async fn find_thread(&self, thread: &str) -> Result<Option<ThreadInfo>> {
        let sql = "SELECT id, resource_id, title, metadata, last_seq, created_at, updated_at FROM nodekit_am_threads WHERE id = $1";
        on_reader!(self, pool => {
            match sqlx::query(sql).bind(thread).fetch_optional(pool).await.map_err(db_err)? {
                Some(row) => Ok(Some(thread_from_row(&row)?)),
                None => Ok(None),
            }
        })
    }

    /// The thread, if it exists and belongs to `resource`. A read: it
    /// creates nothing (a thread is created by its first write), and a
    /// thread of another resource is `None`, as an unknown one is.
    pub(crate) async fn thread(&self, resource: &str, thread: &str) -> Result<Option<ThreadInfo>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        Ok(self
            .find_thread(thread)
            .await?
            .filter(|t| t.resource_id == resource))
    }

    /// The messages with `from_seq <= seq <= to_seq`, as stored.
    pub(crate) async fn raw_messages(
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
        #[cfg(feature = "sqlite")]
        const SQLITE: &str =
            "SELECT m.id, m.thread_id, m.seq, m.content, m.token_count, m.created_at
             FROM json_each($3) AS r CROSS JOIN nodekit_am_messages AS m
               ON m.thread_id = $1 AND m.seq BETWEEN r.value ->> 0 AND r.value ->> 1
             WHERE m.resource_id = $2 ORDER BY m.seq";
        #[cfg(feature = "postgres")]
        const POSTGRES: &str = "SELECT id, thread_id, seq, content, token_count, created_at
             FROM nodekit_am_messages
             WHERE thread_id = $1 AND resource_id = $2 AND seq = ANY($3) ORDER BY seq";
        let raw: Vec<RawMessage> = match self.pools() {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { read, .. } => {
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
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => {
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
    pub(crate) async fn messages_before(
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
    pub(crate) async fn messages_range(
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

    /// The last `n` messages of the thread, oldest first, grown back to
    /// the tool call of a result at its start (the rule `Store::recent`
    /// documents).
    pub(crate) async fn recent(
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
}

/// Tool results in `window` (oldest first) whose tool call is not in it.
/// `any` is set for leading results without a call id (legacy function
/// results), which belong to the nearest AI message before them.
fn unmatched_results(window: &[StoredMessage]) -> (HashSet<String>, bool) {
    let mut calls = HashSet::new();
    let mut missing = HashSet::new();
    let mut any = false;
    let mut seen_ai = false;
    for m in window {
        match m.message.role {
            Role::Ai => {
                seen_ai = true;
                calls.extend(m.message.tool_calls.iter().map(|c| c.id.clone()));
            }
            Role::Tool | Role::Function => match &m.message.tool_call_id {
                Some(id) if !calls.contains(id) => {
                    missing.insert(id.clone());
                }
                Some(_) => {}
                None if !seen_ai => any = true,
                None => {}
            },
            _ => {}
        }
    }
    (missing, any)
}
