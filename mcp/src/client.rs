//! MCP servers' tools as nodekit tools: [`McpClient`] connects to a server
//! (Streamable HTTP, or a local command over stdio) and turns each tool it
//! lists into a [`Tool`] with the server's own name, description and schema.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value};

use crate::McpError;
use crate::sse;
use nodekit_core::error::{Result, shorten};
use nodekit_core::tool::{Tool, ToolDefinition};

/// How to reach an MCP server.
#[derive(Clone)]
pub enum ServerTransport {
    /// Streamable HTTP at `url`, with extra request headers (authentication).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8808/mcp`.
        url: String,
        /// Headers sent with every request, e.g. `Authorization: Bearer …`.
        headers: Vec<(String, String)>,
    },
    /// The protocol's older HTTP transport (HTTP+SSE): an event stream at
    /// `url`, messages posted to the endpoint it names. Deprecated; for
    /// servers that do not speak Streamable HTTP yet.
    Sse {
        /// The event stream, e.g. `http://127.0.0.1:8808/sse`.
        url: String,
        /// Headers sent with every request, e.g. `Authorization: Bearer …`.
        headers: Vec<(String, String)>,
    },
    /// A local program that speaks MCP on its standard input and output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for ServerTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values and the environment may hold secrets: only names are shown.
        match self {
            ServerTransport::Http { url, headers } | ServerTransport::Sse { url, headers } => f
                .debug_struct(match self {
                    ServerTransport::Sse { .. } => "Sse",
                    _ => "Http",
                })
                .field("url", url)
                .field(
                    "headers",
                    &headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .finish(),
            ServerTransport::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl ServerTransport {
    /// Where the server is, for messages: the URL without a user, password
    /// or query (they may hold secrets), or the command.
    fn shown(&self) -> String {
        match self {
            ServerTransport::Http { url, .. } | ServerTransport::Sse { url, .. } => {
                match reqwest::Url::parse(url) {
                    Ok(mut parsed) => {
                        let _ = parsed.set_username("");
                        let _ = parsed.set_password(None);
                        parsed.set_query(None);
                        shorten(parsed.as_str(), 200)
                    }
                    Err(_) => "an endpoint that is not a URL".into(),
                }
            }
            ServerTransport::Stdio { command, .. } => format!("command {}", shorten(command, 200)),
        }
    }

    /// `text` with the endpoint, as given, replaced by [`Self::shown`]:
    /// the protocol library's messages may quote it whole.
    fn scrub(&self, text: String) -> String {
        match self {
            ServerTransport::Http { url, .. } | ServerTransport::Sse { url, .. }
                if !url.is_empty() =>
            {
                text.replace(url.as_str(), &self.shown())
            }
            _ => text,
        }
    }
}

/// The variable that lets a workflow start MCP servers as local programs
/// inside n8n, where a workflow's author may not be who runs the machine.
pub const ALLOW_STDIO_IN_N8N: &str = "NODEKIT_MCP_ALLOW_STDIO";

/// Request headers from names and values, or what is wrong with one
/// (never the value: it may be a secret).
fn header_map(headers: &[(String, String)]) -> std::result::Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name: HeaderName = name
            .parse()
            .map_err(|_| format!("`{}` is not a header name", shorten(name, 100)))?;
        let value: HeaderValue = value.parse().map_err(|_| {
            format!("the value of header `{name}` holds characters HTTP cannot carry")
        })?;
        map.insert(name, value);
    }
    Ok(map)
}

/// Which of a server's tools to use (n8n's "Tools to Include").
#[derive(Debug, Clone, Default)]
pub enum ToolFilter {
    /// Every tool.
    #[default]
    All,
    /// Only these.
    Selected(Vec<String>),
    /// All but these.
    Except(Vec<String>),
}

impl ToolFilter {
    fn keeps(&self, name: &str) -> bool {
        match self {
            ToolFilter::All => true,
            ToolFilter::Selected(names) => names.iter().any(|n| n == name),
            ToolFilter::Except(names) => !names.iter().any(|n| n == name),
        }
    }
}

/// A session with an MCP server; its tools hold it open, and it closes
/// (the server's program is stopped) when the last of them is dropped. A
/// session the server ended (its program exited, its HTTP endpoint went
/// away) is opened again on the next call.
pub struct McpClient {
    service: tokio::sync::RwLock<Arc<Session>>,
    transport: ServerTransport,
    server: String,
    timeout: Duration,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

type Session = RunningService<RoleClient, ()>;

impl McpClient {
    /// Connects and initialises a session, within `timeout`, which each
    /// later request (listing, every call) gets too.
    pub async fn connect(transport: &ServerTransport, timeout: Duration) -> Result<Arc<McpClient>> {
        let service = open(transport, timeout).await?;
        Ok(Arc::new(McpClient {
            service: tokio::sync::RwLock::new(Arc::new(service)),
            transport: transport.clone(),
            server: transport.shown(),
            timeout,
        }))
    }

    /// The session, and what to pass [`McpClient::reopen`] if it broke.
    async fn session(&self) -> Arc<Session> {
        self.service.read().await.clone()
    }

    /// Opens a new session in place of `broken`, unless another call did.
    async fn reopen(&self, broken: &Arc<Session>) -> Result<Arc<Session>> {
        let mut service = self.service.write().await;
        if Arc::ptr_eq(&service, broken) {
            *service = Arc::new(open(&self.transport, self.timeout).await?);
        }
        Ok(service.clone())
    }

    /// The server's tools that `filter` keeps, as nodekit tools.
    pub async fn tools(self: &Arc<Self>, filter: &ToolFilter) -> Result<Vec<Arc<dyn Tool>>> {
        let session = self.session().await;
        let listed = tokio::time::timeout(self.timeout, session.list_all_tools())
            .await
            .map_err(|_| {
                self.failed(format!(
                    "no tool list within {} ms",
                    self.timeout.as_millis()
                ))
            })?
            .map_err(|e| self.failed(format!("cannot list its tools: {e}")))?;
        let tools = listed
            .into_iter()
            .filter(|t| filter.keeps(&t.name))
            .map(|t| {
                let definition = ToolDefinition {
                    name: t.name.to_string(),
                    description: t.description.as_deref().unwrap_or_default().to_owned(),
                    parameters: Value::Object((*t.input_schema).clone()),
                };
                Arc::new(RemoteTool {
                    client: self.clone(),
                    definition,
                }) as Arc<dyn Tool>
            })
            .collect();
        Ok(tools)
    }

    fn failed(&self, reason: String) -> nodekit_core::Error {
        McpError::Connect {
            server: self.server.clone(),
            reason: self.transport.scrub(reason),
        }
        .into()
    }
}

/// Connects to `transport` and initialises a session within `timeout`.
async fn open(transport: &ServerTransport, timeout: Duration) -> Result<Session> {
    let server = transport.shown();
    let failed = |reason: String| McpError::Connect {
        server: server.clone(),
        reason: transport.scrub(reason),
    };
    // No redirects: the credentials' headers go only where they were meant to.
    let http_client = || {
        nodekit_http::http_client()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| failed(e.to_string()))
    };
    let connecting = async {
        match transport {
            ServerTransport::Http { url, headers } => {
                let custom: HashMap<_, _> = header_map(headers)
                    .map_err(failed)?
                    .into_iter()
                    .filter_map(|(name, value)| Some((name?, value)))
                    .collect();
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
                ().serve(transport).await.map_err(|e| failed(e.to_string()))
            }
            ServerTransport::Sse { url, headers } => {
                let headers = header_map(headers).map_err(failed)?;
                let transport = sse::connect(http_client()?, url, headers)
                    .await
                    .map_err(failed)?;
                ().serve(transport).await.map_err(|e| failed(e.to_string()))
            }
            ServerTransport::Stdio { command, args, env } => {
                if nodekit_core::host::runs_editors_workflows()
                    && std::env::var(ALLOW_STDIO_IN_N8N).as_deref() != Ok("1")
                {
                    return Err(failed(format!(
                        "starting a program is off inside n8n: anyone who edits a workflow could run any command. Set {ALLOW_STDIO_IN_N8N}=1 in n8n's environment to allow it"
                    )));
                }
                let mut program = tokio::process::Command::new(command);
                // Stopped with the session, even when the runtime ends first.
                program
                    .args(args)
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    .kill_on_drop(true);
                let transport = TokioChildProcess::new(program)
                    .map_err(|e| failed(format!("cannot start it: {e}")))?;
                ().serve(transport).await.map_err(|e| failed(e.to_string()))
            }
        }
    };
    Ok(tokio::time::timeout(timeout, connecting)
        .await
        .map_err(|_| failed(format!("no answer within {} ms", timeout.as_millis())))??)
}

/// One tool of an MCP server.
struct RemoteTool {
    client: Arc<McpClient>,
    definition: ToolDefinition,
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool")
            .field("name", &self.definition.name)
            .field("server", &self.client.server)
            .finish()
    }
}

impl Tool for RemoteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, args: Value) -> BoxFuture<'a, Result<Value>> {
        Box::pin(async move {
            let tool = self.definition.name.clone();
            let arguments = match args {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return Err(McpError::ToolFailed {
                        tool,
                        message: format!(
                            "the arguments must be a JSON object, not {}",
                            nodekit_core::error::describe_value(&other)
                        ),
                    }
                    .into());
                }
            };
            let request = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
            let client = &self.client;
            let failed = |message: String| McpError::ToolFailed {
                tool: tool.clone(),
                message,
            };
            // Dropping the call (on timeout) tells the server to cancel it.
            let call = |session: Arc<Session>, request: CallToolRequestParams| async move {
                tokio::time::timeout(client.timeout, session.call_tool(request)).await
            };
            let session = client.session().await;
            let mut outcome = call(session.clone(), request.clone()).await;
            if let Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) = outcome
            {
                // The server ended the session: once more, on a new one.
                let session = client
                    .reopen(&session)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                outcome = call(session, request).await;
            }
            let result = outcome
                .map_err(|_| {
                    failed(format!(
                        "no answer within {} ms",
                        client.timeout.as_millis()
                    ))
                })?
                .map_err(|e| failed(client.transport.scrub(format!("{}: {e}", client.server))))?;
            if result.is_error == Some(true) {
                return Err(McpError::ToolFailed {
                    tool,
                    message: text_of(&result),
                }
                .into());
            }
            Ok(Value::String(text_of(&result)))
        })
    }
}

/// What a result says, as text for a model: its text blocks, other blocks
/// as JSON, or the structured content when there is nothing else.
fn text_of(result: &CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect();
    match (&result.structured_content, parts.is_empty()) {
        (Some(structured), true) => structured.to_string(),
        _ => parts.join("\n"),
    }
}
