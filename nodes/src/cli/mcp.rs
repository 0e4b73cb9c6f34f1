//! `nodekit mcp serve`: a workflow's tools served over the Model Context
//! Protocol.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use nodekit::Catalog;
use nodekit::mcp::{HttpOptions, MCP_PATH, McpServer};
use nodekit::node::Credentials;
use nodekit::workflow::{RunOptions, Workflow};

use super::{CliError, CredentialArgs};

/// What `nodekit mcp` does.
#[derive(clap::Subcommand, Debug)]
pub(super) enum McpCommand {
    /// Serve a workflow's tools (every node connected to an agent as a tool,
    /// with its parameters and credentials) to MCP clients: over standard
    /// input and output, or over Streamable HTTP with `--http`.
    Serve {
        /// The workflow JSON file.
        workflow: PathBuf,
        /// Serve over Streamable HTTP at this address, at the path `/mcp`: `IP:PORT`, or a port alone for 127.0.0.1.
        #[arg(long, value_name = "ADDR", value_parser = super::http_address)]
        http: Option<SocketAddr>,
        /// Require `Authorization: Bearer <token>` on every HTTP request, the token read from this environment variable.
        #[arg(long, value_name = "VAR", requires = "http")]
        token_env: Option<String>,
        /// Accept this `Host` header too (a name, or `name:port`); repeat for more. Loopback names and the address served on are always accepted.
        #[arg(long, value_name = "HOST", requires = "http")]
        allow_host: Vec<String>,
        /// Accept requests from pages of this browser origin too (`https://app.example`, `:*` for any port); repeat for more. Pages served from an accepted host always may.
        #[arg(long, value_name = "ORIGIN", requires = "http")]
        allow_origin: Vec<String>,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
}

/// Runs a `nodekit mcp` command.
pub(super) fn run(command: McpCommand) -> Result<Option<String>, CliError> {
    let McpCommand::Serve {
        workflow,
        http,
        token_env,
        allow_host,
        allow_origin,
        credentials,
    } = command;
    let http = http
        .map(|addr| {
            let mut options = http_options(addr, token_env.as_deref(), allow_host)?;
            options.allowed_origins = allow_origin;
            Ok::<_, String>((addr, options))
        })
        .transpose()?;
    let (workflow, credentials) = super::load_workflow(&workflow, &credentials)?;
    // Over stdio there is one client, and its calls wait on I/O: one thread
    // answers them without handing each wake-up to another thread (a
    // quarter less time per call in `benches/mcp/run.sh`).
    let runtime = match http {
        Some(_) => super::async_runtime()?,
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?,
    };
    runtime.block_on(serve(workflow, credentials, http))?;
    Ok(None)
}

fn http_options(
    addr: SocketAddr,
    token_env: Option<&str>,
    allow_host: Vec<String>,
) -> Result<HttpOptions, String> {
    let token = token_env
        .map(|var| super::secret_from_env("--token-env", var))
        .transpose()?;
    if token.is_none() && !addr.ip().is_loopback() {
        say!(
            "warning: serving on {addr} without a token: anyone who can reach it can call the tools (use --token-env)"
        );
    }
    let mut options = HttpOptions {
        token,
        ..HttpOptions::default()
    };
    if !addr.ip().is_unspecified() {
        options.allowed_hosts.push(addr.ip().to_string());
    }
    options.allowed_hosts.extend(allow_host);
    Ok(options)
}

async fn serve(
    workflow: Workflow,
    credentials: Arc<Credentials>,
    http: Option<(SocketAddr, HttpOptions)>,
) -> Result<(), CliError> {
    let options = RunOptions {
        input: serde_json::json!({}),
        credentials,
        events: None,
        ..RunOptions::default()
    };
    let tools = workflow
        .tools(Catalog::global(), &options)
        .await
        .map_err(|e| e.to_string())?;
    if tools.is_empty() {
        let none = nodekit::mcp::McpError::NoTools {
            hint: ": no node of the workflow is connected to another as a tool (`ai_tool`)".into(),
        };
        return Err(none.to_string().into());
    }
    let names: Vec<String> = tools.iter().map(|t| t.definition().name.clone()).collect();
    let server = McpServer::new(tools).map_err(|e| e.to_string())?;
    match http {
        None => {
            say!(
                "serving {} over standard input and output",
                names.join(", ")
            );
            let served = server.serve_stdio().await;
            // Calls the client left behind are cancelled on their servers too.
            super::settle().await;
            served.map_err(|e| e.to_string())?;
        }
        Some((addr, options)) => {
            let listener = nodekit::mcp::bind(&addr.to_string())
                .await
                .map_err(|e| e.to_string())?;
            let local = listener
                .local_addr()
                .map_err(|e| format!("cannot read the address served on: {e}"))?;
            say!("serving {} at http://{local}{MCP_PATH}", names.join(", "));
            // SIGINT or SIGTERM ends the sessions: their calls are
            // cancelled, on their databases too, before the process exits.
            nodekit::mcp::serve_http_until(server, listener, options, super::stop_signal())
                .await
                .map_err(|e| e.to_string())?;
            super::settle().await;
            say!("stopped");
        }
    }
    Ok(())
}
