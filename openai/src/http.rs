//! The HTTP side of model APIs, shared by chat models and embeddings:
//! authentication ([`Authenticate`]: a bearer token, a key in a header or
//! in the query, or a scheme of one's own such as a signature), retries
//! with exponential backoff and jitter that honour `Retry-After`,
//! cancellation, timeouts, size-capped bodies, and provider errors.

use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use nodekit_core::model::CancelToken;
use serde_json::Value;

use nodekit_core::error::shorten;
use nodekit_core::model::{ModelError, ModelErrorKind};

/// A request to a model API, as [`Authenticate`] sees it: method, URL,
/// headers and the whole body, all there for a signature.
pub type Request = http::Request<bytes::Bytes>;

/// How a request says who sends it. nodekit has [`Bearer`] (OpenAI and
/// most compatible servers), [`HeaderKey`] (Azure's `api-key`,
/// Anthropic's `x-api-key`) and [`QueryKey`] (Gemini's `?key=`); a
/// provider that needs another scheme (a signature over the request, a
/// token fetched and refreshed) implements this. It runs on every attempt,
/// retries included, just before the request is sent.
pub trait Authenticate: Send + Sync + std::fmt::Debug {
    /// Adds the credentials to `request`.
    fn authenticate(&self, request: &mut Request) -> Result<(), ModelError>;

    /// The secrets a server might quote back: hidden from every error
    /// message, whole or cut short.
    fn secrets(&self) -> Vec<&str> {
        Vec::new()
    }
}

/// `Authorization: Bearer <token>`; an empty token sends nothing (a local
/// server without keys).
#[derive(Clone)]
pub struct Bearer(pub String);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(***)")
    }
}

impl Authenticate for Bearer {
    fn authenticate(&self, request: &mut Request) -> Result<(), ModelError> {
        if !self.0.is_empty() {
            let value = header_value(&format!("Bearer {}", self.0))?;
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, value);
        }
        Ok(())
    }

    fn secrets(&self) -> Vec<&str> {
        vec![&self.0]
    }
}

/// The key in a header of its own, e.g. `api-key` (Azure OpenAI) or
/// `x-api-key` (Anthropic).
#[derive(Clone)]
pub struct HeaderKey {
    name: http::HeaderName,
    key: String,
}

impl HeaderKey {
    /// `key` sent as header `name`; fails when `name` is no header name.
    pub fn new(name: &str, key: impl Into<String>) -> Result<HeaderKey, ModelError> {
        Ok(HeaderKey {
            name: header_name(name)?,
            key: key.into(),
        })
    }
}

impl std::fmt::Debug for HeaderKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeaderKey({}: ***)", self.name)
    }
}

impl Authenticate for HeaderKey {
    fn authenticate(&self, request: &mut Request) -> Result<(), ModelError> {
        let value = header_value(&self.key)?;
        request.headers_mut().insert(self.name.clone(), value);
        Ok(())
    }

    fn secrets(&self) -> Vec<&str> {
        vec![&self.key]
    }
}

/// The key as a query parameter, e.g. `?key=…` (Google's Gemini API).
#[derive(Clone)]
pub struct QueryKey {
    name: String,
    key: String,
}

impl QueryKey {
    /// `key` sent as query parameter `name`.
    pub fn new(name: impl Into<String>, key: impl Into<String>) -> QueryKey {
        QueryKey {
            name: name.into(),
            key: key.into(),
        }
    }
}

impl std::fmt::Debug for QueryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueryKey({}=***)", self.name)
    }
}

impl Authenticate for QueryKey {
    fn authenticate(&self, request: &mut Request) -> Result<(), ModelError> {
        let bad = || {
            ModelError::new(
                ModelErrorKind::BadRequest,
                "the request URL cannot carry a key",
            )
        };
        let mut url = url::Url::parse(&request.uri().to_string()).map_err(|_| bad())?;
        url.query_pairs_mut().append_pair(&self.name, &self.key);
        *request.uri_mut() = url.as_str().parse().map_err(|_| bad())?;
        Ok(())
    }

    fn secrets(&self) -> Vec<&str> {
        vec![&self.key]
    }
}

/// A header name, or the error that says it is none.
fn header_name(name: &str) -> Result<http::HeaderName, ModelError> {
    http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        ModelError::new(
            ModelErrorKind::BadRequest,
            format!("{:?} is not a header name", shorten(name, 60)),
        )
    })
}

/// A header value; the text is not shown, as it holds a secret.
fn header_value(text: &str) -> Result<http::HeaderValue, ModelError> {
    let mut value = http::HeaderValue::from_str(text).map_err(|_| {
        ModelError::new(
            ModelErrorKind::BadRequest,
            "the API key holds a character a header cannot carry",
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// Query parameters every request to a server carries.
pub(crate) type Query = Vec<(String, String)>;

/// Connection settings of a model server.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base_url: String,
    auth: Arc<dyn Authenticate>,
    /// `?name=value&…` of the parameters every request carries (Azure's
    /// `api-version`), or nothing.
    query: String,
    /// The extra headers, read once; one that cannot be sent fails every
    /// call, before anything is sent, as a configuration error.
    headers: Result<http::HeaderMap, ModelError>,
    pub(crate) timeout: Duration,
    max_retries: u32,
    pub(crate) max_response_bytes: usize,
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

/// A timeout given in seconds, which must be a positive number.
pub(crate) fn timeout(secs: f64) -> Result<Duration, ModelError> {
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

impl Transport {
    /// Settings for `base_url` (e.g. `https://api.openai.com/v1`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        base_url: &str,
        auth: Arc<dyn Authenticate>,
        query: Query,
        headers: Vec<(String, String)>,
        timeout: Duration,
        max_retries: u32,
        max_response_bytes: usize,
    ) -> Result<Self, ModelError> {
        let headers = headers
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
        for (i, (name, value)) in query.iter().enumerate() {
            parameters.push(if i == 0 { '?' } else { '&' });
            parameters.push_str(&format!("{name}={value}"));
        }
        let client = shared_http_client(Some(timeout)).map_err(|e| {
            ModelError::new(
                ModelErrorKind::Connection,
                format!("cannot build the HTTP client: {e}"),
            )
        })?;
        Ok(Transport {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            auth,
            query: parameters,
            headers,
            timeout,
            max_retries,
            max_response_bytes,
        })
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

    /// POSTs `body` to `path`, retrying 429, 5xx and broken connections.
    /// `whole_timeout` bounds the entire exchange (off for streams, whose
    /// reads are bounded one by one instead).
    pub(crate) async fn post(
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
    pub(crate) async fn read_capped(
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

    pub(crate) fn too_large(&self) -> ModelError {
        ModelError::new(
            ModelErrorKind::TooLarge,
            format!("the answer exceeds {} bytes", self.max_response_bytes),
        )
    }

    /// Maps a reqwest failure; the URL is left out (it may carry credentials).
    pub(crate) fn transport_error(&self, e: reqwest::Error) -> ModelError {
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

    /// Reads a provider's error body, whatever its shape.
    pub(crate) fn provider_error(&self, status: u16, body: &[u8]) -> ModelError {
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

    /// Removes the credentials' secrets and header values from a message,
    /// in case a server quotes them, whole or cut short ([`hide`]).
    pub(crate) fn scrub(&self, mut e: ModelError) -> ModelError {
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
/// provider's text out altogether ([`crate::Error::client_text`]).
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
/// or the fields at the top level; `code` may be a string, a number or null.
pub(crate) fn error_fields(v: &Value) -> (String, Option<String>) {
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
        Some(Value::Number(n)) => Some(n.to_string()),
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

/// Runs `work` unless `cancel` fires first; dropping `work` aborts its request.
async fn cancellable<T>(
    cancel: Option<&CancelToken>,
    work: impl std::future::Future<Output = Result<T, (ModelError, Option<Duration>)>>,
) -> Result<T, (ModelError, Option<Duration>)> {
    match cancel {
        None => work.await,
        Some(token) => tokio::select! {
            biased;
            _ = token.cancelled() => Err((ModelError::new(ModelErrorKind::Cancelled, "the call was cancelled"), None)),
            result = work => result,
        },
    }
}

/// A `reqwest` client builder with nodekit's TLS set up: rustls on ring,
/// installed as the process's default provider unless one is installed
/// already. nodekit's models and HTTP tools build their clients with it;
/// build yours with it too, since reqwest alone (without a provider
/// feature) panics when it builds a client.
pub fn http_client() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err: the application installed its own first, which is then used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// The process's client from [`http_client`] with these connect and read
/// timeouts (`None`: reqwest's defaults), built once and shared. A client
/// holds the connection pool and the TLS settings: a model or HTTP tool
/// made anew for each run (each message of a chat server, each execution
/// in n8n) reuses the connections and TLS sessions of the runs before,
/// instead of building its TLS settings and connecting again.
pub fn shared_http_client(
    timeout: Option<std::time::Duration>,
) -> reqwest::Result<reqwest::Client> {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    use std::time::Duration;
    static CLIENTS: LazyLock<Mutex<HashMap<Option<Duration>, reqwest::Client>>> =
        LazyLock::new(Default::default);
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(client) = clients.get(&timeout) {
        return Ok(client.clone());
    }
    let mut builder = http_client();
    if let Some(timeout) = timeout {
        builder = builder.connect_timeout(timeout).read_timeout(timeout);
    }
    let client = builder.build()?;
    clients.insert(timeout, client.clone());
    Ok(client)
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
