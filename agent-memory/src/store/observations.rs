//! Observations and reflections: active and buffered, generations, activation.

use super::*;

/// Checks that an observation of `first_seq..=last_seq` covers messages of
/// the thread, whose last seq is `thread_last` (`None`: no such thread, as
/// when it was deleted while the observation was being computed).
fn check_covers(
    thread: &str,
    thread_last: Option<i64>,
    first_seq: i64,
    last_seq: i64,
) -> Result<()> {
    let Some(thread_last) = thread_last else {
        return Err(no_thread(thread));
    };
    if 1 <= first_seq && first_seq <= last_seq && last_seq <= thread_last {
        return Ok(());
    }
    Err(AgentMemoryError::Observation {
        reason: format!(
            "an observation of messages {first_seq} to {last_seq} does not fit thread `{}`, whose messages are 1 to {thread_last}",
            shorten(thread, 80)
        ),
    }
    .into())
}

impl Store {
    /// Stores an observation covering messages `first_seq..=last_seq` in
    /// `generation`, or in the newest active generation when a reflection
    /// made a newer one meanwhile (so the block shows it); its tokens are
    /// counted here. For the observational tier. An error, storing nothing,
    /// when the thread does not exist (an observation never creates one) or
    /// the range is not within its messages; the same holds for the other
    /// observation and reflection writes.
    pub async fn add_observation(
        &self,
        resource: &str,
        thread: &str,
        generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            generation,
            content,
            first_seq,
            last_seq,
            RowState::Active,
        )
        .await
    }

    /// Stores a *buffered* observation: computed ahead, not part of the
    /// observation block until [`Store::activate_buffered`].
    pub async fn add_buffered_observation(
        &self,
        resource: &str,
        thread: &str,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            0,
            content,
            first_seq,
            last_seq,
            RowState::Buffered,
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn insert_observation(
        &self,
        resource: &str,
        thread: &str,
        generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
        state: RowState,
    ) -> Result<Observation> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let tokens = i64::try_from(self.tokenizer.count(content)).unwrap_or(i64::MAX);
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            let thread_last = existing_thread!(tx, resource, thread, now);
            check_covers(thread, thread_last, first_seq, last_seq)?;
            if state == RowState::BufferedReflection {
                // One waiting reflection per thread: the newest.
                drop_waiting_reflection!(tx, resource, thread);
            }
            let generation = match state {
                RowState::Active => generation.max(newest_generation!(tx, resource, thread)),
                _ => generation,
            };
            let row = sqlx::query(
                "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 RETURNING id, generation, content, token_count, first_seq, last_seq, created_at, buffered",
            )
            .bind(thread)
            .bind(resource)
            .bind(generation)
            .bind(content)
            .bind(tokens)
            .bind(first_seq)
            .bind(last_seq)
            .bind(now)
            .bind(state as i64)
            .fetch_one(&mut *tx)
            .await
            .map_err(db_err)?;
            let obs = observation_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(obs)
        })
    }

    /// Where the thread's observations stand: the last message seq covered
    /// by an active observation (0: none), the last covered by any
    /// observation, buffered ones included, the newest active generation and
    /// whether a buffered reflection of it waits.
    pub async fn observation_marks(
        &self,
        resource: &str,
        thread: &str,
    ) -> Result<ObservationMarks> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let (observed_through, covered_through, generation, reflected): (i64, i64, i64, i64) = on_reader!(self.db, pool => {
            sqlx::query_as(
                "SELECT CAST(COALESCE(MAX(CASE WHEN buffered = 0 THEN last_seq END), 0) AS BIGINT),
                        CAST(COALESCE(MAX(last_seq), 0) AS BIGINT),
                        CAST(COALESCE(MAX(CASE WHEN buffered = 0 THEN generation END), 0) AS BIGINT),
                        CAST(COALESCE(MAX(CASE WHEN buffered = 2 THEN generation END), 0) AS BIGINT)
                 FROM nodekit_am_observations WHERE thread_id = $1 AND resource_id = $2",
            )
            .bind(thread)
            .bind(resource)
            .fetch_one(pool)
            .await
            .map_err(db_err)?
        });
        Ok(ObservationMarks {
            observed_through,
            covered_through,
            generation,
            reflection_buffered: reflected == generation + 1,
        })
    }

    /// The active observations of the newest generation, in the order they
    /// cover the thread: what the observation block shows.
    pub async fn current_observations(
        &self,
        resource: &str,
        thread: &str,
    ) -> Result<Vec<Observation>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let list: Vec<Observation> = on_reader!(self.db, pool => {
            let rows = sqlx::query(
                "SELECT id, generation, content, token_count, first_seq, last_seq, created_at, buffered FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0
                   AND generation = (SELECT COALESCE(MAX(generation), 0) FROM nodekit_am_observations
                                     WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)
                 ORDER BY first_seq, id",
            )
            .bind(thread)
            .bind(resource)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            rows.iter().map(observation_from_row).collect::<Result<_>>()?
        });
        Ok(list)
    }

    /// Activates the thread's buffered observations in one transaction: they
    /// join the newest active generation, appended after its observations.
    /// Buffered rows overlapping messages already observed are dropped.
    /// Returns how many were activated (0 when there is no such thread).
    pub async fn activate_buffered(&self, resource: &str, thread: &str) -> Result<u64> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            if existing_thread!(tx, resource, thread, now).is_none() {
                return Ok(0);
            }
            sqlx::query(
                "DELETE FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 1
                   AND first_seq <= (SELECT COALESCE(MAX(last_seq), 0) FROM nodekit_am_observations
                                     WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)",
            )
            .bind(thread)
            .bind(resource)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            let done = sqlx::query(
                "UPDATE nodekit_am_observations
                 SET buffered = 0,
                     generation = (SELECT COALESCE(MAX(generation), 0) FROM nodekit_am_observations
                                   WHERE thread_id = $1 AND resource_id = $2 AND buffered = 0)
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 1",
            )
            .bind(thread)
            .bind(resource)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?
            .rows_affected();
            tx.commit().await.map_err(db_err)?;
            Ok(done)
        })
    }

    /// Stores a reflection: generation `from_generation + 1`, covering
    /// `first_seq..=last_seq`; an error, storing nothing, when
    /// `from_generation` is no longer the newest. Active observations of `from_generation`
    /// made after the reflector read them (covering messages after
    /// `last_seq`) move to the new generation, after the reflection, so none
    /// leaves the block.
    pub async fn add_reflection(
        &self,
        resource: &str,
        thread: &str,
        from_generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let tokens = i64::try_from(self.tokenizer.count(content)).unwrap_or(i64::MAX);
        let now = now_ms();
        let generation = from_generation + 1;
        in_write_tx!(self.db, tx => {
            let thread_last = existing_thread!(tx, resource, thread, now);
            check_covers(thread, thread_last, first_seq, last_seq)?;
            if newest_generation!(tx, resource, thread) != from_generation {
                return Err(AgentMemoryError::Observation {
                    reason: format!("generation {from_generation} is no longer the newest (another run reflected meanwhile): this reflection was dropped"),
                }
                .into());
            }
            // A reflection computed ahead is superseded by this one.
            drop_waiting_reflection!(tx, resource, thread);
            move_after_reflection!(tx, resource, thread, from_generation, generation, last_seq);
            let row = sqlx::query(
                "INSERT INTO nodekit_am_observations (thread_id, resource_id, generation, content, token_count, first_seq, last_seq, created_at, buffered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)
                 RETURNING id, generation, content, token_count, first_seq, last_seq, created_at, buffered",
            )
            .bind(thread)
            .bind(resource)
            .bind(generation)
            .bind(content)
            .bind(tokens)
            .bind(first_seq)
            .bind(last_seq)
            .bind(now)
            .fetch_one(&mut *tx)
            .await
            .map_err(db_err)?;
            let obs = observation_from_row(&row)?;
            tx.commit().await.map_err(db_err)?;
            Ok(obs)
        })
    }

    /// Stores a *buffered* reflection of generation `from_generation`,
    /// covering `first_seq..=last_seq`: computed ahead in the background,
    /// not part of the block until [`Store::activate_reflection`]. It
    /// replaces the thread's earlier buffered reflection, if any.
    pub async fn add_buffered_reflection(
        &self,
        resource: &str,
        thread: &str,
        from_generation: i64,
        content: &str,
        first_seq: i64,
        last_seq: i64,
    ) -> Result<Observation> {
        self.insert_observation(
            resource,
            thread,
            from_generation + 1,
            content,
            first_seq,
            last_seq,
            RowState::BufferedReflection,
        )
        .await
    }

    /// Activates the thread's buffered reflection in one transaction, no
    /// model call: when it condenses the newest active generation, it
    /// becomes that generation + 1, and the active observations made since
    /// it was computed (covering messages after its `last_seq`) move after
    /// it, as in [`Store::add_reflection`]. A buffered reflection of an
    /// older generation is dropped. Returns whether one was activated.
    pub async fn activate_reflection(&self, resource: &str, thread: &str) -> Result<bool> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let now = now_ms();
        in_write_tx!(self.db, tx => {
            if existing_thread!(tx, resource, thread, now).is_none() {
                return Ok(false);
            }
            let current = newest_generation!(tx, resource, thread);
            let waiting: Option<(i64, i64, i64)> = sqlx::query_as(
                "SELECT id, generation, last_seq FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered = 2 ORDER BY id DESC LIMIT 1",
            )
            .bind(thread)
            .bind(resource)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_err)?;
            let activated = match waiting {
                Some((id, generation, last_seq)) if generation == current + 1 => {
                    move_after_reflection!(tx, resource, thread, current, generation, last_seq);
                    sqlx::query("UPDATE nodekit_am_observations SET buffered = 0 WHERE id = $1")
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(db_err)?;
                    true
                }
                Some(_) => {
                    drop_waiting_reflection!(tx, resource, thread);
                    false
                }
                None => false,
            };
            tx.commit().await.map_err(db_err)?;
            Ok(activated)
        })
    }

    /// The thread's observations, by generation, then by the messages they
    /// cover. A buffered reflection is not among them (nor exported): it is
    /// a model answer kept ahead, computed again when missing.
    pub async fn observations(&self, resource: &str, thread: &str) -> Result<Vec<Observation>> {
        check_id("resource", resource)?;
        check_id("thread", thread)?;
        let list: Vec<Observation> = on_reader!(self.db, pool => {
            let rows = sqlx::query(
                "SELECT id, generation, content, token_count, first_seq, last_seq, created_at, buffered FROM nodekit_am_observations
                 WHERE thread_id = $1 AND resource_id = $2 AND buffered < 2 ORDER BY generation, first_seq, id",
            )
            .bind(thread)
            .bind(resource)
            .fetch_all(pool)
            .await
            .map_err(db_err)?;
            rows.iter().map(observation_from_row).collect::<Result<_>>()?
        });
        Ok(list)
    }
}
