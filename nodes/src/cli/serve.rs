//! `nodekit serve`: a workflow's agent as a chat service over HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use nodekit::Catalog;
use nodekit::serve::{ChatBundleIntegrity, ChatServer, ServeOptions};

use super::{CliError, CredentialArgs};

/// The arguments of `nodekit serve`.
#[derive(clap::Args, Debug)]
pub(super) struct ServeArgs {
    /// The workflow JSON file.
    workflow: PathBuf,
    /// Where to listen: `IP:PORT`, or a port alone for 127.0.0.1.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", value_parser = super::http_address)]
    addr: SocketAddr,
    /// Where the hosted chat page loads n8n's chat widget from: the `dist` folder of the `@n8n/chat` npm package.
    #[arg(long, value_name = "URL", default_value_t = ServeOptions::default().chat_bundle_url)]
    chat_bundle_url: String,
    /// The Subresource Integrity hashes the browser checks the widget's files against, `SCRIPT,STYLE` (of `chat.bundle.umd.js` and `style.css`), or `none`; by default those of the version tested, wherever it is served from.
    #[arg(long, value_name = "HASHES", value_parser = integrity)]
    chat_bundle_integrity: Option<Integrity>,
    /// Require `Authorization: Bearer <key>` on /v1/*, the key read from this environment variable.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Messages answered at once; more get 429.
    #[arg(long, value_name = "N", default_value_t = ServeOptions::default().max_concurrent_runs)]
    max_runs: usize,
    /// The longest chat message, in characters; longer ones get 413.
    #[arg(long, value_name = "N", default_value_t = ServeOptions::default().max_message_chars)]
    max_message_chars: usize,
    /// How long a stop (SIGINT, SIGTERM) waits for the answers in flight, in seconds; a streamed answer still running then ends with an error item.
    #[arg(long, value_name = "SECONDS", default_value_t = ServeOptions::default().shutdown_grace.as_secs_f64())]
    shutdown_grace: f64,
    /// Let the OpenAI endpoint and the chat path share sessions: a `/v1` session named `x` is then the chat's session `x` (by default they are apart, so the chat path, which the API key does not guard, cannot reach a `/v1` conversation).
    #[arg(long)]
    shared_sessions: bool,
    /// Serve requests whose `Host` header is this name (or `name:port`) too; repeat for more. Loopback names and the address served on are always served.
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
    #[command(flatten)]
    credentials: CredentialArgs,
}

/// What `--chat-bundle-integrity` says: hashes, or none.
#[derive(Clone, Debug)]
struct Integrity(Option<ChatBundleIntegrity>);

fn integrity(text: &str) -> Result<Integrity, String> {
    if text == "none" {
        return Ok(Integrity(None));
    }
    let hashed = |hash: &str| {
        let hash = hash.trim();
        ["sha256-", "sha384-", "sha512-"]
            .iter()
            .any(|p| hash.len() > p.len() && hash.starts_with(p))
            .then(|| hash.to_owned().into())
    };
    match text.split_once(',') {
        Some((script, style)) => match (hashed(script), hashed(style)) {
            (Some(script), Some(style)) => {
                Ok(Integrity(Some(ChatBundleIntegrity { script, style })))
            }
            _ => Err("each hash starts with sha256-, sha384- or sha512-".into()),
        },
        None => Err("give two hashes, SCRIPT,STYLE, or none".into()),
    }
}

/// Runs `nodekit serve` until SIGINT or SIGTERM, then lets the messages in
/// flight be answered.
pub(super) fn run(args: ServeArgs) -> Result<Option<String>, CliError> {
    let (workflow, credentials) = super::load_workflow(&args.workflow, &args.credentials)?;
    let mut allowed_hosts = ServeOptions::default().allowed_hosts;
    allowed_hosts.extend(args.allow_host);
    let options = ServeOptions {
        allowed_hosts,
        shared_sessions: args.shared_sessions,
        shutdown_grace: Duration::try_from_secs_f64(args.shutdown_grace).map_err(|_| {
            format!(
                "--shutdown-grace must be a number of seconds, not {}",
                args.shutdown_grace
            )
        })?,
        chat_bundle_url: args.chat_bundle_url,
        chat_bundle_integrity: match args.chat_bundle_integrity {
            None => Some(ChatBundleIntegrity::TESTED),
            Some(Integrity(hashes)) => hashes,
        },
        api_key: args
            .api_key_env
            .as_deref()
            .map(|var| super::secret_from_env("--api-key-env", var))
            .transpose()?,
        max_concurrent_runs: args.max_runs,
        max_message_chars: args.max_message_chars,
        ..ServeOptions::default()
    };
    let server = ChatServer::new(workflow, Catalog::global(), credentials, options)
        .map_err(|e| e.to_string())?;
    super::async_runtime()?.block_on(async move {
        let listener = nodekit::serve::bind(&args.addr.to_string())
            .await
            .map_err(|e| e.to_string())?;
        let local = listener
            .local_addr()
            .map_err(|e| format!("cannot read the address served on: {e}"))?;
        match server.chat_trigger() {
            Some(t) if t.public => say!("chat at http://{local}{}", t.path()),
            Some(t) => say!("warning: the Chat Trigger `{}` is not public, so its chat path answers 404 (as in n8n); turn on \"Make Chat Publicly Available\"",
                t.node
            ),
            None => say!("the workflow has no Chat Trigger: only the OpenAI endpoint is served"),
        }
        say!("OpenAI-compatible endpoint at http://{local}/v1/chat/completions");
        server
            .serve(listener, super::stop_signal())
            .await
            .map_err(|e| e.to_string())?;
        // Statements of runs cut off at the end are cancelled on their servers.
        super::settle().await;
        say!("stopped");
        Ok(None)
    })
}
