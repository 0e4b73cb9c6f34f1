//! An OpenAI-compatible chat endpoint: `POST /v1/chat/completions`
//! (streamed as server-sent events with `"stream": true`) and
//! `GET /v1/models`. The last user message is the chat input; the
//! `X-Session-Id` header, or else the `user` field, names the session
//! whose memory the workflow uses. Without either, each request is a
//! session of its own. The model a client names is echoed, not used: the
//! workflow's own model answers.

use bytes::Bytes;
use hyper::header::{HeaderValue, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::ChatServer;
use super::http::{self, Body};
use nodekit_http_server::RequestBody;

/// The header that names the session.
pub const SESSION_HEADER: &str = "x-session-id";

/// An error as OpenAI's API writes one.
fn error(status: StatusCode, message: &str, param: Option<&str>) -> Response<Body> {
    let kind = match status {
        StatusCode::UNAUTHORIZED => "authentication_error",
        StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
        s if s.is_server_error() => "server_error",
        _ => "invalid_request_error",
    };
    http::json(
        status,
        &json!({"error": {"message": message, "type": kind, "param": param, "code": null}}),
    )
}

pub(super) async fn answer(server: &ChatServer, request: Request<RequestBody>) -> Response<Body> {
    if let Some(key) = &server.inner.options.api_key
        && !http::bearer_matches(request.headers(), key.as_bytes())
    {
        let mut refused = error(
            StatusCode::UNAUTHORIZED,
            "send the server's API key as `Authorization: Bearer <key>`",
            None,
        );
        refused
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    }
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/v1/models") => http::json(
            StatusCode::OK,
            &json!({"object": "list", "data": [{
                "id": model_name(server), "object": "model", "created": now(), "owned_by": "nodekit",
            }]}),
        ),
        (&Method::POST, "/v1/chat/completions") => completions(server, request).await,
        _ => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "use POST /v1/chat/completions or GET /v1/models",
            None,
        ),
    }
}

/// The name `/v1/models` lists: the workflow's, or `nodekit`.
fn model_name(server: &ChatServer) -> String {
    match server.inner.workflow.name.trim() {
        "" => "nodekit".into(),
        name => name.into(),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

async fn completions(server: &ChatServer, request: Request<RequestBody>) -> Response<Body> {
    let options = &server.inner.options;
    let header_session = request
        .headers()
        .get(SESSION_HEADER)
        .map(|v| v.to_str().map(str::to_owned));
    let body = match http::json_body(request, options.max_body_bytes).await {
        Ok(Value::Object(body)) => body,
        Ok(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "the request body must be a JSON object",
                None,
            );
        }
        Err(refused) => return refused,
    };
    let Some(input) = last_user_text(body.get("messages")).filter(|t| !t.trim().is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`messages` must hold a message with role `user` and text content",
            Some("messages"),
        );
    };
    if input.chars().count() > options.max_message_chars {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the last user message is longer than {} characters",
                options.max_message_chars
            ),
            Some("messages"),
        );
    }
    let session = match (header_session, body.get("user")) {
        (Some(Ok(id)), _) => id,
        (Some(Err(_)), _) => {
            return error(
                StatusCode::BAD_REQUEST,
                "the session header is not text",
                None,
            );
        }
        (None, Some(Value::String(user))) => user.clone(),
        (None, None | Some(Value::Null)) => format!("openai-{}", uuid::Uuid::new_v4().simple()),
        (None, Some(_)) => {
            return error(
                StatusCode::BAD_REQUEST,
                "`user` must be text: it names the session",
                Some("user"),
            );
        }
    };
    if let Err(problem) = super::check_session_id(&session) {
        return error(StatusCode::BAD_REQUEST, &problem, Some("user"));
    }
    // One answer a request: the workflow runs once.
    if let Some(n) = body.get("n")
        && !(n.is_null() || n.as_u64() == Some(1))
    {
        return error(
            StatusCode::BAD_REQUEST,
            "`n` must be 1: the workflow gives one answer a request",
            Some("n"),
        );
    }
    let session = server.openai_session(&session);
    let include_usage = body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        == Some(&Value::Bool(true));
    let Some(permit) = server.run_permit() else {
        let busy = error(StatusCode::TOO_MANY_REQUESTS, &server.busy_message(), None);
        return http::retry_after(busy);
    };
    let model = match body.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => model_name(server),
    };
    let item = json!({"action": "sendMessage", "sessionId": session, "chatInput": input});
    let id = format!("chatcmpl-{}", uuid::Uuid::new_v4().simple());
    if body.get("stream") == Some(&Value::Bool(true)) {
        return stream(server.clone(), item, id, model, include_usage, permit);
    }
    let result = server.run(item, None).await;
    drop(permit);
    match result {
        Ok(result) => {
            let text = super::output_text(result.items.first());
            let answer = http::json(
                StatusCode::OK,
                &json!({
                    "id": id, "object": "chat.completion", "created": now(), "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop", "logprobs": null}],
                    "usage": usage(&result.log),
                }),
            );
            http::with_model(answer, result.log.answered_by())
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.client_text(), None),
    }
}

/// The text of the last message with role `user` (text parts joined).
fn last_user_text(messages: Option<&Value>) -> Option<String> {
    let message = messages?
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")?;
    match &message["content"] {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let text: Vec<&str> = parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// The tokens the run's model calls reported, in OpenAI's names.
fn usage(log: &nodekit_core::run_log::RunLog) -> Value {
    let total = log.total_usage();
    json!({"prompt_tokens": total.input_tokens, "completion_tokens": total.output_tokens,
           "total_tokens": total.total_tokens})
}

/// Runs the workflow and sends the model's text as OpenAI's chunks, as it comes.
fn stream(
    server: ChatServer,
    item: Value,
    id: String,
    model: String,
    include_usage: bool,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response<Body> {
    let (tx, response) = http::streamed("text/event-stream");
    tokio::spawn(async move {
        let _permit = permit;
        let created = now();
        let event = |delta: Value, finish: Option<&str>| {
            let chunk = json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
            });
            Bytes::from(format!("data: {chunk}\n\n"))
        };
        if tx
            .send(event(json!({"role": "assistant", "content": ""}), None))
            .await
            .is_err()
        {
            return;
        }
        let sent = server
            .run_streamed(item, |text| {
                let sending = tx.send(event(json!({"content": text}), None));
                async move { sending.await.is_ok() }
            })
            .await;
        let Some((result, streamed)) = sent else {
            return;
        };
        match result {
            Ok(result) => {
                if !streamed {
                    let text = super::output_text(result.items.first());
                    let _ = tx.send(event(json!({"content": text}), None)).await;
                }
                let _ = tx.send(event(json!({}), Some("stop"))).await;
                // As OpenAI sends it: one more chunk, with no choices.
                if include_usage {
                    let chunk = json!({
                        "id": id, "object": "chat.completion.chunk", "created": created,
                        "model": model, "choices": [], "usage": usage(&result.log),
                    });
                    let _ = tx.send(Bytes::from(format!("data: {chunk}\n\n"))).await;
                }
            }
            Err(e) => {
                let failure = json!({"error": {"message": e.client_text(), "type": "server_error", "param": null, "code": null}});
                let _ = tx.send(Bytes::from(format!("data: {failure}\n\n"))).await;
            }
        }
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chat_input_is_the_last_user_message() {
        let messages = json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        ]);
        assert_eq!(last_user_text(Some(&messages)).as_deref(), Some("second"));
        assert_eq!(
            last_user_text(Some(&json!([{"role": "system", "content": "x"}]))),
            None
        );
        assert_eq!(last_user_text(None), None);
    }
}
