//! Tools over the Model Context Protocol (MCP), with the official Rust SDK
//! (`rmcp`).
//!
//! [`McpServer`] serves any [`Tool`](nodekit_core::tool::Tool)s — nodes declared with
//! `#[ai_node(output = tool)]`, nodekit's SQL tools, [`FnTool`](nodekit_core::tool::FnTool)s —
//! to MCP clients (Claude Desktop, Cursor, n8n's MCP Client Tool,
//! LangChain's and Mastra's adapters): over standard input and output with
//! [`serve_stdio`], or over Streamable HTTP with [`serve_http`]. A client
//! sees each tool exactly as nodekit's agent shows it to a model, and its
//! calls are checked and answered the same way.
//!
//! [`McpClient`] goes the other way: it connects to an MCP server (over
//! Streamable HTTP, or a local command over stdio) and gives each of its
//! tools as a [`Tool`](nodekit_core::tool::Tool) an agent can call (the `mcpClientTool` node).
//!
//! With the `server` feature (`nodekit::mcp` with nodekit's `mcp-server`):
//!
//! ```no_run
//! # #[cfg(feature = "server")] {
//! use std::sync::Arc;
//! use nodekit_core::tool::{FnTool, Tool, ToolDefinition};
//! use serde_json::{Value, json};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> nodekit_core::Result<()> {
//! let add = FnTool::new(
//!     ToolDefinition {
//!         name: "add".into(),
//!         description: "Adds two numbers.".into(),
//!         parameters: json!({
//!             "type": "object",
//!             "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!             "required": ["a", "b"],
//!         }),
//!     },
//!     |args: Value| async move {
//!         let number = |key: &str| args[key].as_f64().unwrap_or_default();
//!         Ok(json!(number("a") + number("b")))
//!     },
//! );
//! let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(add)];
//! nodekit_mcp::serve_stdio(tools).await
//! # }
//! # }
//! ```

#[cfg(feature = "client")]
mod client;
mod error;
#[cfg(feature = "server")]
mod http;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "client")]
mod sse;
#[cfg(feature = "server")]
mod stdio;

#[cfg(feature = "client")]
pub use client::{ALLOW_STDIO_IN_N8N, McpClient, ServerTransport, ToolFilter};
pub use error::McpError;
#[cfg(feature = "server")]
pub use http::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS, HttpOptions, MCP_PATH, bind, serve_http,
    serve_http_until,
};
#[cfg(feature = "server")]
pub use server::McpServer;
#[cfg(feature = "server")]
pub use stdio::{MAX_STDIO_MESSAGE_BYTES, serve_stdio};
