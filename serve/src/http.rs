//! What every endpoint needs: bodies read within their limit, JSON and
//! streamed answers, credentials checked.

use std::convert::Infallible;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::Frame;
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

pub(super) use nodekit_http_server::Body;
use nodekit_http_server::RequestBody;

/// A JSON answer.
pub(super) use nodekit_http_server::json_answer as json;

/// A refusal or failure as n8n's webhooks answer one: `{"message": ...}`.
pub(super) fn json_error(status: StatusCode, message: &str) -> Response<Body> {
    json(
        status,
        &serde_json::json!({"code": status.as_u16(), "message": message}),
    )
}

/// The header that names the model that answered (the fallback model,
/// when it stood in, or the one a model selector chose).
pub(super) const MODEL_HEADER: &str = "x-nodekit-model";

/// `response` with [`MODEL_HEADER`] naming `model`, when it is known.
pub(super) fn with_model(mut response: Response<Body>, model: Option<String>) -> Response<Body> {
    if let Some(value) = model.and_then(|m| HeaderValue::from_str(&m).ok()) {
        response.headers_mut().insert(MODEL_HEADER, value);
    }
    response
}

/// `response` (a 429) with `Retry-After: 1`.
pub(super) fn retry_after(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A response whose body is written as `chunks` arrive; it ends when the
/// sender is dropped.
pub(super) fn streamed(content_type: &'static str) -> (mpsc::Sender<Bytes>, Response<Body>) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(64);
    let frames = futures::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok::<_, Infallible>(Frame::data(c))))
    });
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        hyper::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    (tx, response)
}

/// The request's body as JSON, read up to `limit` bytes; or the answer
/// that refuses it (413 when too large, 415 for a form, 400 when not JSON;
/// one that comes too slowly gets 408 from the connection's policy).
pub(super) async fn json_body(
    request: Request<RequestBody>,
    limit: usize,
) -> Result<Value, Response<Body>> {
    let too_large = || {
        json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("the request body is larger than {limit} bytes"),
        )
    };
    let headers = request.headers();
    let length = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let form = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("multipart/form-data"));
    if form {
        return Err(json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "file uploads are not supported: send the message as JSON",
        ));
    }
    let bytes = match Limited::new(request.into_body(), limit).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Err(e) => {
            return Err(json_error(
                StatusCode::BAD_REQUEST,
                &format!("the request body could not be read: {e}"),
            ));
        }
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        json_error(
            StatusCode::BAD_REQUEST,
            &format!("the request body is not JSON: {e}"),
        )
    })
}

/// Whether the request carries `Authorization: Basic` for `expected`
/// (`user:password`).
pub(super) fn basic_auth_matches(headers: &HeaderMap, expected: &[u8]) -> bool {
    let Some(given) = headers.get(AUTHORIZATION).map(HeaderValue::as_bytes) else {
        return false;
    };
    let Some((scheme, encoded)) = given.split_at_checked(6) else {
        return false;
    };
    scheme.eq_ignore_ascii_case(b"Basic ")
        && base64::engine::general_purpose::STANDARD
            .decode(encoded.trim_ascii())
            .is_ok_and(|decoded| nodekit_http_server::same_secret(&decoded, expected))
}

/// Whether the request carries `Authorization: Bearer <token>`.
pub(super) fn bearer_matches(headers: &HeaderMap, token: &[u8]) -> bool {
    nodekit_http_server::bearer_matches(
        headers.get(AUTHORIZATION).map(HeaderValue::as_bytes),
        token,
    )
}
