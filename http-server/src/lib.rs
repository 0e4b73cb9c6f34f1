//! How nodekit's HTTP hosts (`serve`, `mcp serve --http`) take
//! connections, one policy for all; a host of one's own is served by
//! [`serve`] with a [`Handler`] and gets the same:
//!
//! - at most [`Policy::max_connections`] at once; when they are all taken,
//!   the oldest connection that is not in the middle of a request (one that
//!   has sent nothing yet, then one idle between requests) is closed to make
//!   room, so idle sockets cannot lock real clients out;
//! - request headers within [`Policy::header_timeout`]; a request body
//!   within [`Policy::body_timeout`] in all, with no pause longer than
//!   [`Policy::body_idle_timeout`] (408 otherwise);
//! - at most [`Policy::max_unfinished_bodies`] requests sending their body at
//!   once, [`Policy::max_unfinished_bodies_per_ip`] from one address (503
//!   beyond them);
//! - a `Host` header that is one of [`Policy::allowed_hosts`], exactly one,
//!   and agreeing with an absolute-form target (a guard against DNS
//!   rebinding);
//! - `Connection: close` on an answer given before the request's body was
//!   read, so a keep-alive client does not send its next request into a
//!   connection that is closing;
//! - request heads whose lines end with CRLF, not a lone LF (400), which
//!   hyper alone would take;
//! - `TCP_NODELAY`: an answer written in pieces (an event stream's first
//!   event, then the result) is not held back waiting for the client's
//!   delayed acknowledgement.

mod crlf;

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::BodyExt;
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper::header::{CONNECTION, HOST, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};
use tokio::time::{Instant, Sleep};

/// A response body: whole, or streamed.
pub type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What a server does with one request.
pub type Handler =
    Arc<dyn Fn(Request<RequestBody>) -> BoxFuture<'static, Response<Body>> + Send + Sync>;

/// How a server answers a request the policy refuses, in its own format.
pub type Refusal = fn(StatusCode, &str) -> Response<Body>;

/// The limits and checks every connection and request goes through;
/// [`Policy::new`] has the defaults, which a host changes field by field.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Policy {
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a request's whole body may take to arrive.
    pub body_timeout: Duration,
    /// The longest pause within a request's body.
    pub body_idle_timeout: Duration,
    /// Requests sending their body at once, from all clients.
    pub max_unfinished_bodies: usize,
    /// Requests sending their body at once, from one IP address.
    pub max_unfinished_bodies_per_ip: usize,
    /// The `Host` headers accepted.
    pub allowed_hosts: AllowedHosts,
    /// Paths served whatever the `Host` (a health check's).
    pub any_host_paths: &'static [&'static str],
}

/// Connections served at once, by default.
pub const MAX_CONNECTIONS: usize = 1024;

impl Policy {
    /// The defaults, accepting the `Host` names `allowed_hosts`.
    pub fn new(allowed_hosts: &[String]) -> Policy {
        Policy {
            max_connections: MAX_CONNECTIONS,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(60),
            body_idle_timeout: Duration::from_secs(10),
            max_unfinished_bodies: 256,
            max_unfinished_bodies_per_ip: 32,
            allowed_hosts: AllowedHosts::new(allowed_hosts),
            any_host_paths: &[],
        }
    }
}

/// The loopback names every server accepts as `Host` by default.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// `Host` names (any port) and `name:port`s, read once rather than for
/// every request.
#[derive(Clone, Debug)]
pub struct AllowedHosts(Vec<(String, Option<u16>)>);

impl AllowedHosts {
    /// The entries of `list` that are authorities; the others allow nothing.
    pub fn new(list: &[String]) -> AllowedHosts {
        AllowedHosts(
            list.iter()
                .filter_map(|entry| split_authority(entry))
                .map(|(name, port)| (name.to_ascii_lowercase(), port))
                .collect(),
        )
    }

    /// Whether the authority `host` (`name[:port]`, IPv6 in brackets) is
    /// allowed (names match any port; `name:port` only that port).
    pub fn allows(&self, host: &str) -> bool {
        let Some((name, port)) = split_authority(host) else {
            return false;
        };
        self.0
            .iter()
            .any(|(n, p)| n.eq_ignore_ascii_case(name) && (p.is_none() || *p == port))
    }
}

/// `name[:port]` split, brackets of an IPv6 address removed.
pub fn split_authority(text: &str) -> Option<(&str, Option<u16>)> {
    // A bare IPv6 address (`::1`) has colons but no port.
    if text.parse::<std::net::Ipv6Addr>().is_ok() {
        return Some((text, None));
    }
    let authority: hyper::http::uri::Authority = text.parse().ok()?;
    let host = authority.host();
    // `Authority` keeps the brackets of an IPv6 host; the text outlives it.
    let start = text.find(host)?;
    let name = text[start..start + host.len()].trim_matches(|c| c == '[' || c == ']');
    Some((name, authority.port_u16()))
}

/// Why a request's body stopped arriving in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time: {0}")]
struct BodyTimeout(String);

/// A request's body, read within the policy's time limits. Holds the
/// request's place among the unfinished bodies until it ends.
pub struct RequestBody {
    inner: Incoming,
    /// `None` for a body that was empty from the start.
    timers: Option<Timers>,
    place: Option<BodyPlace>,
    state: Arc<AtomicU8>,
}

/// [`RequestBody::state`]: still arriving, read to its end, or too slow.
const READING: u8 = 0;
const ENDED: u8 = 1;
const TIMED_OUT: u8 = 2;

struct Timers {
    idle: Pin<Box<Sleep>>,
    idle_timeout: Duration,
    deadline: Pin<Box<Sleep>>,
    body_timeout: Duration,
}

impl RequestBody {
    fn end(&mut self) {
        self.state.store(ENDED, Ordering::Relaxed);
        self.timers = None;
        self.place = None;
    }
}

impl hyper::body::Body for RequestBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.end();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                if this.inner.is_end_stream() {
                    this.end();
                } else if let Some(t) = &mut this.timers {
                    let next = Instant::now() + t.idle_timeout;
                    t.idle.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.timers = None;
                this.place = None;
                Poll::Ready(Some(Err(e.into())))
            }
            Poll::Pending => {
                let Some(t) = &mut this.timers else {
                    return Poll::Pending;
                };
                let late = if t.deadline.as_mut().poll(cx).is_ready() {
                    format!("it took longer than {:?} in all", t.body_timeout)
                } else if t.idle.as_mut().poll(cx).is_ready() {
                    format!("nothing came for {:?}", t.idle_timeout)
                } else {
                    return Poll::Pending;
                };
                this.timers = None;
                this.place = None;
                this.state.store(TIMED_OUT, Ordering::Relaxed);
                Poll::Ready(Some(Err(Box::new(BodyTimeout(late)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The count of unfinished bodies, in all and per address.
#[derive(Default)]
struct BodyPlaces {
    taken: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One request's place among the unfinished bodies; given back on drop.
struct BodyPlace {
    places: Arc<BodyPlaces>,
    ip: IpAddr,
}

impl BodyPlaces {
    fn take(self: &Arc<Self>, ip: IpAddr, policy: &Policy) -> Option<BodyPlace> {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_ip) = &mut *taken;
        let mine = per_ip.entry(ip).or_default();
        if *total >= policy.max_unfinished_bodies || *mine >= policy.max_unfinished_bodies_per_ip {
            if *mine == 0 {
                per_ip.remove(&ip);
            }
            return None;
        }
        *mine += 1;
        *total += 1;
        Some(BodyPlace {
            places: self.clone(),
            ip,
        })
    }
}

impl Drop for BodyPlace {
    fn drop(&mut self) {
        let mut taken = self.places.taken.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_ip) = &mut *taken;
        *total -= 1;
        if let Some(mine) = per_ip.get_mut(&self.ip) {
            *mine -= 1;
            if *mine == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

/// The open connections, oldest first, with what each is doing.
#[derive(Default)]
struct Connections {
    open: Mutex<ConnectionsState>,
    /// Wakes the accept loop when a connection closes.
    closed: Notify,
}

#[derive(Default)]
struct ConnectionsState {
    next: u64,
    by_age: BTreeMap<u64, Connection>,
}

struct Connection {
    /// Requests (with their answers' bodies) in flight.
    busy: usize,
    /// Whether a whole request's headers ever came.
    served: bool,
    close: Option<oneshot::Sender<()>>,
}

impl Connections {
    fn lock(&self) -> std::sync::MutexGuard<'_, ConnectionsState> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a new connection, closing the oldest idle one first when
    /// `max` are open; `None` when all of them are busy.
    fn open(&self, max: usize) -> Option<(u64, oneshot::Receiver<()>)> {
        let mut state = self.lock();
        if state.by_age.len() >= max {
            let idle = |served: bool| {
                state
                    .by_age
                    .iter()
                    .find(|(_, c)| c.busy == 0 && c.served == served)
                    .map(|(id, _)| *id)
            };
            let victim = idle(false).or_else(|| idle(true))?;
            if let Some(mut c) = state.by_age.remove(&victim)
                && let Some(close) = c.close.take()
            {
                let _ = close.send(());
            }
        }
        let id = state.next;
        state.next += 1;
        let (close, closed) = oneshot::channel();
        state.by_age.insert(
            id,
            Connection {
                busy: 0,
                served: false,
                close: Some(close),
            },
        );
        Some((id, closed))
    }

    fn closed(&self, id: u64) {
        self.lock().by_age.remove(&id);
        self.closed.notify_one();
    }

    fn started(self: &Arc<Self>, id: u64) -> Busy {
        if let Some(c) = self.lock().by_age.get_mut(&id) {
            c.busy += 1;
            c.served = true;
        }
        Busy {
            connections: self.clone(),
            id,
        }
    }
}

/// A request in flight on a connection, until its answer's body is dropped.
struct Busy {
    connections: Arc<Connections>,
    id: u64,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(c) = self.connections.lock().by_age.get_mut(&self.id) {
            c.busy -= 1;
        }
    }
}

/// A response body that keeps its connection marked busy while it is sent.
struct Guarded {
    inner: Body,
    _busy: Busy,
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `handler` on `listener` under `policy` until `shutdown`
/// completes; then stops accepting and gives the requests in flight up to
/// `grace` to finish.
pub async fn serve(
    listener: TcpListener,
    policy: Policy,
    handler: Handler,
    refuse: Refusal,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
    name: &'static str,
) {
    let policy = Arc::new(policy);
    let connections = Arc::new(Connections::default());
    let places = Arc::new(BodyPlaces::default());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors and the like: wait, then go on.
                Err(e) => {
                    tracing::warn!(error = %e, "{name}: cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        // Every connection busy: wait for one to close (the kernel keeps
        // the new one queued meanwhile).
        let (id, close) = loop {
            let notified = connections.closed.notified();
            if let Some(opened) = connections.open(policy.max_connections) {
                break opened;
            }
            tokio::select! {
                () = &mut shutdown => return finish(graceful, grace, name).await,
                () = notified => {}
                () = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        };
        let _ = stream.set_nodelay(true);
        let framing = Arc::new(crlf::Framing::default());
        let stream = crlf::CrlfHeads::new(stream, framing.clone());
        let service = {
            let (policy, connections, places, handler) = (
                policy.clone(),
                connections.clone(),
                places.clone(),
                handler.clone(),
            );
            hyper::service::service_fn(move |request: Request<Incoming>| {
                framing.set(crlf::BodyFraming::of(request.body()));
                let busy = connections.started(id);
                let answer = admit(request, peer.ip(), &policy, &places, refuse).map(|request| {
                    let state = request.body().state.clone();
                    (handler(request), state)
                });
                async move {
                    let mut response = match answer {
                        Ok((answer, state)) => {
                            let mut response = answer.await;
                            match state.load(Ordering::Relaxed) {
                                ENDED => {}
                                TIMED_OUT => {
                                    response = refuse(
                                        StatusCode::REQUEST_TIMEOUT,
                                        "the request body did not arrive in time",
                                    );
                                    close_after(&mut response);
                                }
                                _ => close_after(&mut response),
                            }
                            response
                        }
                        Err(refused) => *refused,
                    };
                    let body = std::mem::take(response.body_mut());
                    *response.body_mut() = Guarded {
                        inner: body,
                        _busy: busy,
                    }
                    .boxed();
                    Ok::<_, Infallible>(response)
                }
            })
        };
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(policy.header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        let connections = connections.clone();
        tokio::spawn(async move {
            tokio::select! {
                ended = connection => if let Err(e) = ended {
                    tracing::debug!(error = %e, "{name}: connection ended");
                },
                // Closed to make room for a new one: dropping it closes the socket.
                _ = close => {}
            }
            connections.closed(id);
        });
    }
    finish(graceful, grace, name).await;
}

async fn finish(
    graceful: hyper_util::server::graceful::GracefulShutdown,
    grace: Duration,
    name: &str,
) {
    // Polled once even without grace: that tells the connections to close.
    let finished = tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_ok();
    if !finished && !grace.is_zero() {
        tracing::warn!("{name}: requests still running after {grace:?} are cut off");
    }
}

/// A JSON answer.
pub fn json_answer(status: StatusCode, value: &serde_json::Value) -> Response<Body> {
    let mut response =
        Response::new(http_body_util::Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

/// `response` with `Connection: close`.
fn close_after(response: &mut Response<Body>) {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
}

/// The request with its body under the policy's limits, or the refusal.
fn admit(
    request: Request<Incoming>,
    ip: IpAddr,
    policy: &Policy,
    places: &Arc<BodyPlaces>,
    refuse: Refusal,
) -> Result<Request<RequestBody>, Box<Response<Body>>> {
    let refused = |status: StatusCode, message: &str| {
        let mut response = refuse(status, message);
        close_after(&mut response);
        Box::new(response)
    };
    if !policy.any_host_paths.contains(&request.uri().path()) {
        check_host(&request, &policy.allowed_hosts).map_err(|(s, m)| refused(s, &m))?;
    }
    let empty = request.body().is_end_stream();
    let place = if empty {
        None
    } else {
        Some(places.take(ip, policy).ok_or_else(|| {
            refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many requests are sending their bodies at once; retry shortly",
            )
        })?)
    };
    let timers = (!empty).then(|| Timers {
        idle: Box::pin(tokio::time::sleep(policy.body_idle_timeout)),
        idle_timeout: policy.body_idle_timeout,
        deadline: Box::pin(tokio::time::sleep(policy.body_timeout)),
        body_timeout: policy.body_timeout,
    });
    Ok(request.map(|inner| RequestBody {
        inner,
        timers,
        place,
        state: Arc::new(AtomicU8::new(if empty { ENDED } else { READING })),
    }))
}

/// Exactly one `Host`, allowed, and the same as an absolute-form target's.
fn check_host<B>(request: &Request<B>, allowed: &AllowedHosts) -> Result<(), (StatusCode, String)> {
    let mut hosts = request.headers().get_all(HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "a request needs exactly one Host header".into(),
        ));
    };
    let Ok(host) = host.to_str() else {
        return Err((
            StatusCode::BAD_REQUEST,
            "the Host header is not text".into(),
        ));
    };
    if let Some(target) = request.uri().authority()
        && !target.as_str().eq_ignore_ascii_case(host)
    {
        return Err((
            StatusCode::BAD_REQUEST,
            "the request's target names another host than its Host header".into(),
        ));
    }
    if !allowed.allows(host) {
        return Err((
            StatusCode::FORBIDDEN,
            format!(
                "the Host {} is not served here: add it to the server's allowed hosts (--allow-host)",
                nodekit_core::error::shorten(host, 100)
            ),
        ));
    }
    Ok(())
}

/// Whether an `Authorization` header's value is `Bearer <token>` (the
/// scheme in any case, as HTTP allows).
pub fn bearer_matches(header: Option<&[u8]>, token: &[u8]) -> bool {
    let Some((scheme, given)) = header.unwrap_or_default().split_at_checked(7) else {
        return false;
    };
    scheme.eq_ignore_ascii_case(b"Bearer ") && same_secret(given, token)
}

/// Whether a secret someone sent equals the expected one, compared in a
/// time that does not depend on where they differ.
pub fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    fn text(status: StatusCode, message: &str) -> Response<Body> {
        let mut response =
            Response::new(http_body_util::Full::new(Bytes::from(message.to_owned())).boxed());
        *response.status_mut() = status;
        response
    }

    /// A server on 127.0.0.1 that answers with the length of the body it
    /// read (at `/echo`, with the body), or, at `/early`, with 401 before
    /// reading it.
    async fn start(policy: Policy) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let handler: Handler = Arc::new(|request: Request<RequestBody>| {
            Box::pin(async move {
                let path = request.uri().path().to_owned();
                if path == "/early" {
                    return text(StatusCode::UNAUTHORIZED, "no");
                }
                match request.into_body().collect().await {
                    Ok(body) if path == "/echo" => {
                        text(StatusCode::OK, &String::from_utf8_lossy(&body.to_bytes()))
                    }
                    Ok(body) => text(StatusCode::OK, &body.to_bytes().len().to_string()),
                    Err(e) => text(StatusCode::BAD_REQUEST, &e.to_string()),
                }
            })
        });
        let served = serve(
            listener,
            policy,
            handler,
            text,
            std::future::pending(),
            Duration::ZERO,
            "test",
        );
        tokio::spawn(served);
        addr
    }

    fn policy() -> Policy {
        Policy::new(&LOOPBACK_HOSTS.map(String::from))
    }

    /// Reads one response (its head, and a body of `content-length`).
    async fn response(stream: &mut TcpStream) -> String {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got).into_owned();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")?
                            .parse()
                            .ok()
                    })
                    .unwrap_or(0usize);
                if got.len() >= head_end + 4 + length || n == 0 {
                    return text;
                }
            }
            assert!(n > 0, "the connection closed mid-response: {text}");
        }
    }

    async fn exchange(addr: std::net::SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), response(&mut stream))
            .await
            .expect("an answer within 5 s")
    }

    #[tokio::test]
    async fn the_host_header_must_be_one_allowed_and_agree_with_the_target() {
        let mut policy = policy();
        policy.any_host_paths = &["/healthz"];
        let addr = start(policy).await;
        for (request, status) in [
            ("GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n", "200"),
            ("GET / HTTP/1.1\r\nhost: localhost:8080\r\n\r\n", "200"),
            ("GET / HTTP/1.1\r\n\r\n", "400"),
            (
                "GET / HTTP/1.1\r\nhost: localhost\r\nhost: evil.example\r\n\r\n",
                "400",
            ),
            ("GET / HTTP/1.1\r\nhost: evil.example\r\n\r\n", "403"),
            (
                "GET http://evil.example/ HTTP/1.1\r\nhost: localhost\r\n\r\n",
                "400",
            ),
            (
                "GET http://localhost/ HTTP/1.1\r\nhost: localhost\r\n\r\n",
                "200",
            ),
            (
                "GET /healthz HTTP/1.1\r\nhost: 10.0.0.7:8080\r\n\r\n",
                "200",
            ),
        ] {
            let answer = exchange(addr, request).await;
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status}")),
                "{request:?}: {answer}"
            );
        }
    }

    #[tokio::test]
    async fn a_lone_lf_in_a_request_head_gets_400() {
        let addr = start(policy()).await;
        for request in [
            "GET / HTTP/1.1\nhost: localhost\n\n",
            "GET / HTTP/1.1\r\nhost: localhost\n\r\n",
            "GET / HTTP/1.1\r\nhost: localhost\r\n\n",
        ] {
            let answer = exchange(addr, request).await;
            assert!(answer.starts_with("HTTP/1.1 400"), "{request:?}: {answer}");
        }
        // Lone LFs in bodies are a body's business; the heads that follow
        // them on a kept-alive connection are still checked.
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let pipelined = "POST /echo HTTP/1.1\r\nhost: localhost\r\ncontent-length: 4\r\n\r\na\n\nb\
             POST /echo HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n2\r\n\n\n\r\n0\r\n\r\n\
             GET / HTTP/1.1\nhost: localhost\n\n";
        stream.write_all(pipelined.as_bytes()).await.unwrap();
        // The 400 closes the connection: read to the end.
        let mut answers = String::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut answers))
            .await
            .unwrap()
            .unwrap();
        let statuses: Vec<&str> = answers.matches("HTTP/1.1 ").collect();
        assert_eq!(statuses.len(), 3, "{answers:?}");
        let bodies: Vec<&str> = answers
            .split("HTTP/1.1 ")
            .skip(1)
            .map(|a| a.split_once("\r\n\r\n").unwrap().1)
            .collect();
        assert_eq!(bodies, ["a\n\nb", "\n\n", ""], "{answers:?}");
        assert!(answers.contains("HTTP/1.1 400"), "{answers:?}");
    }

    #[tokio::test]
    async fn a_body_that_stops_coming_gets_408_and_the_connection_closes() {
        let mut policy = policy();
        policy.body_idle_timeout = Duration::from_millis(300);
        policy.body_timeout = Duration::from_millis(900);
        let addr = start(policy).await;
        // A pause longer than the idle limit.
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = "POST / HTTP/1.1\r\nhost: localhost\r\ncontent-length: 10\r\n\r\nab";
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), response(&mut stream))
            .await
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
        // A byte at a time, each within the idle limit, for longer than the whole.
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let trickle = async {
            for _ in 0..8 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                if stream.write_all(b"x").await.is_err() {
                    break;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(5), trickle)
            .await
            .unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), response(&mut stream))
            .await
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    }

    #[tokio::test]
    async fn bodies_in_progress_are_capped_per_address() {
        let mut policy = policy();
        policy.max_unfinished_bodies_per_ip = 3;
        let addr = start(policy).await;
        let head = "POST / HTTP/1.1\r\nhost: localhost\r\ncontent-length: 10\r\n\r\nab";
        let mut slow = Vec::new();
        for _ in 0..3 {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(head.as_bytes()).await.unwrap();
            slow.push(stream);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let answer = exchange(addr, head).await;
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        // One finishes its body: its place is free again.
        slow[0].write_all(b"cdefghij").await.unwrap();
        let done = response(&mut slow[0]).await;
        assert!(done.starts_with("HTTP/1.1 200"), "{done}");
        let answer = exchange(
            addr,
            "POST / HTTP/1.1\r\nhost: localhost\r\ncontent-length: 2\r\n\r\nab",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    #[tokio::test]
    async fn idle_connections_make_room_for_a_real_client() {
        let mut policy = policy();
        policy.max_connections = 8;
        let addr = start(policy).await;
        let mut idle = Vec::new();
        for i in 0..20 {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            // Half send nothing, half the start of their headers.
            if i % 2 == 1 {
                stream.write_all(b"GET / HTTP/1.1\r\nho").await.unwrap();
            }
            idle.push(stream);
        }
        let answer = exchange(addr, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    #[tokio::test]
    async fn an_answer_given_before_the_body_was_read_closes_the_connection() {
        let addr = start(policy()).await;
        let answer = exchange(
            addr,
            "POST /early HTTP/1.1\r\nhost: localhost\r\ncontent-length: 5\r\n\r\nhello",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
        let read = exchange(
            addr,
            "POST / HTTP/1.1\r\nhost: localhost\r\ncontent-length: 5\r\n\r\nhello",
        )
        .await;
        assert!(
            !read.to_ascii_lowercase().contains("connection: close"),
            "{read}"
        );
    }

    fn hosts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hosts_match_by_name_or_by_name_and_port() {
        let allowed = AllowedHosts::new(&hosts(&["localhost", "::1", "shop.example:8080"]));
        for host in [
            "localhost",
            "LOCALHOST:9",
            "[::1]:80",
            "[::1]",
            "shop.example:8080",
        ] {
            assert!(allowed.allows(host), "{host}");
        }
        for host in [
            "evil.example",
            "shop.example",
            "shop.example:80",
            "localhost.evil",
            "",
        ] {
            assert!(!allowed.allows(host), "{host}");
        }
    }

    #[test]
    fn the_oldest_idle_connection_makes_room_and_a_busy_one_never_does() {
        let connections = Arc::new(Connections::default());
        let (first, mut first_closed) = connections.open(2).unwrap();
        let (second, mut second_closed) = connections.open(2).unwrap();
        let busy = connections.started(second);
        // Full: the oldest that never sent a request goes.
        let (third, _) = connections.open(2).unwrap();
        assert!(first_closed.try_recv().is_ok());
        assert!(second_closed.try_recv().is_err());
        let _third = connections.started(third);
        // Both left are busy: no room.
        assert!(connections.open(2).is_none());
        drop(busy);
        // Idle between requests now: it goes.
        assert!(connections.open(2).is_some());
        assert!(second_closed.try_recv().is_ok());
        let _ = first;
    }
}
