//! Background indexing: appended messages are embedded by a tokio task,
//! so a request never waits for the embedder.

use super::*;

enum Command {
    Thread(String, String),
    CatchUp,
    Flush(oneshot::Sender<Result<usize>>),
}

/// Embeds appended messages in the background: [`Recaller::notify`] (or
/// [`Recaller::append`]) queues a thread and returns at once; a tokio task
/// indexes what the thread lacks. Failures keep the thread queued and are
/// retried after 0.5 s, 1 s, 2 s... up to 60 s. Dropping the `Recaller`
/// stops the task.
#[derive(Debug, Clone)]
pub struct Recaller {
    store: Store,
    tx: mpsc::UnboundedSender<Command>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Recaller {
    /// Starts the background task (on the current tokio runtime).
    pub fn spawn(store: Store, embedder: Arc<dyn Embedder>) -> Recaller {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(store.clone(), embedder, rx));
        Recaller { store, tx }
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

    /// [`Store::append`], then queues the thread for indexing.
    pub async fn append(
        &self,
        resource: &str,
        thread: &str,
        messages: &[Message],
    ) -> Result<Vec<StoredMessage>> {
        let stored = self.store.append(resource, thread, messages).await?;
        self.notify(resource, thread);
        Ok(stored)
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

async fn run(store: Store, embedder: Arc<dyn Embedder>, mut rx: mpsc::UnboundedReceiver<Command>) {
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
                        Command::CatchUp => catch_up(&store, &mut queued).await,
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
                catch_up(&store, &mut queued).await;
            }
            Some(Command::Flush(reply)) => flush = Some(reply),
            None => {}
        }
        let mut total = 0;
        let mut first_error = None;
        let threads: Vec<_> = queued.iter().cloned().collect();
        for (r, t) in threads {
            let key = (r, t);
            let mark = store.cache().mark(&key);
            match store
                .index_pending_after(&key.0, &key.1, &*embedder, mark)
                .await
            {
                Ok((n, mark)) => {
                    total += n;
                    queued.remove(&key);
                    store.cache().set_mark(key, mark);
                }
                Err(e) => {
                    tracing::warn!(resource = %key.0, thread = %key.1, error = %e, "semantic recall: indexing failed; will retry");
                    if matches!(e, Error::ThreadOwnership { .. }) {
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

async fn catch_up(store: &Store, queued: &mut BTreeSet<(String, String)>) {
    match store.threads_with_unindexed().await {
        Ok(list) => queued.extend(list),
        Err(e) => tracing::warn!(error = %e, "semantic recall: cannot list unindexed threads"),
    }
}
