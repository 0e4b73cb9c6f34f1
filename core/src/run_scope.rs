//! What tools keep for the length of one agent run, such as the SQL tools'
//! open transaction, which is rolled back when the run ends.
//!
//! The agent runs each run inside [`scoped`]. A tool asks for its state
//! with [`state`], which makes it on first use, and every state's
//! [`RunState::end`] runs when the run ends. Outside a run there is no
//! state. A crate of its own keeps its state here without the agent
//! knowing about it.

use std::any::Any;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

tokio::task_local! {
    static RUN: Arc<Run>;
}

/// The states of one run, in the order they were made.
#[derive(Default)]
struct Run {
    states: Mutex<Vec<Arc<dyn RunState>>>,
}

/// A tool's state for one run.
pub trait RunState: Any + Send + Sync {
    /// Runs once, when the run ends (also when it failed): a transaction
    /// left open is rolled back here.
    fn end(self: Arc<Self>) -> BoxFuture<'static, ()>;
}

/// Runs `work` as one run: each state made in it ends when `work` ends.
/// A run inside another has states of its own.
pub async fn scoped<T>(work: impl Future<Output = T>) -> T {
    let run = Arc::new(Run::default());
    let out = RUN.scope(run.clone(), work).await;
    let states = std::mem::take(&mut *run.states.lock().unwrap_or_else(|e| e.into_inner()));
    for state in states {
        state.end().await;
    }
    out
}

/// The calling task's run's state of type `S`, made with `S::default()`
/// on first use; `None` outside a run.
pub fn state<S: RunState + Default>() -> Option<Arc<S>> {
    RUN.try_with(|run| {
        let mut states = run.states.lock().unwrap_or_else(|e| e.into_inner());
        let found = states.iter().find_map(|s| {
            (s.clone() as Arc<dyn Any + Send + Sync>)
                .downcast::<S>()
                .ok()
        });
        found.unwrap_or_else(|| {
            let made = Arc::new(S::default());
            states.push(made.clone());
            made
        })
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static ENDED: AtomicUsize = AtomicUsize::new(0);

    #[derive(Default)]
    struct Counter(AtomicUsize);

    impl RunState for Counter {
        fn end(self: Arc<Self>) -> BoxFuture<'static, ()> {
            Box::pin(async move {
                ENDED.fetch_add(self.0.load(Ordering::SeqCst), Ordering::SeqCst);
            })
        }
    }

    #[tokio::test]
    async fn a_state_lives_for_its_run_and_ends_with_it() {
        assert!(state::<Counter>().is_none());
        scoped(async {
            state::<Counter>().unwrap().0.fetch_add(1, Ordering::SeqCst);
            state::<Counter>().unwrap().0.fetch_add(1, Ordering::SeqCst);
            // A run inside another starts with nothing.
            scoped(async { assert_eq!(state::<Counter>().unwrap().0.load(Ordering::SeqCst), 0) })
                .await;
            assert_eq!(ENDED.load(Ordering::SeqCst), 0);
        })
        .await;
        assert_eq!(ENDED.load(Ordering::SeqCst), 2);
    }
}
