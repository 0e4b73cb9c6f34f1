//! [`McpServer`] over Streamable HTTP: rmcp's service, served by hyper at
//! `/mcp`, behind a bearer token when one is set.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::McpServer;
use crate::error::{McpError, Result};

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
}

/// Connections served at once.
const MAX_CONNECTIONS: usize = 1024;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest request body [`HttpOptions`] accepts by default: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            allowed_hosts: ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
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
            .finish()
    }
}

/// Listens on `addr` (e.g. `127.0.0.1:8808`; port 0 picks a free one) for [`serve_http`].
pub async fn bind(addr: &str) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| {
        McpError::Listen {
            addr: crate::error::shorten(addr, crate::error::QUOTE_MAX),
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
    let max_body_bytes = options.max_body_bytes;
    if options.allowed_hosts.is_empty() {
        // rmcp would read an empty list as "any host".
        return Err(crate::Error::InvalidSetting {
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
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(sessions);
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        // At most MAX_CONNECTIONS at once: the next waits for one to end.
        let Ok(permit) = connections.clone().acquire_owned().await else {
            return Ok(());
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: wait, then go on serving.
            Err(e) => {
                tracing::warn!(error = %e, "mcp: cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = service.clone();
        let expected = expected.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let answer = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let expected = expected.clone();
                async move {
                    if request.uri().path() != MCP_PATH {
                        return Ok::<_, Infallible>(plain(
                            StatusCode::NOT_FOUND,
                            format!("not found: the MCP endpoint is {MCP_PATH}"),
                        ));
                    }
                    if let Some(expected) = &expected
                        && !crate::text::bearer_matches(
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
                        return Ok(refused);
                    }
                    // Refused before it is read; rmcp counts a body without a length as it reads.
                    let length = request
                        .headers()
                        .get(CONTENT_LENGTH)
                        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
                    if length.is_some_and(|n| n > max_body_bytes as u64) {
                        return Ok(plain(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            format!("payload too large: the limit is {max_body_bytes} bytes"),
                        ));
                    }
                    Ok(service.handle(request).await)
                }
            });
            // A client that sends its headers slowly is cut off.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), answer);
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "mcp: connection ended");
            }
        });
    }
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
