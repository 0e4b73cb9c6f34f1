//! [`McpServer`] over Streamable HTTP: rmcp's service, served by hyper at
//! `/mcp`, behind a bearer token when one is set.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::McpError;
use crate::McpServer;
use nodekit_core::error::Result;
use nodekit_http_server::{Body, Policy, RequestBody};

/// The path the server answers on; every other path gets 404.
pub const MCP_PATH: &str = "/mcp";

/// How [`serve_http`] serves.
#[derive(Clone)]
pub struct HttpOptions {
    /// The token every request must carry as `Authorization: Bearer …`;
    /// `None` serves without one (fine on 127.0.0.1, not on a network).
    pub token: Option<String>,
    /// The `Host` headers accepted, as names or `name:port` (a guard
    /// against DNS rebinding). By default only loopback names:
    /// `localhost`, `127.0.0.1` and `::1`. Add the names clients use when
    /// listening on another address. It may not be empty.
    pub allowed_hosts: Vec<String>,
    /// The largest request body accepted; larger ones get 413.
    pub max_body_bytes: usize,
    /// Browser origins (`scheme://host[:port]`, `:*` for any port) whose
    /// pages may call the server, besides pages served from an allowed
    /// host. A request from any other origin, or `Origin: null`, gets 403.
    pub allowed_origins: Vec<String>,
    /// Sessions kept at once: 1,000 (about 50 KB each). A new session
    /// beyond them ends the one unused longest. A session unused for 10
    /// minutes ends too.
    pub max_sessions: usize,
}

/// The sessions [`HttpOptions`] keeps at once by default.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// The largest request body [`HttpOptions`] accepts by default: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            allowed_hosts: nodekit_http_server::LOOPBACK_HOSTS
                .map(String::from)
                .to_vec(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: only whether there is one is shown.
        f.debug_struct("HttpOptions")
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_sessions", &self.max_sessions)
            .finish()
    }
}

/// Listens on `addr` (e.g. `127.0.0.1:8808`; port 0 picks a free one) for [`serve_http`].
pub async fn bind(addr: &str) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| {
        McpError::Listen {
            addr: nodekit_core::error::shorten(addr, nodekit_core::error::QUOTE_MAX),
            source,
        }
        .into()
    })
}

/// Serves `server` over Streamable HTTP on `listener`, at [`MCP_PATH`],
/// until the task is dropped. Each client gets a session of its own.
pub async fn serve_http(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
) -> Result<()> {
    serve_http_until(server, listener, options, std::future::pending()).await
}

/// As [`serve_http`], until `shutdown` completes: then it stops taking
/// requests, ends every session, cancels the calls still running and waits
/// (up to 5 seconds) for them to stop before it returns.
pub async fn serve_http_until(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let expected = match &options.token {
        None => None,
        Some(token) if token.is_empty() => {
            return Err(McpError::Token {
                problem: "is empty".into(),
            }
            .into());
        }
        Some(token) if HeaderValue::from_str(token).is_err() => {
            return Err(McpError::Token {
                problem: "holds characters an HTTP header cannot carry".into(),
            }
            .into());
        }
        Some(token) => Some(Arc::<[u8]>::from(token.as_bytes())),
    };
    if options.allowed_hosts.is_empty() {
        // rmcp would read an empty list as "any host".
        return Err(nodekit_core::Error::InvalidSetting {
            name: "HttpOptions::allowed_hosts".into(),
            value: "[]".into(),
            expected: "at least one host name (an empty list would accept any Host header)".into(),
        });
    }
    // Sessions end with this function (when its future is dropped).
    let sessions = tokio_util::sync::CancellationToken::new();
    let _end_sessions = sessions.clone().drop_guard();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(allowed_origins(&options))
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(sessions.clone());
    let manager = Arc::new(CappedSessions::new(options.max_sessions, SESSION_IDLE));
    let service = StreamableHttpService::new(
        {
            let server = server.clone();
            move || Ok(server.clone())
        },
        manager.clone(),
        config,
    );
    let sweeper = tokio::spawn(async move {
        loop {
            tokio::time::sleep(SESSION_IDLE / 10).await;
            manager.close_expired().await;
        }
    });
    let _sweeper = AbortOnDrop(sweeper);
    let max_body_bytes = options.max_body_bytes;
    let handler: nodekit_http_server::Handler = Arc::new(move |request| {
        let service = service.clone();
        let expected = expected.clone();
        Box::pin(answer(service, expected, max_body_bytes, request))
    });
    let policy = Policy::new(&options.allowed_hosts);
    nodekit_http_server::serve(
        listener,
        policy,
        handler,
        refusal,
        shutdown,
        Duration::ZERO,
        "mcp",
    )
    .await;
    // Cancelled sessions drop their running calls; wait for them to stop,
    // so that a statement they ran is cancelled on its database too.
    sessions.cancel();
    server.calls_ended(Duration::from_secs(5)).await;
    Ok(())
}

/// The browser origins accepted: pages served from an allowed host (any
/// scheme and port) and [`HttpOptions::allowed_origins`]. Others, and
/// `Origin: null`, are refused, as the transport's specification asks.
fn allowed_origins(options: &HttpOptions) -> Vec<String> {
    let mut origins = options.allowed_origins.clone();
    for (name, port) in options
        .allowed_hosts
        .iter()
        .filter_map(|h| nodekit_http_server::split_authority(h))
    {
        let name = if name.contains(':') {
            format!("[{name}]")
        } else {
            name.to_owned()
        };
        let port = port.map_or("*".to_owned(), |p| p.to_string());
        origins.extend(["http", "https"].map(|scheme| format!("{scheme}://{name}:{port}")));
    }
    origins
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One request: the path, the token and the announced size, then rmcp.
async fn answer(
    service: StreamableHttpService<McpServer, CappedSessions>,
    expected: Option<Arc<[u8]>>,
    max_body_bytes: usize,
    request: Request<RequestBody>,
) -> Response<Body> {
    if request.uri().path() != MCP_PATH {
        return plain(
            StatusCode::NOT_FOUND,
            format!("not found: the MCP endpoint is {MCP_PATH}"),
        );
    }
    if let Some(expected) = &expected
        && !nodekit_http_server::bearer_matches(
            request
                .headers()
                .get(AUTHORIZATION)
                .map(HeaderValue::as_bytes),
            expected,
        )
    {
        let mut refused = plain(
            StatusCode::UNAUTHORIZED,
            "unauthorized: send the server's token as `Authorization: Bearer <token>`".into(),
        );
        refused
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    }
    // Refused before it is read; rmcp counts a body without a length as it reads.
    let length = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > max_body_bytes as u64) {
        return plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("payload too large: the limit is {max_body_bytes} bytes"),
        );
    }
    let method = request.method().clone();
    let json = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            t.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    let mut response = service.handle(request).await;
    match response.status() {
        // rmcp answers a closed session with 202; clients (the Python
        // SDK) expect 200 or 204 for a DELETE.
        StatusCode::ACCEPTED if method == hyper::Method::DELETE => {
            *response.status_mut() = StatusCode::OK;
        }
        // rmcp answers JSON it cannot read as a JSON-RPC message with 415,
        // which says the content type was wrong; it was not.
        StatusCode::UNSUPPORTED_MEDIA_TYPE if json => {
            response = nodekit_http_server::json_answer(
                StatusCode::BAD_REQUEST,
                &serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
                    "code": -32700,
                    "message": "parse error: the body is not a JSON-RPC message",
                }}),
            );
        }
        _ => {}
    }
    response
}

fn refusal(status: StatusCode, message: &str) -> Response<Body> {
    plain(status, message.to_owned())
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// How long a session may go unused before it ends (rmcp's default).
const SESSION_IDLE: Duration = Duration::from_secs(600);

/// rmcp's in-process sessions, at most `max` of them: a new session beyond
/// that ends the one unused longest. A session unused for `idle` ends and
/// its memory is freed (rmcp's own manager keeps the ended session's
/// entry until it is closed).
struct CappedSessions {
    inner: LocalSessionManager,
    used: std::sync::Mutex<HashMap<SessionId, Instant>>,
    max: usize,
    idle: Duration,
}

impl CappedSessions {
    fn new(max: usize, idle: Duration) -> CappedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        CappedSessions {
            inner,
            used: std::sync::Mutex::default(),
            max: max.max(1),
            idle,
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(at) = self.used().get_mut(id) {
            *at = Instant::now();
        }
    }

    /// Ends the sessions unused for longer than `idle`.
    async fn close_expired(&self) {
        let expired: Vec<SessionId> = {
            let used = self.used();
            used.iter()
                .filter(|(_, at)| at.elapsed() > self.idle)
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in expired {
            let _ = self.close_session(&id).await;
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.close_expired().await;
        let oldest = {
            let used = self.used();
            (used.len() >= self.max)
                .then(|| {
                    used.iter()
                        .min_by_key(|(_, at)| **at)
                        .map(|(id, _)| id.clone())
                })
                .flatten()
        };
        if let Some(id) = oldest {
            tracing::debug!(session = %id, "mcp: too many sessions; the one unused longest ends");
            let _ = self.close_session(&id).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_beyond_the_cap_end_the_one_unused_longest_and_idle_ones_end() {
        let sessions = CappedSessions::new(2, Duration::from_millis(200));
        let (first, _t1) = sessions.create_session().await.unwrap();
        let (second, _t2) = sessions.create_session().await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        sessions.touch(&first);
        let (third, _t3) = sessions.create_session().await.unwrap();
        assert!(sessions.has_session(&first).await.unwrap());
        assert!(
            !sessions.has_session(&second).await.unwrap(),
            "unused longest"
        );
        assert!(sessions.has_session(&third).await.unwrap());
        tokio::time::sleep(Duration::from_millis(250)).await;
        sessions.close_expired().await;
        assert!(!sessions.has_session(&first).await.unwrap());
        assert!(!sessions.has_session(&third).await.unwrap());
        assert!(sessions.used().is_empty());
        assert!(
            sessions.inner.sessions.read().await.is_empty(),
            "their memory is freed"
        );
    }
}
