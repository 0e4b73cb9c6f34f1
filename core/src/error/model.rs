//! What a failed model call reports: [`ModelError`]. A leaf: it names nothing else of the crate.

/// What kind of failure a model call had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The API key was refused (401/403).
    Auth,
    /// Too many requests (429), after the retries.
    RateLimited,
    /// The request was refused as invalid (400, 422, ...).
    BadRequest,
    /// Unknown model or endpoint (404).
    NotFound,
    /// The server failed (5xx), after the retries.
    Server,
    /// No answer within the timeout.
    Timeout,
    /// The connection failed or broke off.
    Connection,
    /// The call was cancelled.
    Cancelled,
    /// The answer could not be read.
    Protocol,
    /// The answer was larger than allowed.
    TooLarge,
}

/// A failed model call: what, the HTTP status, and the provider's message.
/// Never contains the API key. The transport's own failure (an HTTP or I/O
/// error), when there was one, is its [`source`](std::error::Error::source).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", self.render())]
pub struct ModelError {
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// The HTTP status, if there was a response.
    pub status: Option<u16>,
    /// The provider's message (or ours).
    pub message: String,
    /// The provider's error code, if any.
    pub code: Option<String>,
    /// How many attempts were made.
    pub attempts: u32,
    /// What failed underneath, kept for inspection (a provider's crate
    /// sets it with [`ModelError::with_source`]).
    #[source]
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl ModelError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            status: None,
            message: message.into(),
            code: None,
            attempts: 1,
            source: None,
        }
    }

    /// The same error with the HTTP status `status`.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// The same error with the provider's error code `code`.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The same error caused by `source` (an HTTP client's or an I/O
    /// error). Its text must hold no secret: it is shown as the cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(std::sync::Arc::new(source));
        self
    }

    /// The error without the provider's message text: its kind, HTTP
    /// status, error code and attempts. What a remote client of a server
    /// is shown, since a provider's text may quote the client's own input
    /// next to a secret.
    pub fn without_message(&self) -> ModelError {
        ModelError {
            message: String::new(),
            ..self.clone()
        }
    }

    fn render(&self) -> String {
        let what = match self.kind {
            ModelErrorKind::Auth => "the API key was refused",
            ModelErrorKind::RateLimited => "rate limited",
            ModelErrorKind::BadRequest => "the request was refused",
            ModelErrorKind::NotFound => "model or endpoint not found",
            ModelErrorKind::Server => "server error",
            ModelErrorKind::Timeout => "timed out",
            ModelErrorKind::Connection => "connection failed",
            ModelErrorKind::Cancelled => "cancelled",
            ModelErrorKind::Protocol => "unreadable answer",
            ModelErrorKind::TooLarge => "answer too large",
        };
        let mut out = format!("model call failed: {what}");
        if let Some(status) = self.status {
            out.push_str(&format!(" (HTTP {status})"));
        }
        if let Some(code) = &self.code {
            out.push_str(&format!(" [{code}]"));
        }
        if !self.message.is_empty() {
            out.push_str(": ");
            out.push_str(&self.message);
        }
        if self.attempts > 1 {
            out.push_str(&format!(" (after {} attempts)", self.attempts));
        }
        out
    }

    /// Whether trying again may help (429, 5xx, broken connections, no
    /// answer in time: OpenAI's own clients retry those too).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            ModelErrorKind::RateLimited
                | ModelErrorKind::Server
                | ModelErrorKind::Connection
                | ModelErrorKind::Timeout
        )
    }
}
