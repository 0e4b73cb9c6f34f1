//! A workflow's agent as a chat service over HTTP, what `nodekit serve`
//! runs:
//!
//! - **n8n's chat protocol** at the Chat Trigger's path,
//!   `/webhook/<webhookId>/chat`, so that n8n's `@n8n/chat` widget works
//!   unchanged: `sendMessage` (one JSON answer, or newline-delimited JSON
//!   chunks when the trigger streams), `loadPreviousSession` (the messages
//!   the connected memory holds), and the hosted chat page on `GET` when
//!   the trigger is public in hosted mode;
//! - **an OpenAI-compatible** `POST /v1/chat/completions`, streaming (SSE)
//!   or not, and `GET /v1/models`;
//! - `GET /healthz`.
//!
//! Each message is one run of the workflow with the trigger's item
//! (`{"action", "sessionId", "chatInput"}`). The server keeps no session
//! state: a conversation lives in the workflow's memory, so servers that
//! share a memory store serve the same conversations. Runs share one set
//! of database pools.
//!
//! ```no_run
//! # async fn serve() -> nodekit::Result<()> {
//! use std::sync::Arc;
//! use nodekit::prelude::*;
//! use nodekit::serve::{ChatServer, ServeOptions};
//! use nodekit::workflow::Workflow;
//!
//! let workflow = Workflow::from_json(&std::fs::read_to_string("agent.json").unwrap())?;
//! let server = ChatServer::new(workflow, Catalog::global(), Arc::default(), ServeOptions::default())?;
//! let listener = nodekit::serve::bind("127.0.0.1:8080").await?;
//! server.serve(listener, std::future::pending()).await
//! # }
//! ```

mod chat;
mod error;
mod http;
mod openai;

pub use error::ServeError;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use self::http::{Body, json_error};
use nodekit_core::error::Result;
use nodekit_core::event::{AgentEvent, EventSender};
use nodekit_core::node::{Credentials, SharedPools};
use nodekit_core::registry::Catalog;
use nodekit_http_server::{LOOPBACK_HOSTS, Policy, RequestBody};
use nodekit_workflow::{ChatTrigger, RunOptions, RunResult, Workflow};

/// Limits and settings of a [`ChatServer`]; the defaults suit a server
/// behind a reverse proxy.
#[derive(Clone)]
pub struct ServeOptions {
    /// The largest request body: 1 MiB. Larger ones get 413.
    pub max_body_bytes: usize,
    /// The longest chat message, in characters: 32,000. Longer ones get 413.
    pub max_message_chars: usize,
    /// Runs at once: 64. A message beyond them gets 429 at once, not a wait.
    pub max_concurrent_runs: usize,
    /// Where the hosted page loads n8n's chat widget from: the `dist`
    /// folder of the `@n8n/chat` npm package (`chat.bundle.umd.js` and
    /// `style.css`). nodekit does not ship n8n's code. By default jsDelivr's
    /// copy of the version nodekit was tested with (n8n's own page loads
    /// the latest).
    pub chat_bundle_url: String,
    /// What the browser checks the widget's two files against before it
    /// uses them (Subresource Integrity), so that a changed copy at
    /// `chat_bundle_url` never runs: by default the files of the version
    /// tested ([`ChatBundleIntegrity::TESTED`]), wherever they are served
    /// from. Another version needs its own hashes, or `None`.
    pub chat_bundle_integrity: Option<ChatBundleIntegrity>,
    /// The key OpenAI clients must send (`Authorization: Bearer <key>`) to
    /// `/v1/*`; `None` serves them without one.
    pub api_key: Option<String>,
    /// How long a shutdown waits for the runs in flight: 30 s.
    pub shutdown_grace: Duration,
    /// Whether the OpenAI endpoint and the chat path share one set of
    /// sessions: off. Off, a session named through `/v1` (by `X-Session-Id`
    /// or `user`) is another conversation than the chat path's session of
    /// the same name, so the chat path, which `api_key` does not guard,
    /// cannot read or write a `/v1` conversation.
    pub shared_sessions: bool,
    /// The `Host` headers served, as names (any port) or `name:port`: a
    /// guard against DNS rebinding. By default the loopback names
    /// `localhost`, `127.0.0.1` and `::1`; the address the server listens
    /// on is always added. Add the names clients use to reach it.
    pub allowed_hosts: Vec<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_body_bytes: 1 << 20,
            max_message_chars: 32_000,
            max_concurrent_runs: 64,
            chat_bundle_url: "https://cdn.jsdelivr.net/npm/@n8n/chat@1.37.0/dist".into(),
            chat_bundle_integrity: Some(ChatBundleIntegrity::TESTED),
            api_key: None,
            shutdown_grace: Duration::from_secs(30),
            shared_sessions: false,
            allowed_hosts: LOOPBACK_HOSTS.map(String::from).to_vec(),
        }
    }
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret: only whether there is one is shown.
        f.debug_struct("ServeOptions")
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_message_chars", &self.max_message_chars)
            .field("max_concurrent_runs", &self.max_concurrent_runs)
            .field("chat_bundle_url", &self.chat_bundle_url)
            .field("chat_bundle_integrity", &self.chat_bundle_integrity)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("shutdown_grace", &self.shutdown_grace)
            .field("shared_sessions", &self.shared_sessions)
            .field("allowed_hosts", &self.allowed_hosts)
            .finish()
    }
}

/// The Subresource Integrity hashes (`sha384-…`) of the chat widget's
/// files, which the hosted page puts on the elements that load them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatBundleIntegrity {
    /// The hash of `chat.bundle.umd.js`.
    pub script: std::borrow::Cow<'static, str>,
    /// The hash of `style.css`.
    pub style: std::borrow::Cow<'static, str>,
}

impl ChatBundleIntegrity {
    /// The files of `@n8n/chat` 1.37.0, the version nodekit was tested with.
    pub const TESTED: ChatBundleIntegrity = ChatBundleIntegrity {
        script: std::borrow::Cow::Borrowed(
            "sha384-5h9gxAqGiFQnon4z5tQS8OCN8QZg5l5V92RFO2rM92BeKh7a2bBe2ejzuQm0IMe9",
        ),
        style: std::borrow::Cow::Borrowed(
            "sha384-mphUVusnQftVSQXYvGPHxPB4tX7zUoKTUaf5BP59Yk9ErrJ5240/kFIKxaSwH4wx",
        ),
    };
}

/// The longest session id accepted.
pub const MAX_SESSION_ID_CHARS: usize = 200;

/// A workflow served over HTTP. Cheap to clone.
#[derive(Clone)]
pub struct ChatServer {
    inner: Arc<Inner>,
}

struct Inner {
    workflow: Workflow,
    catalog: &'static Catalog,
    credentials: Arc<Credentials>,
    pools: SharedPools,
    trigger: Option<ChatTrigger>,
    /// The trigger's path, `/webhook/<id>/chat`.
    chat_path: Option<String>,
    /// `user:password` of the trigger's basic authentication.
    basic_auth: Option<Vec<u8>>,
    /// The node whose streamed text the chunks carry: `(id, name)`.
    streaming_node: (String, String),
    options: ServeOptions,
    runs: Arc<Semaphore>,
    /// Fires shortly before a shutdown's grace period runs out: streamed
    /// answers still running then end with an error item.
    stopping: tokio_util::sync::CancellationToken,
}

impl ChatServer {
    /// A server for `workflow`, whose nodes come from `catalog` and use
    /// `credentials` (by type). Fails when the workflow cannot be served:
    /// a Chat Trigger setting nodekit does not support, basic
    /// authentication without an `httpBasicAuth` credential, no node to run.
    pub fn new(
        workflow: Workflow,
        catalog: &'static Catalog,
        credentials: Arc<Credentials>,
        options: ServeOptions,
    ) -> Result<ChatServer> {
        let trigger = workflow.chat_trigger()?;
        let basic_auth = match &trigger {
            Some(t) if t.basic_auth => Some(basic_credential(&credentials)?),
            _ => None,
        };
        if options.api_key.as_deref() == Some("") {
            return Err(ServeError::Setup {
                problem: "the API key is empty".into(),
            }
            .into());
        }
        let streaming_node = streaming_node(&workflow, trigger.as_ref()).ok_or_else(|| {
            ServeError::NothingToServe {
                workflow: workflow.name.clone(),
            }
        })?;
        let runs = Arc::new(Semaphore::new(options.max_concurrent_runs.max(1)));
        Ok(ChatServer {
            inner: Arc::new(Inner {
                workflow,
                catalog,
                credentials,
                pools: SharedPools::default(),
                chat_path: trigger.as_ref().map(ChatTrigger::path),
                trigger,
                basic_auth,
                streaming_node,
                options,
                runs,
                stopping: tokio_util::sync::CancellationToken::new(),
            }),
        })
    }

    /// The workflow's Chat Trigger, if it has one.
    pub fn chat_trigger(&self) -> Option<&ChatTrigger> {
        self.inner.trigger.as_ref()
    }

    /// Serves on `listener` until `shutdown` completes, then stops
    /// accepting and lets the requests in flight finish (at most
    /// [`ServeOptions::shutdown_grace`]).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<()> {
        let mut allowed_hosts = self.inner.options.allowed_hosts.clone();
        if let Ok(addr) = listener.local_addr() {
            allowed_hosts.push(addr.ip().to_string());
        }
        let mut policy = Policy::new(&allowed_hosts);
        policy.any_host_paths = &["/healthz"];
        let grace = self.inner.options.shutdown_grace;
        let stopping = self.inner.stopping.clone();
        let shutdown = async move {
            shutdown.await;
            // The streams get the last part of the grace period to say so.
            let warning = grace.saturating_sub(Duration::from_secs(1)).max(grace / 2);
            tokio::spawn(async move {
                tokio::time::sleep(warning).await;
                stopping.cancel();
            });
        };
        let server = self;
        let handler: nodekit_http_server::Handler = Arc::new(move |request| {
            let server = server.clone();
            Box::pin(async move { server.answer(request).await })
        });
        nodekit_http_server::serve(
            listener, policy, handler, json_error, shutdown, grace, "serve",
        )
        .await;
        Ok(())
    }

    /// Answers one request.
    async fn answer(&self, request: Request<RequestBody>) -> Response<Body> {
        let path = request.uri().path().to_owned();
        if self.inner.chat_path.as_deref() == Some(path.as_str()) {
            return chat::answer(self, request).await;
        }
        match (request.method(), path.as_str()) {
            (&Method::GET, "/healthz") => {
                http::json(StatusCode::OK, &serde_json::json!({"status": "ok"}))
            }
            (_, "/v1/chat/completions" | "/v1/models") => openai::answer(self, request).await,
            _ => json_error(StatusCode::NOT_FOUND, &self.not_found(&path)),
        }
    }

    fn not_found(&self, path: &str) -> String {
        let chat = match &self.inner.chat_path {
            Some(path) => format!("{path}, "),
            None => String::new(),
        };
        format!(
            "nothing is served at {}: the paths are {chat}/v1/chat/completions and /healthz",
            nodekit_core::error::shorten(path, nodekit_core::error::QUOTE_MAX)
        )
    }

    /// The session id the workflow's memory is given for the OpenAI
    /// endpoint's session `id`. Unless sessions are shared, it gets the
    /// prefix `openai/`, which no id sent on the chat path can have (`/` is
    /// not allowed in one).
    fn openai_session(&self, id: &str) -> String {
        if self.inner.options.shared_sessions {
            id.to_owned()
        } else {
            format!("openai/{id}")
        }
    }

    /// A place among the runs, if one is free.
    fn run_permit(&self) -> Option<OwnedSemaphorePermit> {
        self.inner.runs.clone().try_acquire_owned().ok()
    }

    /// Why a message found no free place among the runs.
    fn busy_message(&self) -> String {
        format!(
            "too many messages at once: {} are being answered; retry shortly",
            self.inner.options.max_concurrent_runs
        )
    }

    /// Runs the workflow on one trigger item, handing each piece of the
    /// model's text to `text` as it comes. `None` when `text` says its
    /// reader went away (the run is then dropped, not paid for to its end);
    /// otherwise the run's result (an error when the server stopped first)
    /// and whether any text came.
    async fn run_streamed<F, Fut>(
        &self,
        input: Value,
        mut text: F,
    ) -> Option<(Result<RunResult>, bool)>
    where
        F: FnMut(String) -> Fut,
        Fut: Future<Output = bool>,
    {
        let (events, mut received) = EventSender::channel();
        let mut run = std::pin::pin!(self.run(input, Some(events)));
        let mut streamed = false;
        let result = loop {
            tokio::select! {
                result = &mut run => break result,
                () = self.inner.stopping.cancelled() => {
                    return Some((Err(ServeError::Stopping.into()), streamed));
                }
                Some(event) = received.recv() => {
                    if let AgentEvent::TextDelta { text: piece } = event {
                        streamed = true;
                        if !text(piece).await {
                            return None;
                        }
                    }
                }
            }
        };
        // Text sent just before the run's end, still in the channel.
        while let Ok(Some(event)) = tokio::time::timeout(Duration::ZERO, received.recv()).await {
            if let AgentEvent::TextDelta { text: piece } = event {
                streamed = true;
                if !text(piece).await {
                    return None;
                }
            }
        }
        Some((result, streamed))
    }

    /// Runs the workflow on one trigger item; a failure is logged here,
    /// whichever protocol then answers it.
    async fn run(&self, input: Value, events: Option<EventSender>) -> Result<RunResult> {
        let inner = &self.inner;
        let options = RunOptions {
            input,
            credentials: inner.credentials.clone(),
            events,
            pools: inner.pools.clone(),
        };
        let result = inner.workflow.run(inner.catalog, options).await;
        if let Err(e) = &result {
            tracing::warn!(error = %e, "serve: a run failed");
        }
        result
    }
}

/// The answer of the workflow's last node, as text.
fn output_text(item: Option<&Value>) -> String {
    match item {
        None => String::new(),
        Some(item) => match item.get("output") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => item.to_string(),
        },
    }
}

/// The `user:password` of the `httpBasicAuth` credential.
fn basic_credential(credentials: &Credentials) -> Result<Vec<u8>> {
    let missing = |problem: &str| ServeError::Setup {
        problem: format!(
            "the Chat Trigger uses basic authentication, but {problem}: give an `httpBasicAuth` credential with `user` and `password`"
        ),
    };
    let credential = credentials
        .get("httpBasicAuth")
        .ok_or_else(|| missing("there is no `httpBasicAuth` credential"))?;
    let field = |name: &str| credential.get(name).and_then(Value::as_str).unwrap_or("");
    let (user, password) = (field("user"), field("password"));
    if user.is_empty() || password.is_empty() {
        return Err(missing("its user or password is empty").into());
    }
    Ok(format!("{user}:{password}").into_bytes())
}

/// The node a streamed answer comes from: the first node after the
/// trigger (the agent), or the first root node of a workflow without one.
fn streaming_node(workflow: &Workflow, trigger: Option<&ChatTrigger>) -> Option<(String, String)> {
    let after_trigger = trigger.and_then(|t| {
        workflow.connections.get(&t.node)?["main"][0][0]["node"]
            .as_str()
            .map(str::to_owned)
    });
    let name = after_trigger.or_else(|| {
        workflow
            .nodes
            .iter()
            .find(|n| !n.disabled && !nodekit_workflow::is_trigger(&n.node_type))
            .map(|n| n.name.clone())
    })?;
    let id = workflow
        .nodes
        .iter()
        .find(|n| n.name == name)
        .map(|n| n.id.clone())
        .unwrap_or_default();
    Some((id, name))
}

/// Listens on `addr` (e.g. `127.0.0.1:8080`; port 0 picks a free one).
pub async fn bind(addr: &str) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| {
        ServeError::Listen {
            addr: nodekit_core::error::shorten(addr, nodekit_core::error::QUOTE_MAX),
            source,
        }
        .into()
    })
}

/// Why a session id is refused, if it is: 1 to [`MAX_SESSION_ID_CHARS`]
/// letters, digits and `-_.:@`.
pub fn check_session_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the session id is empty".into());
    }
    if id.chars().count() > MAX_SESSION_ID_CHARS {
        return Err(format!(
            "the session id is longer than {MAX_SESSION_ID_CHARS} characters"
        ));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.:@".contains(*c)))
    {
        return Err(format!(
            "the session id holds {c:?}: use letters, digits and `-_.:@`"
        ));
    }
    Ok(())
}
