//! Why serving tools over the Model Context Protocol, or using an MCP
//! server's tools, failed: [`McpError`].

use nodekit_core::error::quoted;

/// Serving tools to MCP clients, or reaching an MCP server, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// Two tools to serve have the same name; a client could call only one.
    #[error("mcp: two tools are both named `{}`; give the nodes different names", quoted(.name))]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// There is nothing to serve.
    #[error("mcp: there are no tools to serve{hint}")]
    NoTools {
        /// Where tools were looked for, e.g. `: no node is connected to an agent as a tool`.
        hint: String,
    },
    /// The HTTP address cannot be listened on.
    #[error("mcp: cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The bearer token is unusable (empty, or not a valid header value).
    #[error("mcp: the bearer token {problem}")]
    Token {
        /// What is wrong with it (never the token itself).
        problem: String,
    },
    /// The MCP session could not start or broke off (a client that never
    /// initialised, a server that does not answer).
    #[error("mcp: {what}: {reason}")]
    Session {
        /// Which side and transport, e.g. `stdio session`.
        what: String,
        /// The protocol library's reason.
        reason: String,
    },
    /// An MCP server cannot be reached, or its session broke off.
    #[error("mcp: the server at {server}: {reason}")]
    Connect {
        /// Its URL or command (never a header or credential).
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// A remote tool failed: it answered with `isError`, did not answer in
    /// time, or its server went away. The message is the model's to read.
    #[error("the MCP tool `{}` failed: {message}", quoted(.tool))]
    ToolFailed {
        /// The tool.
        tool: String,
        /// The server's error text, or what happened.
        message: String,
    },
}

impl From<McpError> for nodekit_core::Error {
    fn from(e: McpError) -> Self {
        nodekit_core::Error::other(e)
    }
}
