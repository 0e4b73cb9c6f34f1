//! Serving tools over standard input and output.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;

use crate::{DEFAULT_MAX_BODY_BYTES, McpError, McpServer};
use nodekit_core::error::Result;
use nodekit_core::tool::Tool;

/// The longest message accepted on standard input: 4 MiB, as over HTTP.
pub const MAX_STDIO_MESSAGE_BYTES: usize = DEFAULT_MAX_BODY_BYTES;

/// Serves `tools` over standard input and output until the client closes
/// its end. Calls still running then get up to 5 seconds to answer before
/// they are cancelled. Nothing else may write to standard output meanwhile.
///
/// There is one client, and its calls mostly wait on I/O: a current-thread
/// runtime (`#[tokio::main(flavor = "current_thread")]`) answers them
/// faster than a multi-thread one, which hands each wake-up to another
/// thread.
pub async fn serve_stdio(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Result<()> {
    McpServer::new(tools)?.serve_stdio().await
}

impl McpServer {
    /// Serves over standard input and output (see [`serve_stdio`]).
    pub async fn serve_stdio(self) -> Result<()> {
        let transport = AsyncRwTransport::<rmcp::RoleServer, _, _>::new(
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
        .with_max_line_length(MAX_STDIO_MESSAGE_BYTES);
        let session_error = |reason: String| McpError::Session {
            what: "stdio session".into(),
            reason,
        };
        let running = self
            .clone()
            .serve(transport)
            .await
            .map_err(|e| session_error(e.to_string()))?;
        let ended = running.waiting().await;
        // The session cancelled its running calls; they stop (and drop what
        // they hold) before this returns.
        self.calls_ended(std::time::Duration::from_secs(2)).await;
        ended.map_err(|e| session_error(e.to_string()))?;
        Ok(())
    }
}
