//! n8n's Chat Trigger protocol, as `@n8n/chat` speaks it, at
//! `/webhook/<webhookId>/chat`:
//!
//! - `POST {"action": "sendMessage", "sessionId", "chatInput"}` answers the
//!   last node's first item (`{"output": ...}`), or, when the trigger
//!   streams, newline-delimited JSON chunks as n8n writes them:
//!   `{"type": "begin" | "item" | "end" | "error", "content", "metadata"}`;
//! - `POST {"action": "loadPreviousSession", "sessionId"}` answers
//!   `{"data": [...]}`, the memory's messages in LangChain's serialized
//!   form (what the widget reads);
//! - `GET` is the hosted chat page, when the trigger is public in hosted mode;
//! - `OPTIONS` is the browser's CORS preflight.

use bytes::Bytes;
use hyper::header::{HeaderValue, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::ChatServer;
use super::http::{self, Body, json_error};
use nodekit_core::message::{Message, Role};
use nodekit_http_server::RequestBody;
use nodekit_workflow::{AllowedOrigins, ChatTrigger, ResponseMode, RunOptions};

/// Answers a request at the chat path.
pub(super) async fn answer(server: &ChatServer, request: Request<RequestBody>) -> Response<Body> {
    let trigger = server
        .inner
        .trigger
        .as_ref()
        .expect("only the chat path comes here");
    // As n8n: a trigger that is not public has no production URL.
    if !trigger.public {
        return json_error(
            StatusCode::NOT_FOUND,
            "this chat is not public: turn on the Chat Trigger's \"Make Chat Publicly Available\"",
        );
    }
    let origin = request
        .headers()
        .get(ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_owned);
    // The hosted page's own requests carry its origin, which is this
    // server's: only other origins are held to the list.
    let host = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok());
    if let Some(origin) = &origin
        && !same_origin(origin, host)
        && !trigger.allowed_origins.allows(origin)
    {
        return json_error(
            StatusCode::FORBIDDEN,
            "this page's origin may not use the chat: it is not among the Chat Trigger's allowed origins",
        );
    }
    let mut response = if request.method() == Method::OPTIONS {
        preflight(&request)
    } else if let Some(expected) = &server.inner.basic_auth
        && !http::basic_auth_matches(request.headers(), expected)
    {
        let mut refused = json_error(StatusCode::UNAUTHORIZED, "authorization is required");
        refused.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"Webhook\""),
        );
        refused
    } else {
        match *request.method() {
            Method::GET if trigger.hosted => page(server, trigger),
            Method::POST => message(server, trigger, request).await,
            _ => json_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "the chat takes POST (and GET for the hosted page)",
            ),
        }
    };
    if let Some(origin) = origin {
        let allowed = match &trigger.allowed_origins {
            AllowedOrigins::Any => HeaderValue::from_static("*"),
            AllowedOrigins::Only(_) => {
                HeaderValue::from_str(&origin).unwrap_or(HeaderValue::from_static("null"))
            }
        };
        let headers = response.headers_mut();
        headers.insert(hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
        headers.insert(hyper::header::VARY, HeaderValue::from_static("Origin"));
    }
    response
}

/// Whether `origin` (`scheme://host[:port]`) is the server the request
/// was sent to (its `Host` header).
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let authority = origin.split_once("://").map(|(_, rest)| rest);
    host.is_some_and(|h| authority.is_some_and(|a| a.eq_ignore_ascii_case(h)))
}

/// The browser asks whether a page of another origin may post.
fn preflight(request: &Request<RequestBody>) -> Response<Body> {
    let mut response = Response::new(http_body_util::BodyExt::boxed(http_body_util::Empty::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    let asked = request
        .headers()
        .get(hyper::header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or(HeaderValue::from_static("content-type"));
    headers.insert(hyper::header::ACCESS_CONTROL_ALLOW_HEADERS, asked);
    headers.insert(
        hyper::header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

/// A `sendMessage` or `loadPreviousSession` action.
async fn message(
    server: &ChatServer,
    trigger: &ChatTrigger,
    request: Request<RequestBody>,
) -> Response<Body> {
    let options = &server.inner.options;
    let body = match http::json_body(request, options.max_body_bytes).await {
        Ok(Value::Object(body)) => body,
        Ok(_) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "the request body must be a JSON object",
            );
        }
        Err(refused) => return refused,
    };
    let session = match body.get("sessionId") {
        Some(Value::String(id)) => id.clone(),
        _ => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "`sessionId` is missing: send it as text",
            );
        }
    };
    if let Err(problem) = super::check_session_id(&session) {
        return json_error(StatusCode::BAD_REQUEST, &problem);
    }
    match body.get("action").and_then(Value::as_str) {
        Some("loadPreviousSession") => previous_session(server, trigger, Value::Object(body)).await,
        Some("sendMessage") => {
            let chars = match body.get("chatInput") {
                Some(Value::String(text)) if text.trim().is_empty() => {
                    return json_error(StatusCode::BAD_REQUEST, "`chatInput` is empty");
                }
                Some(Value::String(text)) => text.chars().count(),
                _ => {
                    return json_error(
                        StatusCode::BAD_REQUEST,
                        "`chatInput` is missing: send the message as text",
                    );
                }
            };
            if chars > options.max_message_chars {
                return json_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "the message is longer than {} characters",
                        options.max_message_chars
                    ),
                );
            }
            let Some(permit) = server.run_permit() else {
                return http::retry_after(json_error(
                    StatusCode::TOO_MANY_REQUESTS,
                    &server.busy_message(),
                ));
            };
            match trigger.response_mode {
                ResponseMode::LastNode => {
                    let answer = last_node(server, Value::Object(body)).await;
                    drop(permit);
                    answer
                }
                ResponseMode::Streaming => stream(server, Value::Object(body), permit),
            }
        }
        other => json_error(
            StatusCode::BAD_REQUEST,
            &format!(
                "unknown action {}: use `sendMessage` or `loadPreviousSession`",
                other.map_or("(none)".into(), |a| format!(
                    "`{}`",
                    nodekit_core::error::shorten(a, 40)
                ))
            ),
        ),
    }
}

/// Runs the workflow and answers its last node's first item, as n8n's
/// "When Last Node Finishes" does.
async fn last_node(server: &ChatServer, input: Value) -> Response<Body> {
    match server.run(input, None).await {
        Ok(result) => {
            let answer = match result.items.into_iter().next() {
                Some(item) => http::json(StatusCode::OK, &item),
                None => http::json(
                    StatusCode::OK,
                    &json!({"message": "Workflow executed successfully but no data was returned"}),
                ),
            };
            http::with_model(answer, result.log.answered_by())
        }
        Err(e) => failed(&e),
    }
}

/// A failed run: its error, which names the node and never a credential
/// (a model provider's own text only goes to the log).
fn failed(e: &nodekit_core::Error) -> Response<Body> {
    json_error(StatusCode::INTERNAL_SERVER_ERROR, &e.client_text())
}

/// Runs the workflow and streams the model's text as it comes, in n8n's
/// chunks. A text that was not streamed (a workflow without a streaming
/// model) is sent whole as one item at the end.
fn stream(
    server: &ChatServer,
    input: Value,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response<Body> {
    let (tx, response) = http::streamed("application/json; charset=utf-8");
    let server = server.clone();
    tokio::spawn(async move {
        let _permit = permit;
        let (id, name) = server.inner.streaming_node.clone();
        let chunk = |kind: &str, content: Option<&str>| {
            let metadata = json!({
                "nodeId": id, "nodeName": name, "itemIndex": 0, "runIndex": 0,
                "timestamp": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            });
            let mut line = match content {
                Some(content) => json!({"type": kind, "content": content, "metadata": metadata}),
                None => json!({"type": kind, "metadata": metadata}),
            }
            .to_string();
            line.push('\n');
            Bytes::from(line)
        };
        if tx.send(chunk("begin", None)).await.is_err() {
            return;
        }
        let sent = server
            .run_streamed(input, |text| {
                let sending = tx.send(chunk("item", Some(&text)));
                async move { sending.await.is_ok() }
            })
            .await;
        let Some((result, streamed)) = sent else {
            return;
        };
        let last = match result {
            Ok(result) => {
                if !streamed && !result.items.is_empty() {
                    let text = super::output_text(result.items.first());
                    let _ = tx.send(chunk("item", Some(&text))).await;
                }
                chunk("end", None)
            }
            Err(e) => chunk("error", Some(&e.client_text())),
        };
        let _ = tx.send(last).await;
    });
    response
}

/// The memory's messages for the session, as the widget reads them.
async fn previous_session(
    server: &ChatServer,
    trigger: &ChatTrigger,
    input: Value,
) -> Response<Body> {
    if !trigger.load_previous_session {
        return http::json(StatusCode::OK, &json!({"data": []}));
    }
    let inner = &server.inner;
    let options = RunOptions {
        input,
        credentials: inner.credentials.clone(),
        events: None,
        pools: inner.pools.clone(),
    };
    match inner
        .workflow
        .stored_messages(inner.catalog, &trigger.node, &options)
        .await
    {
        Ok(Some(messages)) => {
            let data: Vec<Value> = messages.iter().filter_map(serialized).collect();
            http::json(StatusCode::OK, &json!({"data": data}))
        }
        Ok(None) => json_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the Chat Trigger loads previous sessions from memory, but no memory is connected to it",
        ),
        Err(e) => {
            tracing::warn!(error = %e, "serve: loading a previous session failed");
            failed(&e)
        }
    }
}

/// A message as LangChain's `toJSON()` writes it, which `@n8n/chat` reads
/// (`id` names the class, `kwargs.content` the text). Only what the user
/// saw: their messages and the answers; tool calls and results are left out.
fn serialized(message: &Message) -> Option<Value> {
    let class = match message.role {
        Role::Human => "HumanMessage",
        Role::Ai if message.tool_calls.is_empty() => "AIMessage",
        _ => return None,
    };
    let mut kwargs = json!({
        "content": message.text(),
        "additional_kwargs": message.additional_kwargs,
        "response_metadata": {},
    });
    if message.role == Role::Ai {
        kwargs["tool_calls"] = json!([]);
        kwargs["invalid_tool_calls"] = json!([]);
    }
    Some(json!({
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", class],
        "kwargs": kwargs,
    }))
}

/// The hosted chat page: n8n's widget, loaded from the configured URL,
/// pointed at this chat.
fn page(server: &ChatServer, trigger: &ChatTrigger) -> Response<Body> {
    let base = server.inner.options.chat_bundle_url.trim_end_matches('/');
    let mut i18n = serde_json::Map::new();
    for key in ["title", "subtitle", "inputPlaceholder", "getStarted"] {
        if let Some(Value::String(text)) = trigger.page.get(key) {
            i18n.insert(key.into(), Value::String(text.clone()));
        }
    }
    let initial: Vec<&str> = trigger
        .initial_messages
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let config = json!({
        "mode": "fullscreen",
        "webhookUrl": trigger.path(),
        "showWelcomeScreen": trigger.page.get("showWelcomeScreen").and_then(Value::as_bool).unwrap_or(false),
        "loadPreviousSession": trigger.load_previous_session,
        "enableStreaming": trigger.response_mode == ResponseMode::Streaming,
        "initialMessages": initial,
        "i18n": {"en": i18n},
    });
    // With basic authentication, the browser sends the credentials it was
    // asked for with the widget's requests too (same origin): the page
    // never holds them.
    let css = trigger
        .page
        .get("customCss")
        .and_then(Value::as_str)
        .unwrap_or("");
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    // The self-contained build of the widget (the ES one imports chunks,
    // which a hash on the page cannot cover), checked when hashes are set.
    let (script_integrity, style_integrity) = match &server.inner.options.chat_bundle_integrity {
        Some(hashes) => (
            format!(" integrity=\"{}\"", html_attribute(&hashes.script)),
            format!(" integrity=\"{}\"", html_attribute(&hashes.style)),
        ),
        None => Default::default(),
    };
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Chat</title>\n\
         <link href=\"{bundle}/style.css\" rel=\"stylesheet\" crossorigin=\"anonymous\"{style_integrity}>\n\
         <style>html, body, #n8n-chat {{ width: 100%; height: 100%; margin: 0; }}</style>\n\
         <style>{css}</style>\n\
         <script src=\"{bundle}/chat.bundle.umd.js\" crossorigin=\"anonymous\"{script_integrity} nonce=\"{nonce}\"></script>\n\
         </head>\n<body>\n<script nonce=\"{nonce}\">\nN8nChat.createChat({config});\n</script>\n</body>\n</html>\n",
        bundle = html_attribute(base),
        css = css.replace('<', "\\3c "),
        config = script_json(&config),
    );
    // The page runs its own script and the widget's, talks to this server
    // only, and may not be framed.
    let widget = origin_of(base).unwrap_or("'self'");
    let policy = format!(
        "default-src 'none'; script-src 'nonce-{nonce}' {widget}; style-src 'unsafe-inline' {widget}; \
         img-src 'self' data: {widget}; font-src data: {widget}; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    let mut response = Response::new(http_body_util::BodyExt::boxed(http_body_util::Full::new(
        Bytes::from(html),
    )));
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(hyper::header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(
        hyper::header::X_FRAME_OPTIONS,
        HeaderValue::from_static("DENY"),
    );
    headers.insert(
        hyper::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        hyper::header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// `scheme://host[:port]` of an absolute URL; `None` for a path.
fn origin_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find('/').unwrap_or(rest.len());
    Some(&url[..scheme.len() + 3 + end])
}

/// JSON that is safe inside a `<script>`: no `<` that could close it.
fn script_json(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

/// Text that is safe inside a double-quoted HTML attribute.
fn html_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_serialized_as_langchain_writes_them() {
        let human = serialized(&Message::human("Who are our customers?")).unwrap();
        assert_eq!(
            human,
            json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"],
                   "kwargs": {"content": "Who are our customers?", "additional_kwargs": {}, "response_metadata": {}}})
        );
        let ai = serialized(&Message::ai("Ada and Grace.")).unwrap();
        assert_eq!(ai["id"][2], "AIMessage");
        assert_eq!(ai["kwargs"]["content"], "Ada and Grace.");
        assert_eq!(serialized(&Message::system("be brief")), None);
    }

    #[test]
    fn what_goes_into_the_page_cannot_close_its_script() {
        let json = script_json(&json!({"title": "</script><script>alert(1)</script>"}));
        assert!(!json.contains("</script>"), "{json}");
        assert_eq!(
            serde_json::from_str::<Value>(&json).unwrap()["title"],
            "</script><script>alert(1)</script>"
        );
        assert_eq!(html_attribute("a\"b<c>&"), "a&quot;b&lt;c&gt;&amp;");
    }

    #[test]
    fn the_widgets_origin_is_read_from_its_url() {
        assert_eq!(
            origin_of("https://cdn.jsdelivr.net/npm/@n8n/chat@1.37.0/dist"),
            Some("https://cdn.jsdelivr.net")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:9/chat"),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(origin_of("/static/chat"), None);
    }
}
