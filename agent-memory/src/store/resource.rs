//! Working memory, plans and events.

use super::*;

impl Store {
    /// The resource's working memory, if it was ever set.
    pub async fn working_memory(&self, resource: &str) -> Result<Option<WorkingMemory>> {
        check_id("resource", resource)?;
        on_reader!(self.db, pool => {
            let row = sqlx::query("SELECT content, version, updated_at FROM nodekit_am_working_memory WHERE resource_id = $1")
                .bind(resource)
                .fetch_optional(pool)
                .await
                .map_err(db_err)?;
            row.as_ref().map(wm_from_row).transpose()
        })
    }

    /// Replaces the resource's working memory with `content`; the version
    /// grows by one. With `expected_version` the update happens only if the
    /// stored version is that one (0: none stored yet), else
    /// [`AgentMemoryError::WorkingMemoryConflict`]. Without it, concurrent updates are
    /// applied one after the other (the row lock on PostgreSQL, the write
    /// lock on SQLite), each getting its own version: none is lost.
    pub async fn set_working_memory(
        &self,
        resource: &str,
        content: &str,
        expected_version: Option<i64>,
    ) -> Result<WorkingMemory> {
        check_id("resource", resource)?;
        let now = now_ms();
        let sql = match expected_version {
            None => {
                "INSERT INTO nodekit_am_working_memory (resource_id, content, version, updated_at)
                 VALUES ($1, $2, 1, $3)
                 ON CONFLICT (resource_id) DO UPDATE SET content = excluded.content,
                     version = nodekit_am_working_memory.version + 1, updated_at = excluded.updated_at
                 RETURNING content, version, updated_at"
            }
            Some(0) => {
                "INSERT INTO nodekit_am_working_memory (resource_id, content, version, updated_at)
                 VALUES ($1, $2, 1, $3) ON CONFLICT (resource_id) DO NOTHING
                 RETURNING content, version, updated_at"
            }
            Some(_) => {
                "UPDATE nodekit_am_working_memory SET content = $2, version = version + 1, updated_at = $3
                 WHERE resource_id = $1 AND version = $4 RETURNING content, version, updated_at"
            }
        };
        in_write_tx!(self.db, tx => {
            let mut q = sqlx::query(sql).bind(resource).bind(content).bind(now);
            if let Some(v) = expected_version.filter(|v| *v != 0) {
                q = q.bind(v);
            }
            let row = q.fetch_optional(&mut *tx).await.map_err(db_err)?;
            let Some(row) = row else {
                let actual: Option<i64> = sqlx::query_scalar("SELECT version FROM nodekit_am_working_memory WHERE resource_id = $1")
                    .bind(resource)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?;
                return Err(AgentMemoryError::WorkingMemoryConflict {
                    resource: shorten(resource, 80),
                    expected: expected_version.unwrap_or(0),
                    actual: actual.unwrap_or(0),
                }
                .into());
            };
            let wm = wm_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(wm)
        })
    }

    // --------------------------------------------------------------- plans

    /// The thread's plan, if one was set.
    pub async fn plan(&self, resource: &str, thread: &str) -> Result<Option<Value>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let plan: Option<Json<Value>> = on_reader!(self.db, pool => {
            sqlx::query_scalar("SELECT plan FROM nodekit_am_plans WHERE thread_id = $1 AND resource_id = $2")
                .bind(thread)
                .bind(resource)
                .fetch_optional(pool)
                .await
                .map_err(db_err)?
        });
        Ok(plan.map(|p| p.0))
    }

    /// Replaces the thread's plan (creating the thread on first use).
    pub async fn set_plan(&self, resource: &str, thread: &str, plan: Value) -> Result<()> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            sqlx::query(
                "INSERT INTO nodekit_am_plans (thread_id, resource_id, plan, updated_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (thread_id) DO UPDATE SET plan = excluded.plan, updated_at = excluded.updated_at",
            )
            .bind(thread)
            .bind(resource)
            .bind(Json(&plan))
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)?;
            Ok(())
        })
    }

    // -------------------------------------------------------------- events

    /// Appends an event to the thread's history (creating the thread on first use).
    pub async fn record_event(
        &self,
        resource: &str,
        thread: &str,
        kind: &str,
        payload: Value,
    ) -> Result<()> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            claim_thread!(tx, resource, thread, now, 0i64);
            sqlx::query("INSERT INTO nodekit_am_events (thread_id, resource_id, kind, payload, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(thread)
                .bind(resource)
                .bind(kind)
                .bind(Json(&payload))
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            tx.commit().await.map_err(db_err)?;
            Ok(())
        })
    }

    /// The thread's events, oldest first.
    pub async fn events(&self, resource: &str, thread: &str) -> Result<Vec<Event>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let events: Vec<Event> = on_reader!(self.db, pool => {
            let rows = sqlx::query("SELECT id, kind, payload, created_at FROM nodekit_am_events WHERE thread_id = $1 AND resource_id = $2 ORDER BY id")
                .bind(thread)
                .bind(resource)
                .fetch_all(pool)
                .await
                .map_err(db_err)?;
            rows.iter().map(event_from_row).collect::<Result<_>>()?
        });
        Ok(events)
    }
}
