//! Threads: ownership, listing, metadata and deletion.

use super::*;

impl Store {
    /// Errors if `thread` exists and belongs to another resource: for a
    /// write that has nothing to write.
    pub(super) async fn check_not_foreign(&self, resource: &str, thread: &str) -> Result<()> {
        match self.db.find_thread(thread).await? {
            Some(t) if t.resource_id != resource => Err(ownership(resource, thread)),
            _ => Ok(()),
        }
    }

    /// The thread, if it exists and belongs to `resource`. A read: it
    /// creates nothing (a thread is created by its first write), and a
    /// thread of another resource is `None`, as an unknown one is.
    pub async fn thread(&self, resource: &str, thread: &str) -> Result<Option<ThreadInfo>> {
        self.db.thread(resource, thread).await
    }

    /// The resource's threads, most recently written first.
    pub async fn threads(&self, resource: &str) -> Result<Vec<ThreadInfo>> {
        check_id("resource", resource)?;
        on_reader!(self.db, pool => {
            let rows = sqlx::query("SELECT id, resource_id, title, metadata, last_seq, created_at, updated_at FROM nodekit_am_threads WHERE resource_id = $1 ORDER BY updated_at DESC, id")
                .bind(resource)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(thread_from_row).collect()
        })
    }

    /// Sets the thread's title and metadata (creating the thread on first use).
    pub async fn set_thread_info(
        &self,
        resource: &str,
        thread: &str,
        title: Option<&str>,
        metadata: Value,
    ) -> Result<ThreadInfo> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            let row = sqlx::query("UPDATE nodekit_am_threads SET title = $3, metadata = $4 WHERE id = $1 AND resource_id = $2 RETURNING id, resource_id, title, metadata, last_seq, created_at, updated_at")
                .bind(thread)
                .bind(resource)
                .bind(title)
                .bind(Json(&metadata))
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
            let info = thread_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(info)
        })
    }

    /// Deletes the thread with its messages, observations, plan, events and
    /// embeddings, in one transaction. `Ok(false)` if there was no such
    /// thread; an error if it belongs to another resource.
    pub async fn delete_thread(&self, resource: &str, thread: &str) -> Result<bool> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        in_write_tx!(self.db, tx => {
            // FOR UPDATE on PostgreSQL: an indexer writing vectors holds the
            // row FOR SHARE, so none lands after this delete.
            let lock = match self.backend() {
                Backend::Postgres => " FOR UPDATE",
                Backend::Sqlite => "",
            };
            let owner: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT resource_id FROM nodekit_am_threads WHERE id = $1{lock}")))
                .bind(thread)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match owner {
                None => return Ok(false),
                Some(o) if o != resource => return Err(ownership(resource, thread)),
                Some(_) => {}
            }
            // The vector index's rows first: they are found through the
            // embeddings. sqlite-vec deletes by rowid only.
            let kind: Option<String> = sqlx::query_scalar("SELECT index_kind FROM nodekit_am_recall_meta WHERE id = 1")
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            match kind.as_deref() {
                Some("sqlite-vec") => {
                    let ids: Vec<i64> = sqlx::query_scalar("SELECT message_id FROM nodekit_am_embeddings WHERE thread_id = $1 AND resource_id = $2 AND dims > 0")
                        .bind(thread)
                        .bind(resource)
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(db_err)?;
                    for chunk in ids.chunks(1000) {
                        let chunk = serde_json::to_string(chunk).expect("ids serialise");
                        sqlx::query("DELETE FROM nodekit_am_vec WHERE rowid IN (SELECT value FROM json_each($1))")
                            .bind(chunk)
                            .execute(&mut *tx)
                            .await
                            .map_err(db_err)?;
                    }
                }
                Some("pgvector") => {
                    sqlx::query("DELETE FROM nodekit_am_vectors WHERE thread_id = $1 AND resource_id = $2")
                        .bind(thread)
                        .bind(resource)
                        .execute(&mut *tx)
                        .await
                        .map_err(db_err)?;
                }
                _ => {}
            }
            for sql in [
                "DELETE FROM nodekit_am_messages WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_observations WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_plans WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_events WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_embeddings WHERE thread_id = $1 AND resource_id = $2",
                "DELETE FROM nodekit_am_threads WHERE id = $1 AND resource_id = $2",
            ] {
                sqlx::query(sql).bind(thread).bind(resource).execute(&mut *tx).await.map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)?;
            self.db.thread_deleted(thread);
            Ok(true)
        })
    }
}
