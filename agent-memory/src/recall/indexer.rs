//! Background indexing: appended messages are embedded by a tokio task,
//! so a request never waits for the embedder.

use super::*;

enum Command {
    Thread(String, String),
    CatchUp,
    Flush(oneshot::Sender<Result<usize>>),
}

/// Embeds appended messages in the background: [`Recaller::notify`]
/// (after an append) queues a thread and returns at once; a tokio task
/// indexes what the thread lacks. Failures keep the thread queued and are
/// retried after 0.5 s, 1 s, 2 s... up to 60 s. Dropping the `Recaller`
/// stops the task.
#[derive(Debug, Clone)]
pub struct Recaller {
    tx: mpsc::UnboundedSender<Command>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Recaller {
    /// Starts the background task (on the current tokio runtime).
    pub fn spawn(recall: Recall, embedder: Arc<dyn Embedder>) -> Recaller {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(recall, embedder, rx));
        Recaller { tx }
    }

    /// Queues the thread for indexing; never waits.
    pub fn notify(&self, resource: &str, thread: &str) {
        let _ = self
            .tx
            .send(Command::Thread(resource.to_owned(), thread.to_owned()));
    }

    /// Queues every thread with unindexed messages (after a restart).
    pub fn catch_up(&self) {
        let _ = self.tx.send(Command::CatchUp);
    }

    /// Indexes every queued thread now, ignoring the retry delay; returns
    /// how many messages were indexed, or the first failure (the failed
    /// threads stay queued).
    pub async fn flush(&self) -> Result<usize> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Command::Flush(reply))
            .map_err(|_| err("the background indexer has stopped"))?;
        answer
            .await
            .map_err(|_| err("the background indexer has stopped"))?
    }
}

async fn run(
    recall: Recall,
    embedder: Arc<dyn Embedder>,
    mut rx: mpsc::UnboundedReceiver<Command>,
) {
    let mut queued: BTreeSet<(String, String)> = BTreeSet::new();
    let mut delay = Duration::ZERO;
    loop {
        let command = if queued.is_empty() {
            match rx.recv().await {
                Some(c) => Some(c),
                None => return,
            }
        } else {
            tokio::select! {
                c = rx.recv() => match c {
                    Some(c) => Some(c),
                    None => return,
                },
                () = tokio::time::sleep(delay) => None,
            }
        };
        let mut flush = None;
        match command {
            Some(Command::Thread(r, t)) => {
                queued.insert((r, t));
                // Gather what else is waiting, to work in one pass.
                while let Ok(c) = rx.try_recv() {
                    match c {
                        Command::Thread(r, t) => {
                            queued.insert((r, t));
                        }
                        Command::CatchUp => catch_up(&recall, &mut queued).await,
                        Command::Flush(reply) => {
                            flush = Some(reply);
                            break;
                        }
                    }
                }
                if flush.is_none() && !delay.is_zero() {
                    continue; // wait out the retry delay
                }
            }
            Some(Command::CatchUp) => {
                catch_up(&recall, &mut queued).await;
            }
            Some(Command::Flush(reply)) => flush = Some(reply),
            None => {}
        }
        let mut total = 0;
        let mut first_error = None;
        let threads: Vec<_> = queued.iter().cloned().collect();
        for (r, t) in threads {
            let key = (r, t);
            let mark = recall.cache().mark(&key);
            match recall
                .index_pending_after(&key.0, &key.1, &*embedder, mark)
                .await
            {
                Ok((n, mark)) => {
                    total += n;
                    queued.remove(&key);
                    recall.cache().set_mark(key, mark);
                }
                Err(e) => {
                    tracing::warn!(resource = %key.0, thread = %key.1, error = %e, "semantic recall: indexing failed; will retry");
                    if matches!(
                        e.downcast_ref(),
                        Some(AgentMemoryError::ThreadOwnership { .. })
                    ) {
                        queued.remove(&key);
                    }
                    first_error.get_or_insert(e);
                }
            }
        }
        delay = if queued.is_empty() {
            Duration::ZERO
        } else {
            (delay * 2).clamp(Duration::from_millis(500), Duration::from_secs(60))
        };
        if let Some(reply) = flush {
            let _ = reply.send(match first_error {
                Some(e) => Err(e),
                None => Ok(total),
            });
        }
    }
}

async fn catch_up(recall: &Recall, queued: &mut BTreeSet<(String, String)>) {
    match recall.threads_with_unindexed().await {
        Ok(list) => queued.extend(list),
        Err(e) => tracing::warn!(error = %e, "semantic recall: cannot list unindexed threads"),
    }
}
