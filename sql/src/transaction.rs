//! Transactions across tool calls, bound to one agent run.
//!
//! A workflow author who connects the transaction tool
//! (`sqlTransactionTool`, or any `#[db_tool(operation = transaction)]`)
//! lets the model `begin`, `commit` and `rollback`. Without it every call
//! is its own transaction. While a transaction is open, every
//! SQL tool of the same run that reaches the same database (server, port,
//! database and user, or file; and schema) runs inside it, so reads see its
//! writes. Each call runs in a savepoint: a refused or failed call is
//! undone alone and the transaction goes on, and a read runs read-only and
//! is undone whatever it ran.
//!
//! The rules:
//! - One transaction per run at a time; a second `begin` is refused.
//! - Only the run that began a transaction can see, commit or roll it back:
//!   the transaction belongs to the run's task
//!   ([`run_scope::scoped`], which nodekit's agent runs each run in), so another
//!   run's `commit` finds nothing open and is refused.
//! - A transaction neither committed nor rolled back is rolled back when
//!   the run ends (also when it fails or is cancelled) or at its time limit
//!   (`timeLimit`, default [`DEFAULT_TIME_LIMIT_SECS`] s), whichever comes
//!   first. It is never left open.
//! - A write that would be saved outside the transaction is refused: on
//!   another database or schema while it is open, or after it ended
//!   without the model asking (its time limit, or the database rolling it
//!   back when a call failed), until the model calls the transaction tool.
//! - Outside an agent run (a single tool call, n8n's own agent) the tool
//!   answers that transactions need one.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use nodekit_core::run_scope::{self, RunState};

use super::database::{Database, Limits, Session};
use super::response::ToolError;

/// Seconds a transaction stays open when the tool names no `timeLimit`.
pub const DEFAULT_TIME_LIMIT_SECS: u32 = 60;
/// The longest time limit a transaction may have, in seconds.
pub const MAX_TIME_LIMIT_SECS: u32 = 3600;

/// The SQL transaction of one agent run.
#[derive(Default)]
struct Run {
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
enum State {
    /// No transaction, and the model knows how the last one ended.
    #[default]
    Idle,
    /// A transaction is open.
    Open(Open),
    /// The last transaction ended without the model asking (why): writes
    /// are refused until the model calls the transaction tool.
    Ended(String),
}

/// An open transaction, and on which database and schema.
struct Open {
    target: Arc<str>,
    schema: String,
    session: Session,
    /// Tells the timer of this transaction from a later one's.
    id: u64,
}

impl State {
    /// The open transaction, leaving `next` in its place (`None`: none is open).
    fn take_open(&mut self, next: State) -> Option<Open> {
        match std::mem::replace(self, next) {
            State::Open(open) => Some(open),
            other => {
                *self = other;
                None
            }
        }
    }
}

impl RunState for Run {
    /// A transaction still open when the run ends is rolled back.
    fn end(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Some(open) = self.state.lock().await.take_open(State::Idle) {
                tracing::warn!(
                    "SQL transaction left open at the end of the agent run; rolled back"
                );
                open.session.rollback().await;
            }
        })
    }
}

/// The SQL transaction of the calling task's agent run, if it is inside one.
fn current() -> Option<Arc<Run>> {
    run_scope::state::<Run>()
}

/// Runs one tool call in the run's open transaction when it is on `db`
/// and `schema`: in a savepoint, read-only for a read (`read_only`), kept
/// when it is a write that succeeded. `None`: the call runs on its own.
///
/// A write that would run on its own while the run has a transaction open
/// elsewhere (another database or schema), or after the run's transaction
/// ended without the model asking (its time limit, or the database rolling
/// it back), is refused: the model may believe it is inside one.
pub(super) async fn in_open<T>(
    db: &Database,
    schema: &str,
    timeout: Duration,
    read_only: bool,
    call: impl for<'s> AsyncFnOnce(&'s mut Session) -> Result<T, ToolError>,
) -> Option<Result<T, ToolError>> {
    let run = current()?;
    let mut state = run.state.lock().await;
    let tx = match &mut *state {
        State::Open(o) if &*o.target == db.target() && o.schema == schema => o,
        _ if read_only => return None,
        State::Idle => return None,
        State::Open(_) => {
            return Some(Err(ToolError::denied(
                "a transaction is open in this run on another database or schema: this write would be \
                 saved at once, outside it; commit or roll the transaction back first",
            )));
        }
        State::Ended(why) => {
            return Some(Err(ToolError::denied(format!(
                "this run's transaction ended without a commit ({why}), so its changes are gone; \
                 call the transaction tool (begin a new transaction, or roll back) before writing again"
            ))));
        }
    };
    let result = match tx.session.enter_call(timeout, read_only).await {
        Ok(()) => call(&mut tx.session).await,
        Err(e) => Err(e),
    };
    let keep = result.is_ok() && !read_only;
    let Err(lost) = tx.session.leave_call(keep).await else {
        return Some(result);
    };
    // The savepoint is gone: the database ended the transaction itself
    // (SQLite rolls the whole transaction back when a write is interrupted
    // at its time limit) or the connection failed. Its changes are lost.
    let why = "the database rolled it back when a call failed";
    if let Some(tx) = state.take_open(State::Ended(why.into())) {
        tx.session.rollback().await;
    }
    let mut e = result.err().unwrap_or(lost);
    e.message.push_str(&format!(
        "; {why}: this run's transaction and its changes are gone"
    ));
    Some(Err(e))
}

/// `begin`, `commit` or `rollback`, for the transaction tool: the action
/// done and what it means, for the model.
pub(super) async fn act(
    db: &Database,
    schema: &str,
    action: &str,
    time_limit: Option<i64>,
) -> Result<(&'static str, String), ToolError> {
    let Some(run) = current() else {
        return Err(ToolError::denied(
            "transactions work only inside an agent run: each call of this tool outside one would end with it",
        ));
    };
    let mut state = run.state.lock().await;
    match action.trim().to_ascii_lowercase().as_str() {
        "begin" => {
            if matches!(*state, State::Open(_)) {
                return Err(ToolError::denied(
                    "a transaction is already open in this run; commit or roll it back first",
                ));
            }
            let secs = match time_limit {
                None => DEFAULT_TIME_LIMIT_SECS,
                Some(n) if (1..=i64::from(MAX_TIME_LIMIT_SECS)).contains(&n) => n as u32,
                Some(n) => {
                    return Err(ToolError::malformed(
                        super::response::Reason::OutOfRange,
                        format!(
                            "timeLimit {n} is out of range: use 1 to {MAX_TIME_LIMIT_SECS} seconds"
                        ),
                    ));
                }
            };
            let limit = Duration::from_secs(secs.into());
            let session = db
                .session(
                    schema,
                    Limits {
                        timeout: limit,
                        read_only: false,
                    },
                )
                .await?;
            static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            let id = IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            *state = State::Open(Open {
                target: db.target().into(),
                schema: schema.to_owned(),
                session,
                id,
            });
            roll_back_at(Arc::downgrade(&run), id, Instant::now() + limit, secs);
            Ok((
                "begin",
                format!(
                    "Transaction open. Calls of the SQL tools on this database now run inside it and see its changes; \
                     commit to keep them. It is rolled back if not committed within {secs} s or by the end of the run."
                ),
            ))
        }
        action @ ("commit" | "rollback") => {
            let tx = match std::mem::take(&mut *state) {
                State::Open(tx) => tx,
                State::Ended(why) => {
                    return Err(ToolError::denied(format!(
                        "no transaction is open in this run ({why}); nothing to {action}"
                    )));
                }
                State::Idle => {
                    return Err(ToolError::denied(format!(
                        "no transaction is open in this run; nothing to {action}"
                    )));
                }
            };
            if action == "commit" {
                tx.session.commit().await?;
                Ok((
                    "commit",
                    "Transaction committed: its changes are kept.".into(),
                ))
            } else {
                tx.session.rollback().await;
                Ok((
                    "rollback",
                    "Transaction rolled back: its changes are undone.".into(),
                ))
            }
        }
        other => Err(ToolError::malformed(
            super::response::Reason::Malformed,
            format!(
                "unknown action `{}`: use begin, commit or rollback",
                super::writer::clip(other)
            ),
        )),
    }
}

/// Rolls the transaction `id` back at `deadline` if it is still open.
fn roll_back_at(run: Weak<Run>, id: u64, deadline: Instant, secs: u32) {
    tokio::spawn(async move {
        tokio::time::sleep_until(deadline.into()).await;
        let Some(run) = run.upgrade() else { return };
        let mut state = run.state.lock().await;
        if matches!(&*state, State::Open(o) if o.id == id) {
            let why =
                format!("the last one reached its time limit of {secs} s and was rolled back");
            let tx = state.take_open(State::Ended(why)).expect("checked above");
            tracing::warn!(secs, "SQL transaction reached its time limit; rolled back");
            tx.session.rollback().await;
        }
    });
}
