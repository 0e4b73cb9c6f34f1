//! How a request says who sends it: [`Authenticate`], and the schemes
//! most providers use ([`Bearer`], [`HeaderKey`], [`QueryKey`]).

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
pub(crate) fn header_name(name: &str) -> Result<http::HeaderName, ModelError> {
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
