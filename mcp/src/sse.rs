//! The protocol's older HTTP transport (HTTP+SSE, protocol 2024-11-05),
//! client side, for servers that do not speak Streamable HTTP yet; n8n
//! still offers it, marked deprecated. rmcp no longer ships it.
//!
//! The client opens an event stream with `GET`; the server's first event,
//! `endpoint`, names the URL (relative to the stream's) that the client
//! `POST`s each message to; the server's messages arrive as `message`
//! events on the stream.

use std::collections::VecDeque;

use futures::{Sink, Stream, StreamExt};
use reqwest::header::{ACCEPT, HeaderMap};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};

use nodekit_core::error::with_causes;
use nodekit_http::sse::{SseEvent, SseParser};

/// The largest event accepted on the stream: 16 MiB.
const MAX_EVENT_BYTES: usize = 16 << 20;

/// A message could not be posted to the server.
#[derive(Debug, thiserror::Error)]
#[error("posting a message failed: {0}")]
pub struct SendError(String);

/// Opens the event stream at `url` and waits for the server's `endpoint`
/// event; returns the sink of messages to the server and the stream of its
/// messages, for rmcp's transport of a sink and a stream.
pub(super) async fn connect(
    client: reqwest::Client,
    url: &str,
    headers: HeaderMap,
) -> Result<
    (
        impl Sink<ClientJsonRpcMessage, Error = SendError> + Send + Unpin + 'static,
        impl Stream<Item = ServerJsonRpcMessage> + Send + Unpin + 'static,
    ),
    String,
> {
    let base = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| e.without_url().to_string())?;
    if !response.status().is_success() {
        return Err(format!(
            "the event stream was refused: {}",
            response.status()
        ));
    }
    let mut events = Box::pin(events(response));
    let endpoint = loop {
        match events.next().await {
            Some(event) if event.event.as_deref() == Some("endpoint") => {
                let endpoint = base
                    .join(event.data.trim())
                    .map_err(|e| format!("its `endpoint` event is not a URL: {e}"))?;
                // The credentials' headers go only where they were meant to.
                if endpoint.origin() != base.origin() {
                    return Err("its `endpoint` event names another server; refused".into());
                }
                break endpoint;
            }
            Some(_) => {}
            None => return Err("the event stream ended before its `endpoint` event".into()),
        }
    };
    let messages = events.filter_map(|event| async move {
        match event.event.as_deref() {
            None | Some("message") => match serde_json::from_str(&event.data) {
                Ok(message) => Some(message),
                Err(e) => {
                    tracing::warn!(error = %e, "mcp: a message of the event stream is not JSON-RPC");
                    None
                }
            },
            _ => None,
        }
    });
    let posts = futures::sink::unfold(
        (client, endpoint, headers),
        |(client, endpoint, headers), message: ClientJsonRpcMessage| async move {
            let response = client
                .post(endpoint.clone())
                .headers(headers.clone())
                .json(&message)
                .send()
                .await
                .map_err(|e| SendError(with_causes(&e.without_url())))?;
            if !response.status().is_success() {
                return Err(SendError(format!(
                    "the server answered {}",
                    response.status()
                )));
            }
            Ok((client, endpoint, headers))
        },
    );
    Ok((Box::pin(posts), Box::pin(messages)))
}

/// The events of a response's body, until it ends or breaks.
fn events(response: reqwest::Response) -> impl Stream<Item = SseEvent> + Send {
    let state = (
        response.bytes_stream(),
        SseParser::new(MAX_EVENT_BYTES),
        VecDeque::new(),
        false,
    );
    futures::stream::unfold(
        state,
        |(mut body, mut parser, mut ready, mut ended)| async move {
            loop {
                if let Some(event) = ready.pop_front() {
                    return Some((event, (body, parser, ready, ended)));
                }
                if ended {
                    return None;
                }
                let mut out = Vec::new();
                let fed = match body.next().await {
                    Some(Ok(bytes)) => parser.feed(&bytes, &mut out),
                    // The stream broke or ended: what was read still counts.
                    Some(Err(_)) | None => {
                        ended = true;
                        parser.finish(&mut out)
                    }
                };
                if fed.is_err() {
                    tracing::warn!(
                        "mcp: an event of the stream is over {MAX_EVENT_BYTES} bytes; the stream is closed"
                    );
                    return None;
                }
                ready.extend(out);
            }
        },
    )
}
