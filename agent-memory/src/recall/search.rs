//! Searching a thread: the nearest messages to a query vector, with the
//! messages around them and tool calls kept with their results.

use super::resident::Early;
use super::*;

impl Recall {
    /// Embeds `query` and recalls with its vector ([`Recall::search`]).
    pub async fn search_text(
        &self,
        resource: &str,
        thread: &str,
        query: &str,
        embedder: &dyn Embedder,
        top_k: usize,
        exclude_seqs: &[i64],
    ) -> Result<Vec<StoredMessage>> {
        if top_k == 0 || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let v = embedder.embed(&[query.to_owned()]).await?;
        let v = v
            .into_iter()
            .next()
            .ok_or_else(|| err("the embedder returned no vector"))?;
        self.search(resource, thread, &v, top_k, exclude_seqs).await
    }

    /// What Mastra's `recall` with a search string returns: the thread's
    /// `last_messages` newest messages, and the `top_k` messages nearest to
    /// `query` outside them, each with its neighbours ([`Recall::search`]).
    /// The window's read runs beside the thread's check, the query's
    /// embedding, the search and the read of the messages around the
    /// matches.
    pub async fn recent_and_recalled(
        &self,
        resource: &str,
        thread: &str,
        query: &str,
        embedder: &dyn Embedder,
        last_messages: usize,
        top_k: usize,
    ) -> Result<(Vec<StoredMessage>, Vec<StoredMessage>)> {
        let k = top_k + last_messages;
        let search = async {
            let embedding = async {
                if top_k == 0 || query.trim().is_empty() {
                    return Ok(None);
                }
                let v = embedder.embed(&[query.to_owned()]).await?;
                let v = v
                    .into_iter()
                    .next()
                    .ok_or_else(|| err("the embedder returned no vector"))?;
                Ok(Some(v))
            };
            let (info, v) = self
                .checked_and_searched(resource, thread, k, embedding)
                .await?;
            let candidates = match (&info, v) {
                (Some(info), Some((v, early))) => {
                    self.recall_candidates(resource, info, &v, k, early).await?
                }
                _ => Vec::new(),
            };
            Ok::<_, Error>((info, candidates))
        };
        let recall = async {
            let (Some(info), candidates) = search.await? else {
                return Ok(Vec::new());
            };
            // The window is the thread's newest seqs, so the messages around
            // the matches are read without waiting for it.
            let first = (info.last_seq - last_messages as i64 + 1).max(1);
            let newest: HashSet<i64> = (first..=info.last_seq).collect();
            self.recall_around(resource, &info, candidates, top_k, &newest)
                .await
        };
        // The window's read is sent before the search runs.
        let (recent, mut recalled) =
            tokio::try_join!(self.db.recent(resource, thread, last_messages), recall)?;
        // A window grown back to a tool call, or messages written since the
        // check: no message twice.
        let in_window: HashSet<i64> = recent.iter().map(|m| m.seq).collect();
        recalled.retain(|m| !in_window.contains(&m.seq));
        Ok((recent, recalled))
    }

    /// The `top_k` messages of the thread nearest to `query`, each with
    /// [`CONTEXT_BEFORE`] messages before and [`CONTEXT_AFTER`] after,
    /// without the messages of `exclude_seqs` (the recent window) and
    /// without duplicates, in seq order.
    pub async fn search(
        &self,
        resource: &str,
        thread: &str,
        query: &[f32],
        top_k: usize,
        exclude_seqs: &[i64],
    ) -> Result<Vec<StoredMessage>> {
        let Some(info) = self.db.thread(resource, thread).await? else {
            return Ok(Vec::new());
        };
        self.recall_in(resource, &info, query, top_k, exclude_seqs)
            .await
    }

    /// [`Recall::search`] in a thread already looked up for `resource`.
    pub(crate) async fn recall_in(
        &self,
        resource: &str,
        info: &ThreadInfo,
        query: &[f32],
        top_k: usize,
        exclude_seqs: &[i64],
    ) -> Result<Vec<StoredMessage>> {
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let exclude: HashSet<i64> = exclude_seqs.iter().copied().collect();
        let candidates = self
            .recall_candidates(resource, info, query, top_k + exclude.len(), None)
            .await?;
        self.recall_around(resource, info, candidates, top_k, &exclude)
            .await
    }

    /// The thread (`None`: unknown, or another resource's) and, beside its
    /// read, the query's vector from `embedding` (`None`: no recall) and,
    /// when this process holds the thread, a search of it for `k`
    /// candidates, to be used only once the thread turned out to be the
    /// caller's ([`Recall::recall_candidates`]).
    pub(crate) async fn checked_and_searched(
        &self,
        resource: &str,
        thread: &str,
        k: usize,
        embedding: impl std::future::Future<Output = Result<Option<Vec<f32>>>>,
    ) -> Result<(Option<ThreadInfo>, Option<(Vec<f32>, Option<Early>)>)> {
        let search = async {
            Ok(match embedding.await? {
                Some(v) => {
                    let early = self.search_held(thread, &v, k);
                    Some((v, early))
                }
                None => None,
            })
        };
        // The check is polled first: its query is on its way before the
        // search takes the thread.
        tokio::try_join!(self.db.thread(resource, thread), search)
    }

    /// The seqs of the thread's `k` messages nearest to `query`, nearest
    /// first (the first step of [`Recall::search`]); `early` is the same
    /// search made before the thread was checked ([`Recall::search_held`]).
    pub(crate) async fn recall_candidates(
        &self,
        resource: &str,
        info: &ThreadInfo,
        query: &[f32],
        k: usize,
        early: Option<Early>,
    ) -> Result<Vec<i64>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let Some(index) = self.recall_index().await? else {
            return Ok(Vec::new());
        };
        check_dims(index, query.len())?;
        let k = k.min(MAX_K);
        if let Some(seqs) = early.and_then(|e| self.early_answer(resource, info, index, e)) {
            return Ok(seqs);
        }
        self.nearest(resource, info, index, query, k).await
    }

    /// The first `top_k` of `candidates` not in `exclude`, each with its
    /// neighbours (the second step of [`Recall::search`]).
    pub(crate) async fn recall_around(
        &self,
        resource: &str,
        info: &ThreadInfo,
        candidates: Vec<i64>,
        top_k: usize,
        exclude: &HashSet<i64>,
    ) -> Result<Vec<StoredMessage>> {
        let thread = info.id.as_str();
        let mut matches: Vec<i64> = candidates
            .into_iter()
            .filter(|seq| !exclude.contains(seq))
            .take(top_k)
            .collect();
        if matches.is_empty() {
            return Ok(Vec::new());
        }
        // The [seq - 2, seq + 1] ranges, merged, in one query; read again
        // with a margin when a range may cut a tool call from its results.
        let around = |matches: &[i64]| {
            merge_ranges(
                matches
                    .iter()
                    .map(|&s| ((s - CONTEXT_BEFORE).max(1), s + CONTEXT_AFTER))
                    .collect(),
            )
        };
        let mut merged = around(&matches);
        let mut read = self
            .db
            .messages_in_ranges(resource, thread, &merged)
            .await?;
        // The messages are read with the thread's and resource's filter: a
        // match without its message (a stale vector) is dropped.
        let present: HashSet<i64> = read.iter().map(|m| m.seq).collect();
        if matches.iter().any(|s| !present.contains(s)) {
            matches.retain(|s| present.contains(s));
            merged = around(&matches);
        }
        let widen = |(a, b): (i64, i64)| ((a - TOOL_MARGIN).max(1), b + TOOL_MARGIN);
        let open = merged.iter().any(|&(a, b)| {
            let first = read.iter().find(|m| m.seq >= a);
            let last = read.iter().rev().find(|m| m.seq <= b);
            first.is_some_and(is_tool_result)
                || last.is_some_and(|m| is_tool_result(m) || !m.message.tool_calls.is_empty())
        });
        if open {
            let wide = merge_ranges(merged.iter().copied().map(widen).collect());
            read = self.db.messages_in_ranges(resource, thread, &wide).await?;
        }
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for (a, b) in merged {
            let (from, to) = if open { widen((a, b)) } else { (a, b) };
            let around = read
                .iter()
                .filter(|m| (from..=to).contains(&m.seq))
                .cloned()
                .collect();
            for m in with_tool_pairs(around, a, b) {
                if !exclude.contains(&m.seq) && seen.insert(m.seq) {
                    out.push(m);
                }
            }
        }
        out.sort_by_key(|m| m.seq);
        Ok(out)
    }

    /// The seqs of the nearest messages, nearest first.
    async fn nearest(
        &self,
        resource: &str,
        info: &ThreadInfo,
        index: RecallIndex,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<i64>> {
        if let Some(seqs) = self.resident_nearest(resource, info, index, query, k)? {
            return Ok(seqs);
        }
        let thread = info.id.as_str();
        let k = k as i64;
        match (self.db.pools(), index.kind) {
            // A thread still loading: its newest vectors only.
            #[cfg(feature = "sqlite")]
            (Pools::Sqlite { read, .. }, IndexKind::SqliteVec) => sqlx::query_scalar(
                "SELECT seq FROM nodekit_am_vec
                 WHERE embedding MATCH $1 AND k = $2 AND thread_id = $3 AND resource_id = $4
                   AND seq > $5
                 ORDER BY distance",
            )
            .bind(vector_bytes(query))
            .bind(k)
            .bind(thread)
            .bind(resource)
            .bind(info.last_seq - self.exact_limit())
            .fetch_all(read)
            .await
            .map_err(db),
            #[cfg(feature = "postgres")]
            (Pools::Postgres(pool), IndexKind::PgVector) => {
                self.pgvector_nearest(pool, resource, info, query, k).await
            }
            #[cfg(feature = "postgres")]
            (Pools::Postgres(pool), IndexKind::BruteForce) => {
                let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                    "SELECT m.seq, e.vector FROM nodekit_am_embeddings e
                     JOIN nodekit_am_messages m ON m.id = e.message_id
                     WHERE e.thread_id = $1 AND e.resource_id = $2 AND e.dims > 0
                     ORDER BY e.message_id DESC LIMIT $3",
                )
                .bind(thread)
                .bind(resource)
                .bind(self.exact_limit())
                .fetch_all(pool)
                .await
                .map_err(db)?;
                let mut scored: Vec<(f32, i64)> = rows
                    .iter()
                    .map(|(seq, b)| (cosine_distance(query, &bytes_vector(b)), *seq))
                    .collect();
                scored.sort_by(|a, b| a.0.total_cmp(&b.0));
                Ok(scored
                    .into_iter()
                    .take(k as usize)
                    .map(|(_, seq)| seq)
                    .collect())
            }
            (_, kind) => Err(err(format!(
                "the store's index kind {kind:?} does not match its database"
            ))),
        }
    }

    #[cfg(feature = "postgres")]
    /// [`Recall::nearest`] through pgvector. A thread of at most
    /// [`EXACT_LIMIT`] messages is scanned exactly: its rows are read through
    /// the B-tree on `thread_id` first (a materialised CTE), so the HNSW
    /// index, which filters only after its search, cannot come back with
    /// fewer than `k` of them. A longer thread goes through the HNSW index,
    /// with `hnsw.iterative_scan` on pgvector ≥ 0.8 and a wider
    /// `hnsw.ef_search` before; if it still comes back short, the newest
    /// [`EXACT_LIMIT`] vectors and what it found are scanned exactly.
    async fn pgvector_nearest(
        &self,
        pool: &sqlx::PgPool,
        resource: &str,
        info: &ThreadInfo,
        query: &[f32],
        k: i64,
    ) -> Result<Vec<i64>> {
        // The rows after seq $5, and those of $6 (what the HNSW index found).
        const EXACT: &str = "WITH t AS MATERIALIZED (
                 SELECT seq, embedding FROM nodekit_am_vectors
                 WHERE thread_id = $1 AND resource_id = $2 AND (seq > $5 OR seq = ANY($6)))
             SELECT seq FROM t ORDER BY embedding <=> $3::vector LIMIT $4";
        let exact = |after: i64, found: Vec<i64>| {
            sqlx::query_scalar::<_, i64>(EXACT)
                .bind(info.id.as_str())
                .bind(resource)
                .bind(pg_vector(query))
                .bind(k)
                .bind(after)
                .bind(found)
                .fetch_all(pool)
        };
        let newest = info.last_seq - self.exact_limit();
        if newest <= 0 {
            return exact(0, Vec::new()).await.map_err(db);
        }
        let mut tx = pool.begin().await.map_err(db)?;
        // `SET LOCAL` of a setting pgvector does not have fails and aborts
        // the transaction: each is tried in a savepoint.
        for setting in [
            "SET LOCAL hnsw.iterative_scan = relaxed_order".to_owned(),
            format!("SET LOCAL hnsw.ef_search = {}", (4 * k).clamp(40, 1000)),
        ] {
            let mut sp = sqlx::Acquire::begin(&mut *tx).await.map_err(db)?;
            match sqlx::raw_sql(sqlx::AssertSqlSafe(setting))
                .execute(&mut *sp)
                .await
            {
                Ok(_) => sp.commit().await.map_err(db)?,
                Err(_) => sp.rollback().await.map_err(db)?,
            }
        }
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT seq FROM nodekit_am_vectors
             WHERE thread_id = $1 AND resource_id = $2
             ORDER BY embedding <=> $3::vector LIMIT $4",
        )
        .bind(info.id.as_str())
        .bind(resource)
        .bind(pg_vector(query))
        .bind(k)
        .fetch_all(&mut *tx)
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)?;
        if ids.len() as i64 >= k {
            return Ok(ids);
        }
        exact(newest, ids).await.map_err(db)
    }
}

/// Sorted, with overlapping or adjacent ranges joined.
fn merge_ranges(mut ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ranges.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// How far a recalled range may grow to keep tool calls with their results.
const TOOL_MARGIN: i64 = 8;

fn is_tool_result(m: &StoredMessage) -> bool {
    matches!(m.message.role, Role::Tool | Role::Function)
}

/// The messages `a..=b` of `around` (a contiguous stretch of the thread
/// reaching up to [`TOOL_MARGIN`] further on both sides), grown so that a
/// tool call keeps its results: back while the range starts with a result,
/// forward while results follow its end. Then only whole groups stay: an
/// AI message with tool calls only with every one of its results, a result
/// only with its call (a group wider than the margin is left out).
fn with_tool_pairs(around: Vec<StoredMessage>, a: i64, b: i64) -> Vec<StoredMessage> {
    let Some(mut start) = around.iter().position(|m| m.seq >= a) else {
        return Vec::new();
    };
    let mut end = around.iter().rposition(|m| m.seq <= b).unwrap_or(start);
    while start > 0 && is_tool_result(&around[start]) {
        start -= 1;
    }
    while end + 1 < around.len() && is_tool_result(&around[end + 1]) {
        end += 1;
    }
    let range: Vec<StoredMessage> = around.into_iter().take(end + 1).skip(start).collect();
    let answered: HashSet<String> = range
        .iter()
        .filter(|m| is_tool_result(m))
        .filter_map(|m| m.message.tool_call_id.clone())
        .collect();
    let mut kept_calls: HashSet<String> = HashSet::new();
    // Results without an id (older stored forms) belong to the call before them.
    let mut after_kept_call = false;
    range
        .into_iter()
        .filter(|m| {
            if is_tool_result(m) {
                return match &m.message.tool_call_id {
                    Some(id) => kept_calls.contains(id),
                    None => after_kept_call,
                };
            }
            let calls = &m.message.tool_calls;
            let keep = calls.iter().all(|c| answered.contains(&c.id));
            after_kept_call = keep && !calls.is_empty();
            if keep {
                kept_calls.extend(calls.iter().map(|c| c.id.clone()));
            }
            keep
        })
        .collect()
}

/// How long [`assemble_with`](crate::context::assemble_with) waits for the
/// query's embedding and the search before leaving recall out.
pub const DEFAULT_RECALL_TIMEOUT: Duration = Duration::from_secs(2);

/// The input's vector for recall: `None` (with a warning) when the embedder
/// fails or `deadline` passes first.
pub(crate) async fn embed_query(
    embedder: &dyn Embedder,
    input: &str,
    deadline: tokio::time::Instant,
) -> Option<Vec<f32>> {
    if input.trim().is_empty() {
        return None;
    }
    let texts = [input.to_owned()];
    by_deadline(deadline, embedder.embed(&texts))
        .await?
        .into_iter()
        .next()
}

/// `fut`'s value, or `None` (with a warning) when it fails or `deadline`
/// passes first: recall never fails or holds up a request.
pub(crate) async fn by_deadline<T>(
    deadline: tokio::time::Instant,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Option<T> {
    match tokio::time::timeout_at(deadline, fut).await {
        Ok(Ok(v)) => Some(v),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "semantic recall left out of the context");
            None
        }
        Err(_) => {
            tracing::warn!("semantic recall timed out; left out of the context");
            None
        }
    }
}
