//! The `nodekit` command: lists, inspects, runs and packages the nodes
//! linked into it.
//!
//! JSON goes to standard output; errors go to standard error with a
//! non-zero exit status (1 for a failed command, 2 for wrong usage). When
//! the reader of standard output goes away (`nodekit catalog | head`), the
//! command stops quietly with status 141, as a program killed by `SIGPIPE`.
//!
//! A program of your own nodes gets the same command, so that
//! `your-program package` packages your nodes for n8n:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     // my_nodes::link(); // keeps your node crate's registrations
//!     nodekit_nodes::cli::main()
//! }
//! ```

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
#[cfg(feature = "agent")]
use std::sync::Arc;

/// Prints a line on standard error, after this program's name.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}: {}", $crate::cli::program(), format_args!($($arg)*))
    };
}

#[cfg(feature = "mcp-server")]
mod mcp;
mod new;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "_vector-store")]
mod vectors;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use nodekit::Catalog;
use nodekit::error::{QUOTE_MAX, shorten};
#[cfg(feature = "agent")]
use nodekit::event::{AgentEvent, EventSender};
use nodekit::from_ai;
use nodekit::node::Credentials;
use nodekit::tool::NodeTool;
#[cfg(feature = "agent")]
use nodekit::workflow::{RunOptions, RunResult, Workflow};
use serde_json::Value;

/// This program's name, as it was started: an outside crate's program
/// built on this command line (`weather`) is not `nodekit`.
pub(crate) fn program() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::env::args_os()
            .next()
            .as_deref()
            .map(Path::new)
            .and_then(Path::file_stem)
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("nodekit")
            .to_owned()
    })
}

/// List, inspect, run and package the n8n-style AI nodes linked into this
/// program: print their catalog and tool schemas, call a tool, run or chat
/// with a workflow, inspect agent memory, and write an n8n community package.
#[derive(Parser, Debug)]
#[command(name = "nodekit", version, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print every node description as n8n's `types/nodes.json` array, sorted by name.
    Catalog {
        /// Write the catalog to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Make a crate of one's own nodes: one tool node, this command line, a test, and the settings of a small first build.
    New(new::NewArgs),
    /// Print one node's description.
    Describe {
        /// Node name: `package.nodeName`, or `nodeName` when it is unambiguous.
        node: String,
    },
    /// Print the tool definition (OpenAI function form) a node gets with these parameters.
    ToolSchema {
        /// Node name: `package.nodeName`, or `nodeName` when it is unambiguous.
        node: String,
        /// The node's parameter values: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
        /// The node's name in the workflow, which becomes the tool name (default: the node type's default name).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// The node's `typeVersion` (default: the version a new node gets).
        #[arg(long, value_name = "VERSION")]
        node_version: Option<f64>,
    },
    /// Print the argument schema that the `$fromAI` calls inside any parameter JSON produce.
    FromAi {
        /// Parameter JSON: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long, value_name = "JSON")]
        params: String,
    },
    /// Run a tool node once, as an agent would call it, and print its JSON answer.
    ///
    /// A request the tool refuses (a SQL tool's `success: false`) is an answer:
    /// the exit status is 0. It is non-zero only when the tool cannot be run.
    ToolCall {
        /// Node name: `package.nodeName`, or `nodeName` when it is unambiguous.
        node: String,
        /// The node's parameter values: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
        /// The arguments the model would send: JSON text, `@FILE`, or `-`.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        /// The node's `typeVersion` (default: the version a new node gets).
        #[arg(long, value_name = "VERSION")]
        node_version: Option<f64>,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
    #[cfg(feature = "_agent-memory")]
    /// Inspect and move agent memory (storage from the N8N_INSTANCE_AI_* and DB_* variables).
    Memory {
        #[command(subcommand)]
        command: MemoryCommand,
        /// Use this SQLite file instead of the configured storage.
        #[arg(long, value_name = "FILE", global = true)]
        db: Option<PathBuf>,
    },
    #[cfg(feature = "agent")]
    /// Run a workflow (n8n export format) on one chat message, printing the answer as it streams.
    Run {
        /// The workflow JSON file.
        workflow: PathBuf,
        /// The user's message (the trigger item's `chatInput`).
        #[arg(long, value_name = "TEXT")]
        message: String,
        /// The conversation's session id (the trigger item's `sessionId`).
        #[arg(long, value_name = "ID", default_value = "cli")]
        session: String,
        /// After the answer, print the run log (n8n's runData shape) as JSON.
        #[arg(long)]
        log: bool,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
    #[cfg(feature = "n8n")]
    /// Write an n8n community node package of this program's nodes (see the guide runtime/docs/n8n.md).
    Package {
        /// The folder to write.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The npm package name: `n8n-nodes-…` or `@scope/n8n-nodes-…` (the only names n8n installs).
        #[arg(long, value_name = "NAME", default_value = "n8n-nodes-nodekit")]
        name: String,
        /// The package version.
        #[arg(long, value_name = "VERSION", default_value = env!("CARGO_PKG_VERSION"))]
        version: String,
        /// Package only this node (repeat for more); default: every node of this program that can run in n8n.
        #[arg(long, value_name = "NODE")]
        node: Vec<String>,
        /// Package nodekit's built-in nodes too (without `--node`). Left out by default: every nodekit package would define them.
        #[arg(long)]
        builtins: bool,
        /// Add this program built for another platform (e.g. linux-arm64, read from the file); repeat for more. One for this program's own platform is packaged in its place.
        #[arg(long, value_name = "PROGRAM")]
        binary: Vec<PathBuf>,
    },
    #[cfg(feature = "n8n")]
    /// Serve the n8n package's shims: JSON requests on standard input, one answer per line on standard output.
    Bridge,
    #[cfg(feature = "_vector-store")]
    /// Index a folder's text and Markdown files into a vector store: split, embed, insert.
    ///
    /// Each file's chunks replace those an earlier run indexed from it
    /// (metadata `source`: its path under the folder). A file that is not
    /// UTF-8 is reported and skipped; the command then fails after
    /// indexing the others. Prints a summary as JSON.
    Index {
        /// The folder.
        dir: PathBuf,
        #[command(flatten)]
        store: vectors::StoreArgs,
        #[command(flatten)]
        split: vectors::SplitArgs,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
    #[cfg(feature = "_vector-store")]
    /// Search a vector store; prints the documents found and their scores as JSON.
    Query {
        /// What to search for.
        text: String,
        /// How many documents.
        #[arg(short, long, value_name = "N", default_value_t = 4)]
        k: usize,
        /// A metadata filter (LangChain's form, e.g. `{"source": "a.md"}`): JSON text, `@FILE`, or `-`.
        #[arg(long, value_name = "JSON")]
        filter: Option<String>,
        #[command(flatten)]
        store: vectors::StoreArgs,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
    #[cfg(feature = "mcp-server")]
    /// Serve a workflow's tools over the Model Context Protocol (`nodekit mcp serve --help`).
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    #[cfg(feature = "serve")]
    /// Serve a workflow's agent as a chat service over HTTP: n8n's chat protocol at its Chat Trigger's path (with the hosted page when public), an OpenAI-compatible /v1/chat/completions, and /healthz.
    Serve(serve::ServeArgs),
    #[cfg(feature = "agent")]
    /// Chat with a workflow: each line you type is one message; an empty line or end of input quits.
    Chat {
        /// The workflow JSON file.
        workflow: PathBuf,
        /// The conversation's session id.
        #[arg(long, value_name = "ID", default_value = "cli")]
        session: String,
        #[command(flatten)]
        credentials: CredentialArgs,
    },
}

/// What `nodekit memory` does.
#[cfg(feature = "_agent-memory")]
#[derive(Subcommand, Debug)]
enum MemoryCommand {
    /// List a resource's threads.
    Threads {
        /// The resource (user) id.
        #[arg(long, value_name = "ID")]
        resource: String,
    },
    /// Print the context assembled for a request, part by part with token counts.
    Context {
        /// The resource (user) id.
        #[arg(long, value_name = "ID")]
        resource: String,
        /// The thread id.
        #[arg(long, value_name = "ID")]
        thread: String,
        /// The new user message.
        #[arg(long, value_name = "TEXT")]
        input: Option<String>,
    },
    /// Print a thread (messages, plan, observations, events) as JSON.
    Export {
        /// The resource (user) id.
        #[arg(long, value_name = "ID")]
        resource: String,
        /// The thread id.
        #[arg(long, value_name = "ID")]
        thread: String,
    },
    /// Import a thread exported with `export`: JSON text, `@FILE`, or `-`.
    Import {
        /// The resource (user) id that will own the thread.
        #[arg(long, value_name = "ID")]
        resource: String,
        /// The export.
        export: String,
    },
}

/// Where credentials come from.
#[derive(clap::Args, Debug)]
struct CredentialArgs {
    /// JSON file of credentials by type, e.g. `{"openAiApi": {"apiKey": "...", "url": "http://127.0.0.1:8080/v1"}}`.
    /// Also read from `NODEKIT_CREDENTIALS_FILE`, or as JSON text from `NODEKIT_CREDENTIALS`;
    /// `OPENAI_API_KEY` and `OPENAI_BASE_URL` fill `openAiApi` when it is missing.
    #[arg(long, value_name = "FILE")]
    credentials: Option<PathBuf>,
}

/// Why a command failed.
#[derive(Debug)]
enum CliError {
    /// What went wrong, for standard error.
    Failed(String),
    /// Standard output could not be written.
    Output(io::Error),
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Failed(message)
    }
}

/// Sends the runtime's log (`tracing`) to standard error: warnings and
/// errors, or the level `NODEKIT_LOG` names (`off`, `error`, `warn`,
/// `info`, `debug`, `trace`). A program that set up its own log keeps it.
fn init_log() {
    let level = std::env::var("NODEKIT_LOG")
        .ok()
        .and_then(|level| level.trim().parse().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN);
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Exit status of a program whose reader went away: 128 + `SIGPIPE`.
const BROKEN_PIPE_EXIT: u8 = 141;

/// Runs the command line of this program.
pub fn main() -> ExitCode {
    init_log();
    let parsed = Cli::command()
        .name(program())
        .bin_name(program())
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result: Result<Option<String>, CliError> = match cli.command {
        #[cfg(feature = "agent")]
        Command::Run {
            workflow,
            message,
            session,
            log,
            credentials,
        } => workflow_command(
            |runtime, wf, creds| runtime.block_on(run_workflow(wf, creds, &message, &session, log)),
            &workflow,
            &credentials,
        ),
        #[cfg(feature = "agent")]
        Command::Chat {
            workflow,
            session,
            credentials,
        } => workflow_command(
            |runtime, wf, creds| runtime.block_on(chat(wf, creds, &session)),
            &workflow,
            &credentials,
        ),
        Command::ToolCall {
            node,
            params,
            args,
            node_version,
            credentials,
        } => tool_call(&node, &params, &args, node_version, &credentials).map_err(CliError::Failed),
        #[cfg(feature = "_agent-memory")]
        Command::Memory { command, db } => memory(command, db).map_err(CliError::Failed),
        #[cfg(feature = "n8n")]
        Command::Bridge => bridge(),
        Command::New(args) => new::run(args).map_err(CliError::Failed),
        #[cfg(feature = "mcp-server")]
        Command::Mcp { command } => mcp::run(command),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(args),
        #[cfg(feature = "_vector-store")]
        Command::Index {
            dir,
            store,
            split,
            credentials,
        } => load_credentials(&credentials)
            .map_err(CliError::Failed)
            .and_then(|creds| {
                async_runtime()?.block_on(vectors::index(&dir, &store, &split, &creds))
            }),
        #[cfg(feature = "_vector-store")]
        Command::Query {
            text,
            k,
            filter,
            store,
            credentials,
        } => load_credentials(&credentials)
            .and_then(|creds| {
                let filter = filter.map(|f| read_json(&f, "--filter")).transpose()?;
                async_runtime()?.block_on(vectors::query(&text, k, filter, &store, &creds))
            })
            .map_err(CliError::Failed),
        other => run(other).map_err(CliError::Failed),
    };
    let result = result.and_then(|output| match output {
        Some(text) => write_stdout(&format!("{text}\n")).map_err(CliError::Output),
        None => Ok(()),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`nodekit catalog | head`): nobody is left to tell.
        Err(CliError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::from(BROKEN_PIPE_EXIT)
        }
        Err(CliError::Output(e)) => {
            say!("cannot write to standard output: {e}");
            ExitCode::FAILURE
        }
        Err(CliError::Failed(message)) => {
            say!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `text` to standard output and flushes it. Everything the
/// command prints goes through here, so that a write that fails is an
/// error `main` can answer, never the panic of `print!`.
pub(crate) fn write_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Reports a command line clap refused, as clap does, but with each line
/// cut short: an unknown option or a bad value is quoted back, and it can
/// be a whole pasted document.
fn usage_error(e: clap::Error) -> ExitCode {
    let text = e.to_string();
    if !e.use_stderr() || text.lines().all(|l| l.chars().nth(QUOTE_MAX).is_none()) {
        e.exit()
    }
    for line in text.lines() {
        eprintln!("{}", shorten(line, QUOTE_MAX));
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// A path the user gave, cut short for a message.
fn shown(path: &Path) -> String {
    shorten(&path.display().to_string(), QUOTE_MAX)
}

/// Supplies tool node `node` with `params`, calls it once with `args`, and returns its answer.
fn tool_call(
    node: &str,
    params: &str,
    args: &str,
    version: Option<f64>,
    credentials: &CredentialArgs,
) -> Result<Option<String>, String> {
    let entry = Catalog::global().find(node).map_err(|e| e.to_string())?;
    let name = &entry.description.defaults.name;
    let params = read_json(params, "--params")?;
    let args = read_json(args, "--args")?;
    let credentials = load_credentials(credentials)?;
    let answer = async_runtime()?.block_on(async move {
        let tools = entry
            .tools(name, &params, version, credentials)
            .await
            .map_err(|e| e.to_string())?;
        match tools.as_slice() {
            [tool] => tool.call(args).await.map_err(|e| e.to_string()),
            _ => Err(format!(
                "node `{}` supplies {} tools; tool-call calls a node that supplies one",
                entry.full_name(),
                tools.len()
            )),
        }
    })?;
    Ok(Some(pretty(&answer)))
}

/// Runs a `nodekit memory` command.
#[cfg(feature = "_agent-memory")]
fn memory(command: MemoryCommand, db: Option<PathBuf>) -> Result<Option<String>, String> {
    use nodekit::agent_memory::{self, MemoryConfig};
    let mut config = MemoryConfig::from_env().map_err(|e| e.to_string())?;
    if let Some(path) = db {
        config = config.sqlite(path.to_string_lossy());
    }
    let export = match &command {
        MemoryCommand::Import { export, .. } => Some(read_json(export, "the export")?),
        _ => None,
    };
    async_runtime()?.block_on(async move {
        let store = agent_memory::open(&config)
            .await
            .map_err(|e| e.to_string())?;
        let out = match command {
            MemoryCommand::Threads { resource } => {
                serde_json::to_value(store.threads(&resource).await.map_err(|e| e.to_string())?)
                    .expect("threads serialise")
            }
            MemoryCommand::Context {
                resource,
                thread,
                input,
            } => {
                let ctx =
                    agent_memory::assemble(&store, &config, &resource, &thread, input.as_deref())
                        .await
                        .map_err(|e| e.to_string())?;
                serde_json::to_value(ctx).expect("a context serialises")
            }
            MemoryCommand::Export { resource, thread } => store
                .export_thread(&resource, &thread)
                .await
                .map_err(|e| e.to_string())?,
            MemoryCommand::Import { resource, .. } => {
                let export = export.expect("read above");
                serde_json::to_value(
                    store
                        .import_thread(&resource, export)
                        .await
                        .map_err(|e| e.to_string())?,
                )
                .expect("a thread serialises")
            }
        };
        store.close().await;
        Ok(Some(pretty(&out)))
    })
}

/// Serves the n8n shims until standard input closes.
#[cfg(feature = "n8n")]
fn bridge() -> Result<Option<String>, CliError> {
    let catalog = Catalog::global();
    catalog.check_unique().map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let served = runtime.block_on(nodekit::n8n::bridge::Bridge::new(catalog).serve_stdio());
    // Calls cut off by the end of input must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match served {
        Ok(()) => Ok(None),
        // Only the answers' writer meets a broken pipe: n8n stopped reading.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(CliError::Output(e)),
        Err(e) => Err(format!("the bridge stopped: {e}").into()),
    }
}

/// `IP:PORT`, or a port alone on 127.0.0.1.
#[cfg(any(feature = "mcp-server", feature = "serve"))]
fn http_address(text: &str) -> Result<std::net::SocketAddr, String> {
    match text.parse::<u16>() {
        Ok(port) => Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => text
            .parse()
            .map_err(|_| "expected IP:PORT (e.g. 127.0.0.1:8808) or a port".to_owned()),
    }
}

/// A secret read from the environment variable `var` that `flag` names.
#[cfg(any(feature = "mcp-server", feature = "serve"))]
fn secret_from_env(flag: &str, var: &str) -> Result<String, String> {
    match std::env::var(var) {
        Ok(secret) if !secret.is_empty() => Ok(secret),
        Ok(_) => Err(format!("{flag}: the environment variable {var} is empty")),
        Err(_) => Err(format!("{flag}: the environment variable {var} is not set")),
    }
}

/// Gives the SQL statements of calls cut off at a server's end up to 2 s
/// to be cancelled on their PostgreSQL servers.
#[cfg(any(feature = "mcp-server", feature = "serve"))]
async fn settle() {
    #[cfg(feature = "sql-tools-postgres")]
    nodekit::sql::settle(std::time::Duration::from_secs(2)).await;
}

/// SIGINT (Ctrl-C) or SIGTERM.
#[cfg(any(feature = "mcp-server", feature = "serve"))]
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

fn async_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Loads the workflow and credentials, then runs `work` on a Tokio runtime.
#[cfg(feature = "agent")]
fn workflow_command(
    work: impl FnOnce(&tokio::runtime::Runtime, Workflow, Arc<Credentials>) -> Result<(), CliError>,
    path: &Path,
    credentials: &CredentialArgs,
) -> Result<Option<String>, CliError> {
    let (workflow, credentials) = load_workflow(path, credentials)?;
    work(&async_runtime()?, workflow, credentials)?;
    Ok(None)
}

/// The workflow file at `path` and the credentials of the command line.
#[cfg(feature = "agent")]
fn load_workflow(
    path: &Path,
    credentials: &CredentialArgs,
) -> Result<(Workflow, Arc<Credentials>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read workflow {}: {e}", shown(path)))?;
    let workflow = Workflow::from_json(&text).map_err(|e| e.to_string())?;
    Ok((workflow, Arc::new(load_credentials(credentials)?)))
}

fn load_credentials(args: &CredentialArgs) -> Result<Credentials, String> {
    let file = args
        .credentials
        .clone()
        .or_else(|| std::env::var_os("NODEKIT_CREDENTIALS_FILE").map(PathBuf::from));
    let mut credentials: Credentials = match (file, std::env::var("NODEKIT_CREDENTIALS")) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read credentials {}: {e}", shown(&path)))?;
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "credentials file {} is not a JSON object of credentials by type: {}",
                    shown(&path),
                    shorten(&e.to_string(), QUOTE_MAX)
                )
            })?
        }
        (None, Ok(text)) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "NODEKIT_CREDENTIALS is not a JSON object of credentials by type: {}",
                shorten(&e.to_string(), QUOTE_MAX)
            )
        })?,
        (None, Err(_)) => Credentials::new(),
    };
    if !credentials.contains_key("openAiApi")
        && let Ok(key) = std::env::var("OPENAI_API_KEY")
    {
        let mut openai = serde_json::json!({"apiKey": key});
        if let Ok(url) = std::env::var("OPENAI_BASE_URL") {
            openai["url"] = Value::String(url);
        }
        credentials.insert("openAiApi".into(), openai);
    }
    Ok(credentials)
}

/// Runs the workflow on one message; the answer streams to stdout, tool calls to stderr.
#[cfg(feature = "agent")]
async fn run_once(
    workflow: &Workflow,
    credentials: Arc<Credentials>,
    message: &str,
    session: &str,
) -> Result<RunResult, CliError> {
    let (tx, mut rx) = EventSender::channel();
    let mut printer = tokio::spawn(async move {
        let mut printed = false;
        while let Some(event) = rx.recv().await {
            match event {
                AgentEvent::TextDelta { text } => {
                    printed = true;
                    write_stdout(&text)?;
                }
                AgentEvent::ToolCall { name, args, .. } => eprintln!("[tool {name} {args}]"),
                AgentEvent::ToolResult {
                    name,
                    output,
                    error,
                    ..
                } => {
                    let mark = if error { "failed" } else { "answered" };
                    eprintln!(
                        "[tool {name} {mark}: {}]",
                        output.chars().take(200).collect::<String>()
                    );
                }
                // Events added later print nothing here.
                _ => {}
            }
        }
        Ok::<bool, io::Error>(printed)
    });
    let options = RunOptions {
        input: serde_json::json!({"chatInput": message, "sessionId": session, "action": "sendMessage"}),
        credentials,
        events: Some(tx),
        ..RunOptions::default()
    };
    let mut run = std::pin::pin!(workflow.run(Catalog::global(), options));
    let (result, printed) = tokio::select! {
        result = &mut run => (result, printer.await),
        printed = &mut printer => match printed {
            // Nobody reads the answer any more: the run is dropped (cancelled)
            // rather than paid for to its end.
            Ok(Err(e)) => return Err(CliError::Output(e)),
            printed => (run.await, printed),
        },
    };
    // A printer that panicked (its panic is on stderr) printed nothing we know of.
    let printed = printed.unwrap_or(Ok(false)).map_err(CliError::Output)?;
    let result = result.map_err(|e| e.to_string())?;
    let mut text = String::new();
    if !printed {
        for item in &result.items {
            match item.get("output") {
                Some(Value::String(s)) => text.push_str(s),
                Some(v) => text.push_str(&pretty(v)),
                None => text.push_str(&pretty(item)),
            }
        }
    }
    text.push('\n');
    write_stdout(&text).map_err(CliError::Output)?;
    Ok(result)
}

#[cfg(feature = "agent")]
async fn run_workflow(
    workflow: Workflow,
    credentials: Arc<Credentials>,
    message: &str,
    session: &str,
    log: bool,
) -> Result<(), CliError> {
    let result = run_once(&workflow, credentials, message, session).await?;
    // Standard output holds the answer alone, so that it can be piped.
    if log {
        eprintln!("{}", pretty(&result.log.to_run_data()));
    }
    Ok(())
}

#[cfg(feature = "agent")]
async fn chat(
    workflow: Workflow,
    credentials: Arc<Credentials>,
    session: &str,
) -> Result<(), CliError> {
    let stdin = std::io::stdin();
    loop {
        eprint!("> ");
        let mut line = String::new();
        if stdin
            .read_line(&mut line)
            .map_err(|e| format!("cannot read standard input: {e}"))?
            == 0
        {
            return Ok(());
        }
        let message = line.trim();
        if message.is_empty() {
            return Ok(());
        }
        match run_once(&workflow, credentials.clone(), message, session).await {
            Ok(_) => {}
            // One message failing leaves the conversation open.
            Err(CliError::Failed(e)) => say!("{e}"),
            Err(output) => return Err(output),
        }
    }
}

/// Runs one command; `Some(text)` is printed on standard output.
fn run(command: Command) -> Result<Option<String>, String> {
    let catalog = Catalog::global();
    catalog.check_unique().map_err(|e| e.to_string())?;
    match command {
        Command::Catalog { out } => {
            let text = pretty(&catalog.to_nodes_json());
            match out {
                Some(path) => {
                    std::fs::write(&path, text + "\n")
                        .map_err(|e| format!("cannot write {}: {e}", shown(&path)))?;
                    Ok(None)
                }
                None => Ok(Some(text)),
            }
        }
        Command::Describe { node } => {
            let entry = catalog.find(&node).map_err(|e| e.to_string())?;
            Ok(Some(pretty(&entry.to_json())))
        }
        Command::ToolSchema {
            node,
            params,
            name,
            node_version,
        } => {
            let entry = catalog.find(&node).map_err(|e| e.to_string())?;
            let params = read_json(&params, "--params")?;
            let description = entry.description;
            let name = match name {
                Some(name) if name.trim().is_empty() => {
                    return Err(
                        "--name is empty: give the node's name in the workflow (the tool's name is made from it), or leave --name out".into(),
                    );
                }
                Some(name) => name,
                None => description.defaults.name.clone(),
            };
            let version = node_version.unwrap_or_else(|| description.version_for_new_nodes());
            if !description.version.all().contains(&version) {
                let versions: Vec<String> = description
                    .version
                    .all()
                    .into_iter()
                    .map(|v| nodekit::description::number_to_json(v).to_string())
                    .collect();
                return Err(format!(
                    "node `{}` has no version {version}; its versions: {}",
                    entry.full_name(),
                    versions.join(", ")
                ));
            }
            let tool = NodeTool::with_version(description, &name, &params, version)
                .map_err(|e| e.to_string())?;
            Ok(Some(pretty(&tool.definition().to_openai())))
        }
        #[cfg(feature = "n8n")]
        Command::Package {
            out,
            name,
            version,
            node,
            builtins,
            binary,
        } => {
            let program = std::env::current_exe()
                .map_err(|e| format!("cannot find this program's file: {e}"))?;
            let options = nodekit::n8n::package::PackageOptions {
                out,
                name,
                version,
                program,
                binaries: binary,
                nodes: node,
                builtins,
            };
            let report =
                nodekit::n8n::package::write(catalog, &options).map_err(|e| e.to_string())?;
            // One line a reason: a program links every built-in node.
            let mut skipped: Vec<(&str, Vec<&str>)> = Vec::new();
            for (node, why) in &report.skipped {
                match skipped.iter_mut().find(|(w, _)| *w == why.as_str()) {
                    Some((_, nodes)) => nodes.push(node),
                    None => skipped.push((why, vec![node])),
                }
            }
            for (why, nodes) in skipped {
                let shown: Vec<&str> = nodes.iter().take(3).copied().collect();
                let more = nodes.len().saturating_sub(shown.len());
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                say!(
                    "left out {} node(s), {}{more}: {why}",
                    nodes.len(),
                    shown.join(", ")
                );
            }
            if cfg!(debug_assertions) {
                say!(
                    "warning: this program is a debug build (large and slow): package the release build (cargo build --release)"
                );
            }
            for warning in &report.warnings {
                say!("warning: {warning}");
            }
            Ok(Some(pretty(
                &serde_json::to_value(&report).expect("a report serialises"),
            )))
        }
        Command::FromAi { params } => {
            let params = read_json(&params, "--params")?;
            let calls = from_ai::collect_calls(&params).map_err(|e| e.to_string())?;
            Ok(Some(pretty(&from_ai::arguments_schema(&calls))))
        }
        _ => unreachable!("handled in main"),
    }
}

pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values always serialise")
}

/// Reads JSON given inline, as `@FILE`, or as `-` (standard input).
fn read_json(arg: &str, what: &str) -> Result<Value, String> {
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read {what} from standard input: {e}"))?;
        s
    } else if let Some(path) = arg.strip_prefix('@') {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {what} file {}: {e}", shorten(path, QUOTE_MAX)))?
    } else {
        arg.to_owned()
    };
    serde_json::from_str(&text).map_err(|e| {
        nodekit::Error::Json {
            what: what.to_owned(),
            source: e,
        }
        .to_string()
    })
}
