//! Whom the process runs nodes for.
//!
//! A program run by its operator runs the workflows the operator chose. A
//! host that runs the workflows of whoever edits them (the n8n bridge:
//! anyone who may edit a workflow in n8n) says so with
//! [`set_runs_editors_workflows`], and a node that could act on the
//! machine itself (the MCP client starting a local program) asks
//! [`runs_editors_workflows`] before it does.

use std::sync::atomic::{AtomicBool, Ordering};

static EDITORS: AtomicBool = AtomicBool::new(false);

/// Marks this process as running the workflows of whoever edits them, not
/// only its operator's. It stays so for the life of the process.
pub fn set_runs_editors_workflows() {
    EDITORS.store(true, Ordering::Relaxed);
}

/// Whether this process runs the workflows of whoever edits them
/// ([`set_runs_editors_workflows`]).
pub fn runs_editors_workflows() -> bool {
    EDITORS.load(Ordering::Relaxed)
}
