//! Data kept in this process only, and the warning it calls for under
//! n8n's queue mode.
//!
//! [`InProcessHistory`](crate::history::InProcessHistory) (n8n's Simple
//! Memory) and [`InProcessVectorStore::named`](crate::vector_store::InProcessVectorStore::named)
//! (its Simple Vector Store) hold their data in the process that runs them.
//! Under n8n's queue mode (`EXECUTIONS_MODE=queue`, which n8n passes on to
//! the bridge programs it starts) the main process and every worker start
//! their own bridge, so an execution on one worker does not see what an
//! execution on another kept. The first use of each such store in a
//! queue-mode process logs a warning (`tracing`, level warn) that says so.

use std::sync::{Mutex, OnceLock};

/// The variable n8n reads its execution mode from; `queue` runs
/// executions on worker processes.
pub const EXECUTIONS_MODE: &str = "EXECUTIONS_MODE";

/// Whether this process runs under n8n's queue mode (read once).
pub fn n8n_queue_mode() -> bool {
    static QUEUE: OnceLock<bool> = OnceLock::new();
    *QUEUE.get_or_init(|| {
        std::env::var(EXECUTIONS_MODE).is_ok_and(|mode| mode.trim().eq_ignore_ascii_case("queue"))
    })
}

/// Under queue mode, warns once per process and store kind that `what`
/// keeps its data in this process only.
pub(crate) fn warn_if_not_shared(what: &'static str) {
    static WARNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    if !n8n_queue_mode() {
        return;
    }
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.contains(&what) {
        return;
    }
    warned.push(what);
    tracing::warn!(
        "{what} keeps its data in this process, but n8n runs in queue mode \
         ({EXECUTIONS_MODE}=queue): the main process and each worker have their own copy, so an \
         execution on one worker does not see what another kept. Use a shared store instead \
         (a SQLite file, PostgreSQL or Redis)"
    );
}
