//! [`Transport`]: one model server as its client reaches it. Retries with
//! exponential backoff and jitter that honour `Retry-After`, cancellation,
//! timeouts, size-capped bodies, server-sent event streams, and provider
//! errors with the credentials scrubbed out.

use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use futures::StreamExt;
use futures::stream::BoxStream;
use nodekit_core::model::CancelToken;
use serde_json::Value;

use crate::auth::{Authenticate, header_name};
use crate::client::shared_http_client;
use crate::sse::{SseEvent, SseParser};
use nodekit_core::error::shorten;
use nodekit_core::model::{ModelError, ModelErrorKind};

/// A model server as its client reaches it: the base URL, the
/// credentials, the query parameters and headers every request carries,
/// and the limits (timeout, retries, answer size). Cheap to clone: clones
/// share the process's connection pool ([`shared_http_client`]).
///
/// A provider's client holds one, sends its requests with
/// [`post`](Transport::post), and reads the answers with
/// [`read_json`](Transport::read_json) or, streamed,
/// [`events`](Transport::events). Every error it returns has the
/// credentials' secrets hidden ([`scrub`](Transport::scrub)).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use nodekit_http::{HeaderKey, Transport};
///
/// let transport = Transport::builder(
///     "https://api.anthropic.com/v1",
///     Arc::new(HeaderKey::new("x-api-key", "sk-ant-…")?),
/// )
/// .header("anthropic-version", "2023-06-01")
/// .timeout(Duration::from_secs(120))
/// .build()?;
/// assert_eq!(transport.timeout(), Duration::from_secs(120));
/// # Ok::<(), nodekit_core::model::ModelError>(())
/// ```
#[derive(Clone)]
pub struct Transport {
    client: reqwest::Client,
    base_url: String,
    auth: Arc<dyn Authenticate>,
    /// `?name=value&…` of the parameters every request carries (Azure's
    /// `api-version`), or nothing.
    query: String,
    /// The extra headers, read once; one that cannot be sent fails every
    /// call, before anything is sent, as a configuration error.
    headers: Result<http::HeaderMap, ModelError>,
    timeout: Duration,
    max_retries: u32,
    max_response_bytes: usize,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("base_url", &self.base_url)
            .field("auth", &self.auth)
            .field("query", &self.query)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// The settings of a [`Transport`] being made ([`Transport::builder`]).
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct TransportBuilder {
    base_url: String,
    auth: Arc<dyn Authenticate>,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    timeout: Duration,
    max_retries: u32,
    max_response_bytes: usize,
}

/// A timeout given in seconds (a node parameter's form), which must be a
/// positive number.
pub fn timeout_secs(secs: f64) -> Result<Duration, ModelError> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::BadRequest,
                format!("timeout must be a positive number of seconds, not {secs}"),
            )
        })
}

/// The longest `Retry-After` honoured; a longer one is cut to this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl TransportBuilder {
    /// A query parameter every request carries (Azure's `api-version`).
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// A header every request carries (`anthropic-version`, an
    /// organisation id). One that cannot be sent fails every call as a
    /// configuration error, before anything is sent.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Headers every request carries, as [`header`](Self::header) each.
    pub fn headers(mut self, headers: impl IntoIterator<Item = (String, String)>) -> Self {
        self.headers.extend(headers);
        self
    }

    /// How long one exchange may take (connect, and each read); a whole
    /// non-streamed answer within it too. Default 60 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often a 408, 429, 5xx or broken connection is tried again.
    /// Default 2.
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The largest answer read, whole or streamed. Default 64 MiB.
    pub fn max_response_bytes(mut self, max_response_bytes: usize) -> Self {
        self.max_response_bytes = max_response_bytes;
        self
    }

    /// The transport; fails only when the HTTP client cannot be built.
    pub fn build(self) -> Result<Transport, ModelError> {
        let headers = self
            .headers
            .iter()
            .map(|(name, value)| {
                let name = header_name(name)?;
                let value = http::HeaderValue::from_str(value).map_err(|_| {
                    ModelError::new(
                        ModelErrorKind::BadRequest,
                        format!("the header {name} holds a character a header cannot carry"),
                    )
                })?;
                Ok((name, value))
            })
            .collect();
        let mut parameters = String::new();
        for (i, (name, value)) in self.query.iter().enumerate() {
            parameters.push(if i == 0 { '?' } else { '&' });
            parameters.push_str(&format!("{name}={value}"));
        }
        let client = shared_http_client(Some(self.timeout)).map_err(|e| {
            ModelError::new(
                ModelErrorKind::Connection,
                format!("cannot build the HTTP client: {e}"),
            )
            .with_source(e)
        })?;
        Ok(Transport {
            client,
            base_url: self.base_url.trim_end_matches('/').to_owned(),
            auth: self.auth,
            query: parameters,
            headers,
            timeout: self.timeout,
            max_retries: self.max_retries,
            max_response_bytes: self.max_response_bytes,
        })
    }
}

impl Transport {
    /// Settings for `base_url` (e.g. `https://api.openai.com/v1`), each
    /// request authenticated by `auth`.
    pub fn builder(base_url: impl Into<String>, auth: Arc<dyn Authenticate>) -> TransportBuilder {
        TransportBuilder {
            base_url: base_url.into(),
            auth,
            query: Vec::new(),
            headers: Vec::new(),
            timeout: Duration::from_secs(60),
            max_retries: 2,
            max_response_bytes: 64 * 1024 * 1024,
        }
    }

    /// How long one exchange, or a stream's wait for its next event, may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The largest answer read, whole or streamed.
    pub fn max_response_bytes(&self) -> usize {
        self.max_response_bytes
    }

    /// The request for one attempt, authenticated.
    fn request(
        &self,
        path: &str,
        body: &bytes::Bytes,
        whole_timeout: bool,
    ) -> Result<reqwest::Request, ModelError> {
        let bad = |what: &str| ModelError::new(ModelErrorKind::BadRequest, what.to_owned());
        let mut request = http::Request::post(format!("{}/{path}{}", self.base_url, self.query))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.clone())
            .map_err(|_| bad("the model's URL cannot be read"))?;
        request.headers_mut().extend(self.headers.clone()?);
        self.auth.authenticate(&mut request)?;
        let mut request = reqwest::Request::try_from(request)
            .map_err(|_| bad("the model's URL cannot be read"))?;
        if whole_timeout {
            *request.timeout_mut() = Some(self.timeout);
        }
        Ok(request)
    }

    /// POSTs the JSON `body` to `path` (after the base URL), retrying 408,
    /// 429, 5xx and broken connections, and failing on any other status
    /// with the provider's error ([`provider_error`](Self::provider_error)).
    /// `whole_timeout` bounds the entire exchange (off for streams, whose
    /// reads are bounded one by one instead: [`events`](Self::events)).
    pub async fn post(
        &self,
        path: &str,
        body: &bytes::Bytes,
        cancel: Option<&CancelToken>,
        whole_timeout: bool,
    ) -> Result<reqwest::Response, ModelError> {
        let mut backoff = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(500))
            .with_max_delay(Duration::from_secs(8))
            .with_jitter()
            .with_max_times(self.max_retries as usize)
            .build();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let result = cancellable(cancel, self.send_once(path, body, whole_timeout)).await;
            let (mut error, retry_after) = match result {
                Ok(response) => return Ok(response),
                Err(e) => e,
            };
            error.attempts = attempts;
            if !error.is_retryable() {
                return Err(error);
            }
            let Some(delay) = backoff.next() else {
                return Err(error);
            };
            let delay = retry_after.unwrap_or(delay);
            tracing::debug!(attempt = attempts, ?delay, %error, "retrying model request");
            cancellable(cancel, async {
                tokio::time::sleep(delay).await;
                Ok::<_, (ModelError, Option<Duration>)>(())
            })
            .await
            .map_err(|(e, _)| e)?;
        }
    }

    async fn send_once(
        &self,
        path: &str,
        body: &bytes::Bytes,
        whole_timeout: bool,
    ) -> Result<reqwest::Response, (ModelError, Option<Duration>)> {
        let request = self
            .request(path, body, whole_timeout)
            .map_err(|e| (self.scrub(e), None))?;
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| (self.transport_error(e), None))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let bytes = self.read_capped(response).await.unwrap_or_default();
        Err((self.provider_error(status.as_u16(), &bytes), retry_after))
    }

    /// Reads a whole body, refusing more than `max_response_bytes`.
    pub async fn read_capped(
        &self,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if out.len() + chunk.len() > self.max_response_bytes {
                        return Err(self.too_large());
                    }
                    out.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(out),
                Err(e) => return Err(self.transport_error(e)),
            }
        }
    }

    /// The error of an answer over [`max_response_bytes`](Self::max_response_bytes).
    pub fn too_large(&self) -> ModelError {
        ModelError::new(
            ModelErrorKind::TooLarge,
            format!("the answer exceeds {} bytes", self.max_response_bytes),
        )
    }

    /// Reads a whole JSON answer ([`read_capped`](Self::read_capped)),
    /// unless `cancel` fires first. An answer that is not JSON is a
    /// [`ModelErrorKind::Protocol`] error quoting its start.
    pub async fn read_json(
        &self,
        response: reqwest::Response,
        cancel: Option<&CancelToken>,
    ) -> Result<Value, ModelError> {
        let read = self.read_capped(response);
        let bytes = match cancel {
            Some(token) => tokio::select! {
                biased;
                _ = token.cancelled() => return Err(cancelled("the call was cancelled")),
                bytes = read => bytes?,
            },
            None => read.await?,
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            let shown = shorten(&String::from_utf8_lossy(&bytes), 200);
            ModelError::new(
                ModelErrorKind::Protocol,
                format!("the answer is not JSON ({e}): {shown}"),
            )
        })
    }

    /// The server-sent events of a streamed answer, as they arrive. The
    /// stream ends after an error, which is one of: no event with data
    /// within [`timeout`](Self::timeout) (keep-alive comments do not
    /// count), more than [`max_response_bytes`](Self::max_response_bytes)
    /// in all or in one event, a broken connection, or `cancel`. It ends
    /// without one when the server closes the stream; an event the server
    /// left without its blank line is still handed out. A body of
    /// newline-delimited JSON ([`is_json_lines`](Self::is_json_lines)) is
    /// read the same way, each line an event.
    pub fn events(
        &self,
        response: reqwest::Response,
        cancel: Option<CancelToken>,
    ) -> BoxStream<'static, Result<SseEvent, ModelError>> {
        futures::stream::unfold(
            self.event_reader(response, cancel),
            |mut state| async move {
                let item = state.next().await?;
                Some((item, state))
            },
        )
        .boxed()
    }

    /// The reader behind [`events`](Self::events), for the crate's own
    /// loop ([`chunk_stream`](Self::chunk_stream)), which calls it without
    /// a boxed stream between.
    pub(crate) fn event_reader(
        &self,
        response: reqwest::Response,
        cancel: Option<CancelToken>,
    ) -> EventReader {
        let parser = if Transport::is_json_lines(&response) {
            SseParser::lines(self.max_response_bytes)
        } else {
            SseParser::new(self.max_response_bytes)
        };
        EventReader {
            bytes: response.bytes_stream().boxed(),
            parser,
            parsed: std::collections::VecDeque::new(),
            received: 0,
            last_data: tokio::time::Instant::now(),
            transport: self.clone(),
            cancel,
            done: false,
        }
    }

    /// Maps a reqwest failure; the URL is left out (it may carry credentials).
    pub fn transport_error(&self, e: reqwest::Error) -> ModelError {
        // A request that could not even be built (a bad header or URL) will not
        // succeed on a retry: only timeouts and network failures are transient.
        let kind = if e.is_timeout() {
            ModelErrorKind::Timeout
        } else if e.is_builder() {
            ModelErrorKind::BadRequest
        } else {
            ModelErrorKind::Connection
        };
        let e = e.without_url();
        let mut message = nodekit_core::error::with_causes(&e);
        if kind == ModelErrorKind::Timeout {
            message = format!("no answer within {:?} ({message})", self.timeout);
        }
        self.scrub(ModelError::new(kind, message).with_source(e))
    }

    /// Reads a provider's error body, whatever its shape
    /// ([`error_fields`]), with its HTTP `status` mapped to the kind.
    pub fn provider_error(&self, status: u16, body: &[u8]) -> ModelError {
        let kind = match status {
            401 | 403 => ModelErrorKind::Auth,
            404 => ModelErrorKind::NotFound,
            408 => ModelErrorKind::Timeout,
            413 => ModelErrorKind::TooLarge,
            429 => ModelErrorKind::RateLimited,
            500..=599 => ModelErrorKind::Server,
            _ => ModelErrorKind::BadRequest,
        };
        let (message, code) = match serde_json::from_slice::<Value>(body) {
            Ok(v) => error_fields(&v),
            Err(_) => (shorten(String::from_utf8_lossy(body).trim(), 500), None),
        };
        // OpenAI's "quota used up" arrives as a 429 but no retry will help.
        let kind = if code.as_deref() == Some("insufficient_quota") {
            ModelErrorKind::BadRequest
        } else {
            kind
        };
        let mut error = ModelError::new(kind, message).with_status(status);
        error.code = code;
        self.scrub(error)
    }

    /// The result of `work` as a [`ChatModel`](nodekit_core::model::ChatModel)
    /// method returns it: a provider's error, its secrets hidden
    /// ([`scrub`](Self::scrub)), as nodekit's error.
    pub fn answer<'a, T: Send + 'a>(
        &'a self,
        work: impl std::future::Future<Output = Result<T, ModelError>> + Send + 'a,
    ) -> futures::future::BoxFuture<'a, nodekit_core::error::Result<T>> {
        Box::pin(async move { work.await.map_err(|e| self.scrub(e).into()) })
    }

    /// Removes the credentials' secrets and header values from a message,
    /// in case a server quotes them: whole, or cut short to their first or
    /// last eight characters or more.
    pub fn scrub(&self, mut e: ModelError) -> ModelError {
        let secrets = self.auth.secrets().into_iter().chain(
            self.headers
                .iter()
                .flat_map(|h| h.values().filter_map(|v| v.to_str().ok())),
        );
        for secret in secrets.filter(|s| s.len() >= 4) {
            e.message = hide(&e.message, secret);
        }
        e
    }
}

/// The shortest part of a secret that is hidden when a message quotes it.
const MIN_QUOTED: usize = 8;

/// `text` with the secret hidden as `***`: every whole occurrence, and a
/// run of at least [`MIN_QUOTED`] characters that is the secret's start or
/// its end (servers quote a key cut short, `sk-proj-abc…`, or by its last
/// characters). Other runs the secret happens to share with the text, such
/// as an ordinary word, stay.
///
/// This protects the server's own log from a quoted key. It is no defence
/// against a client that chooses the text: such a client can see which
/// guesses get hidden, so what a remote client is shown leaves the
/// provider's text out altogether ([`nodekit_core::Error::client_text`]).
fn hide(text: &str, secret: &str) -> String {
    let secret: Vec<char> = secret.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let min = MIN_QUOTED.min(secret.len());
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let prefix = rest.iter().zip(&secret).take_while(|(a, b)| a == b).count();
        let suffix = (min..=secret.len().min(rest.len()))
            .rev()
            .find(|&n| rest[..n] == secret[secret.len() - n..])
            .unwrap_or(0);
        let run = prefix.max(suffix);
        if run >= min {
            out.push_str("***");
            i += run;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// `message` and `code` of an error body: `{"error": {...}}`, `{"error": "text"}`,
/// or the fields at the top level; `code` may be a string, a number (then
/// Google's `status` name, when there is one) or null, and else is `type`
/// (Anthropic's).
pub fn error_fields(v: &Value) -> (String, Option<String>) {
    let obj = match v.get("error") {
        Some(Value::String(s)) => return (shorten(s, 500), None),
        Some(e @ Value::Object(_)) => e,
        _ => v,
    };
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
    let message = text("message")
        .or_else(|| text("msg"))
        .or_else(|| text("detail"))
        .or_else(|| {
            obj.get("detail")
                .filter(|d| !d.is_null())
                .map(Value::to_string)
        })
        .unwrap_or_else(|| v.to_string());
    let code = match obj.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        // Google's errors give the HTTP status as `code` and name it in `status`.
        Some(Value::Number(n)) => text("status").or_else(|| Some(n.to_string())),
        _ => text("type"),
    };
    (shorten(&message, 500), code)
}

/// `Retry-After` (seconds) or `retry-after-ms`.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    // `try_from`: a huge value must not panic; it is capped like any long wait.
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    Some(Duration::try_from_secs_f64(seconds).map_or(MAX_RETRY_AFTER, |d| d.min(MAX_RETRY_AFTER)))
}

/// What [`Transport::events`] keeps between events.
pub(crate) struct EventReader {
    bytes: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: SseParser,
    /// Events parsed but not yet handed out.
    parsed: std::collections::VecDeque<SseEvent>,
    received: usize,
    /// When the last piece of the body with an event with data arrived.
    last_data: tokio::time::Instant,
    transport: Transport,
    cancel: Option<CancelToken>,
    /// Nothing more will be read: the stream closed, or an error was handed out.
    done: bool,
}

impl EventReader {
    pub(crate) async fn next(&mut self) -> Option<Result<SseEvent, ModelError>> {
        loop {
            if let Some(event) = self.parsed.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            let outcome = self.read().await;
            if let Err(e) = outcome {
                self.done = true;
                return Some(Err(self.transport.scrub(e)));
            }
        }
    }

    /// Reads the next piece of the body into `parsed`.
    async fn read(&mut self) -> Result<(), ModelError> {
        let mut events = Vec::new();
        // A server that only sends keep-alive comments must not hold the run forever.
        let idle = self.transport.timeout;
        let read = tokio::time::timeout_at(self.last_data + idle, self.bytes.next());
        let next = match &self.cancel {
            Some(token) => tokio::select! {
                biased;
                _ = token.cancelled() => return Err(cancelled("the stream was cancelled")),
                next = read => next,
            },
            None => read.await,
        };
        let Ok(next) = next else {
            return Err(ModelError::new(
                ModelErrorKind::Timeout,
                format!("no data for {idle:?}"),
            ));
        };
        let too_large =
            |e: crate::sse::EventTooLarge| ModelError::new(ModelErrorKind::TooLarge, e.to_string());
        match next {
            Some(Ok(piece)) => {
                self.received += piece.len();
                if self.received > self.transport.max_response_bytes {
                    return Err(self.transport.too_large());
                }
                self.parser.feed(&piece, &mut events).map_err(too_large)?;
            }
            Some(Err(e)) => return Err(self.transport.transport_error(e)),
            None => {
                self.done = true;
                self.parser.finish(&mut events).map_err(too_large)?;
            }
        }
        // The clock is read once a piece of the body, not once an event.
        if events.iter().any(|e| !e.data.trim().is_empty()) {
            self.last_data = tokio::time::Instant::now();
        }
        self.parsed.extend(events);
        Ok(())
    }
}

/// The error of a call or stream given up because its token fired.
fn cancelled(what: &str) -> ModelError {
    ModelError::new(ModelErrorKind::Cancelled, what)
}

/// Runs `work` unless `cancel` fires first; dropping `work` aborts its request.
async fn cancellable<T>(
    cancel: Option<&CancelToken>,
    work: impl std::future::Future<Output = Result<T, (ModelError, Option<Duration>)>>,
) -> Result<T, (ModelError, Option<Duration>)> {
    match cancel {
        None => work.await,
        Some(token) => tokio::select! {
            biased;
            _ = token.cancelled() => Err((cancelled("the call was cancelled"), None)),
            result = work => result,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::hide;

    const KEY: &str = "sk-upstream-Zq7xK2mP9vLw4RtY";

    #[test]
    fn a_key_is_hidden_whole_or_cut_short_and_other_text_stays() {
        assert_eq!(hide(&format!("key {KEY} refused"), KEY), "key *** refused");
        assert_eq!(hide(&format!("key {}…", &KEY[..12]), KEY), "key ***…");
        assert_eq!(
            hide(&format!("key …{}", &KEY[KEY.len() - 9..]), KEY),
            "key …***"
        );
        // Runs the key shares with the text elsewhere are ordinary words.
        assert_eq!(
            hide("the upstream-Zq7 failed", KEY),
            "the upstream-Zq7 failed"
        );
        // Seven characters of it are not a secret.
        assert_eq!(hide(&KEY[..7], KEY), KEY[..7]);
    }
}
