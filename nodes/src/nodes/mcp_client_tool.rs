//! n8n's "MCP Client Tool" (`mcpClientTool`, version 1.2): the tools of a
//! Model Context Protocol server, each one a tool of the agent with the
//! server's own name, description and schema.

use std::time::Duration;

use nodekit::mcp::{McpClient, ServerTransport, ToolFilter};
use nodekit::prelude::*;
use serde::{Deserialize, Serialize};

// n8n ships both; they authenticate the HTTP transport.
nodekit::n8n_credentials!("httpBearerAuth", "httpHeaderAuth");

/// How the server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Transport {
    /// Streamable HTTP, the protocol's transport for remote servers.
    #[serde(rename = "httpStreamable")]
    #[schemars(title = "HTTP Streamable")]
    HttpStreamable,
    /// The protocol's older HTTP transport (an event stream and a messages endpoint); deprecated, as in n8n.
    #[serde(rename = "sse")]
    #[schemars(title = "Server Sent Events (Deprecated)")]
    Sse,
    /// A local program that speaks MCP on its standard input and output (nodekit's own).
    #[serde(rename = "stdio")]
    #[schemars(title = "Command (stdio)")]
    Stdio,
}

/// How requests to the server are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Authentication {
    /// `Authorization: Bearer <token>` from an `httpBearerAuth` credential.
    #[serde(rename = "bearerAuth")]
    #[schemars(title = "Bearer Auth")]
    Bearer,
    /// A header of your choice from an `httpHeaderAuth` credential.
    #[serde(rename = "headerAuth")]
    #[schemars(title = "Header Auth")]
    Header,
    /// No authentication.
    #[serde(rename = "none")]
    #[schemars(title = "None")]
    None,
}

/// Which of the server's tools the agent gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Include {
    /// Every tool.
    #[serde(rename = "all")]
    #[schemars(title = "All")]
    All,
    /// Only the tools named.
    #[serde(rename = "selected")]
    #[schemars(title = "Selected")]
    Selected,
    /// Every tool but those named.
    #[serde(rename = "except")]
    #[schemars(title = "All Except")]
    Except,
}

/// Further settings, n8n's "Options" collection.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct McpOptions {
    /// Milliseconds to wait for the server: to connect, to list its tools, and for each call.
    #[param(default = 60000, min = 1)]
    pub timeout: u32,
}

/// Connect tools from an MCP Server.
#[ai_node(
    name = "mcpClientTool",
    display_name = "MCP Client Tool",
    output = tool,
    icon = "fa:plug",
    version = [1.2],
    optional_credentials = ["httpBearerAuth", "httpHeaderAuth"]
)]
#[derive(Debug, Clone, PartialEq)]
pub struct McpClientTool {
    /// Endpoint of your MCP server, e.g. `http://127.0.0.1:8808/mcp`.
    #[param(
        display_name = "Endpoint",
        name = "endpointUrl",
        default = "",
        placeholder = "e.g. https://my-mcp-server.ai/mcp",
        display_options(show(server_transport = [Transport::HttpStreamable, Transport::Sse]))
    )]
    pub endpoint_url: String,
    /// The transport used by your endpoint.
    #[param(display_name = "Server Transport", default = Transport::HttpStreamable)]
    pub server_transport: Transport,
    /// The program to start, e.g. `npx` or a path.
    #[param(default = "", display_options(show(server_transport = [Transport::Stdio])))]
    pub command: String,
    /// Its arguments, one per line.
    #[param(default = "", rows = 3, display_options(show(server_transport = [Transport::Stdio])))]
    pub arguments: String,
    /// The way to authenticate with your endpoint.
    #[param(default = Authentication::None)]
    pub authentication: Authentication,
    /// How to select the tools you want to be exposed to the AI Agent.
    #[param(display_name = "Tools to Include", default = Include::All)]
    pub include: Include,
    /// The tools to give the agent.
    #[param(
        display_name = "Tools to Include",
        name = "includeTools",
        display_options(show(include = [Include::Selected]))
    )]
    pub include_tools: Option<Vec<String>>,
    /// The tools to keep from the agent.
    #[param(
        display_name = "Tools to Exclude",
        name = "excludeTools",
        display_options(show(include = [Include::Except]))
    )]
    pub exclude_tools: Option<Vec<String>>,
    /// Further settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: McpOptions,
}

impl McpClientTool {
    fn transport(&self, ctx: &SupplyContext) -> nodekit::Result<ServerTransport> {
        let invalid = |message: &str| nodekit::Error::NodeFailed {
            node: ctx.node_name().to_owned(),
            message: message.to_owned(),
        };
        match self.server_transport {
            Transport::HttpStreamable | Transport::Sse => {
                let url = self.endpoint_url.trim();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid(
                        "the Endpoint (`endpointUrl`) must be an http:// or https:// URL, e.g. http://127.0.0.1:8808/mcp",
                    ));
                }
                let (url, headers) = (url.to_owned(), self.headers(ctx)?);
                Ok(match self.server_transport {
                    Transport::Sse => ServerTransport::Sse { url, headers },
                    _ => ServerTransport::Http { url, headers },
                })
            }
            Transport::Stdio => {
                let command = self.command.trim();
                if command.is_empty() {
                    return Err(invalid(
                        "the Command (`command`) is empty: give the program that runs the MCP server",
                    ));
                }
                Ok(ServerTransport::Stdio {
                    command: command.to_owned(),
                    args: self
                        .arguments
                        .lines()
                        .map(str::trim)
                        .filter(|a| !a.is_empty())
                        .map(str::to_owned)
                        .collect(),
                    env: Vec::new(),
                })
            }
        }
    }

    /// The authentication header the credential gives.
    fn headers(&self, ctx: &SupplyContext) -> nodekit::Result<Vec<(String, String)>> {
        let field = |credential: &str, key: &str| -> nodekit::Result<String> {
            Ok(
                crate::credentials::required(ctx.credentials(credential)?, credential, key)?
                    .to_owned(),
            )
        };
        Ok(match self.authentication {
            Authentication::None => vec![],
            Authentication::Bearer => vec![(
                "Authorization".into(),
                format!("Bearer {}", field("httpBearerAuth", "token")?),
            )],
            Authentication::Header => vec![(
                field("httpHeaderAuth", "name")?,
                field("httpHeaderAuth", "value")?,
            )],
        })
    }

    fn filter(&self) -> ToolFilter {
        match self.include {
            Include::All => ToolFilter::All,
            Include::Selected => {
                ToolFilter::Selected(self.include_tools.clone().unwrap_or_default())
            }
            Include::Except => ToolFilter::Except(self.exclude_tools.clone().unwrap_or_default()),
        }
    }
}

impl SupplyData for McpClientTool {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let timeout = Duration::from_millis(self.options.timeout.into());
        let client = McpClient::connect(&self.transport(ctx)?, timeout).await?;
        let tools = client.tools(&self.filter()).await?;
        if tools.is_empty() {
            return Err(nodekit::Error::NodeFailed {
                node: ctx.node_name().to_owned(),
                message: "the MCP server offers no tool that `Tools to Include` keeps".into(),
            });
        }
        Ok(Supply::Toolkit(tools))
    }
}
