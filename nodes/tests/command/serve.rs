//! `nodekit serve` as its clients meet it, over real HTTP on 127.0.0.1: n8n's
//! chat protocol (what `@n8n/chat` sends), the OpenAI-compatible endpoint,
//! the limits and refusals, two servers sharing one PostgreSQL memory, and
//! a graceful stop. The model is the scripted OpenAI-compatible server.

use std::process::Stdio;
use std::time::Duration;

use nodekit_test_support::openai::{Reply, Server, Step};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const WEBHOOK: &str = "6f1d1d2e-5b1a-4c59-9c0e-2a7d8a9b0c11";

/// A workflow as n8n exports it: Chat Trigger, nodekit's agent, chat model
/// and a chat memory connected to both the agent and the trigger.
fn workflow(trigger: Value, memory_type: &str, memory: Value) -> std::path::PathBuf {
    let workflow = json!({
        "name": "Shop assistant",
        "nodes": [
            {"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger",
             "typeVersion": 1.4, "id": "a1", "webhookId": WEBHOOK, "parameters": trigger},
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "id": "b2", "parameters": {}},
            {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1,
             "parameters": {"model": "m"}},
            {"name": "Memory", "type": memory_type, "typeVersion": 1, "parameters": memory},
        ],
        "connections": {
            "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
            "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Memory": {"ai_memory": [
                [{"node": "AI Agent", "type": "ai_memory", "index": 0},
                 {"node": "When chat message received", "type": "ai_memory", "index": 0}]
            ]},
        },
    });
    let path = nodekit_test_support::scratch_dir()
        .join(format!("{}.json", nodekit_test_support::unique("serve")));
    std::fs::write(&path, workflow.to_string()).unwrap();
    path
}

/// A public, embedded chat that loads previous sessions from its memory.
fn public(options: Value) -> Value {
    let mut options = options;
    options["loadPreviousSession"] = json!("memory");
    json!({"public": true, "mode": "webhook", "options": options})
}

fn sqlite_memory() -> Value {
    let db = nodekit_test_support::scratch_dir()
        .join(format!("{}.db", nodekit_test_support::unique("serve")));
    json!({"databasePath": db})
}

/// A whole answer, as a model answers a request that does not stream.
fn answer(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "c", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}),
    )
}

/// An answer streamed in `pieces`, one event each.
fn pieces(pieces: &[&str]) -> Reply {
    let mut events: Vec<Value> = pieces
        .iter()
        .map(|p| json!({"choices": [{"delta": {"content": p}, "finish_reason": null}]}))
        .collect();
    events.push(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}));
    Reply::sse(&events)
}

/// A running `nodekit serve`.
struct Served {
    child: Child,
    base: String,
}

impl Served {
    async fn start(workflow: &std::path::Path, credentials: Value, extra: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
            .arg("serve")
            .arg(workflow)
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
            .env("NODEKIT_CREDENTIALS", credentials.to_string())
            .env_remove("NODEKIT_CREDENTIALS_FILE")
            .env("SERVE_TEST_KEY", "k-123")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix("nodekit: OpenAI-compatible endpoint at ") {
                    return rest.trim_end_matches("/v1/chat/completions").to_owned();
                }
                assert!(!line.contains("nodekit: error"), "{line}");
            }
            panic!("nodekit serve stopped before serving");
        })
        .await
        .expect("nodekit serve starts");
        // Its later lines are not needed; keep the pipe drained.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Served { child, base }
    }

    /// Sends the server SIGTERM.
    #[cfg(unix)]
    fn terminate(&self) {
        let pid = self.child.id().unwrap().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
    }

    fn chat_url(&self) -> String {
        format!("{}/webhook/{WEBHOOK}/chat", self.base)
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        client()
            .post(self.chat_url())
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    async fn send(&self, session: &str, text: &str) -> Value {
        let response = self
            .post(json!({"action": "sendMessage", "sessionId": session, "chatInput": text}))
            .await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, 200, "{body}");
        body
    }

    async fn previous(&self, session: &str) -> Vec<(String, String)> {
        let response = self
            .post(json!({"action": "loadPreviousSession", "sessionId": session}))
            .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let class = m["id"][2].as_str().unwrap().to_owned();
                (class, m["kwargs"]["content"].as_str().unwrap().to_owned())
            })
            .collect()
    }
}

fn content_type(response: &reqwest::Response) -> &str {
    response.headers()["content-type"].to_str().unwrap()
}

/// An HTTP client (nodekit's, with its TLS provider installed).
fn client() -> reqwest::Client {
    nodekit::model::http_client().build().unwrap()
}

fn model(server: &Server) -> Value {
    json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}})
}

fn exchange(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .flat_map(|(q, a)| {
            [
                ("HumanMessage".to_owned(), q.to_string()),
                ("AIMessage".to_owned(), a.to_string()),
            ]
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_protocol_answers_and_loads_previous_sessions() {
    let model_server = Server::start(vec![
        answer("Hi Ada."),
        answer("You are Ada."),
        answer("Hi Grace."),
    ])
    .await;
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let served = Served::start(&path, model(&model_server), &[]).await;

    assert_eq!(
        served.send("ada-1", "I am Ada").await,
        json!({"output": "Hi Ada."})
    );
    assert_eq!(
        served.send("ada-1", "Who am I?").await,
        json!({"output": "You are Ada."})
    );
    // The memory gave the model the session's first exchange.
    let second = &model_server.seen()[1].body["messages"];
    assert_eq!(second[1], json!({"role": "user", "content": "I am Ada"}));
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": "Hi Ada."})
    );
    // Another session is its own.
    assert_eq!(
        served.send("grace-1", "I am Grace").await,
        json!({"output": "Hi Grace."})
    );
    // The agent's system message and the new input only.
    assert_eq!(
        model_server.seen()[2].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    assert_eq!(
        served.previous("ada-1").await,
        exchange(&[("I am Ada", "Hi Ada."), ("Who am I?", "You are Ada.")])
    );
    assert_eq!(
        served.previous("grace-1").await,
        exchange(&[("I am Grace", "Hi Grace.")])
    );
    assert_eq!(served.previous("nobody").await, []);

    let health = client()
        .get(format!("{}/healthz", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_trigger_sends_n8ns_chunks_as_the_model_writes() {
    let model_server = Server::start(vec![pieces(&["Ada ", "lives in ", "London."])]).await;
    let path = workflow(
        public(json!({"responseMode": "streaming"})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let served = Served::start(&path, model(&model_server), &[]).await;
    let response = served
        .post(json!({"action": "sendMessage", "sessionId": "s-1", "chatInput": "Where is Ada?"}))
        .await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let chunks: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("a JSON line: {l}")))
        .collect();
    let kinds: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["begin", "item", "item", "item", "end"], "{text}");
    let items: String = chunks
        .iter()
        .filter_map(|c| c["content"].as_str())
        .collect();
    assert_eq!(items, "Ada lives in London.");
    for c in &chunks {
        assert_eq!(c["metadata"]["nodeName"], "AI Agent");
        assert_eq!(c["metadata"]["nodeId"], "b2");
    }
    assert!(model_server.seen()[0].body["stream"] == json!(true));
    // The streamed answer was saved like any other.
    assert_eq!(
        served.previous("s-1").await,
        exchange(&[("Where is Ada?", "Ada lives in London.")])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_endpoint_answers_whole_and_streamed() {
    let streamed_with_usage = Reply::sse(&[
        json!({"choices": [{"delta": {"content": "You "}, "finish_reason": null}]}),
        json!({"choices": [{"delta": {"content": "are "}, "finish_reason": null}]}),
        json!({"choices": [{"delta": {"content": "Ada."}, "finish_reason": null}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}}),
    ]);
    let model_server = Server::start(vec![answer("Hi Ada."), streamed_with_usage]).await;
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let served = Served::start(
        &path,
        model(&model_server),
        &["--api-key-env", "SERVE_TEST_KEY"],
    )
    .await;
    let client = client();
    let url = format!("{}/v1/chat/completions", served.base);

    let refused = client
        .post(&url)
        .json(&json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");

    let whole: Value = client
        .post(&url)
        .bearer_auth("k-123")
        .json(&json!({"model": "shop", "user": "ada-2",
                      "messages": [{"role": "system", "content": "ignored"}, {"role": "user", "content": "I am Ada"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(whole["object"], "chat.completion");
    assert_eq!(whole["model"], "shop");
    assert_eq!(
        whole["choices"][0]["message"],
        json!({"role": "assistant", "content": "Hi Ada."})
    );
    assert_eq!(whole["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        whole["usage"],
        json!({"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15})
    );

    let streamed = client
        .post(&url)
        .bearer_auth("k-123")
        .header("x-session-id", "ada-2")
        .json(
            &json!({"model": "shop", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "Who am I?"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), 200);
    assert!(content_type(&streamed).starts_with("text/event-stream"));
    let text = streamed.text().await.unwrap();
    let events: Vec<&str> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"), "{text}");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "You are Ada.");
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "stop"
    );
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "shop")
    );
    // `user` and the header named the same session: the memory held the first exchange.
    let second = &model_server.seen()[1].body["messages"];
    assert_eq!(second[1], json!({"role": "user", "content": "I am Ada"}));
    // Asked for, the tokens come in one more chunk, with no choices.
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]), "{text}");
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}),
        "{text}"
    );

    // The chat path, which the API key does not guard, cannot reach a
    // `/v1` session: the same name there is another conversation.
    let chat = client
        .post(served.chat_url())
        .json(&json!({"action": "loadPreviousSession", "sessionId": "ada-2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(chat.status(), 200);
    assert_eq!(chat.json::<Value>().await.unwrap(), json!({"data": []}));

    // What the endpoint cannot honour is refused, not ignored.
    for (body, param) in [
        (
            json!({"user": 42, "messages": [{"role": "user", "content": "hi"}]}),
            "user",
        ),
        (
            json!({"n": 3, "messages": [{"role": "user", "content": "hi"}]}),
            "n",
        ),
        (
            json!({"messages": [{"role": "user", "content": ""}]}),
            "messages",
        ),
    ] {
        let refused = client
            .post(&url)
            .bearer_auth("k-123")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{body}");
        let answer: Value = refused.json().await.unwrap();
        assert_eq!(answer["error"]["param"], param, "{answer}");
    }

    let models: Value = client
        .get(format!("{}/v1/models", served.base))
        .bearer_auth("k-123")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "Shop assistant");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_clear_refusals() {
    let model_server = Server::start(vec![answer("slow").after(Duration::from_millis(1500))]).await;
    let trigger = json!({"public": true, "mode": "webhook", "authentication": "basicAuth",
                         "options": {"allowedOrigins": "https://shop.example"}});
    let path = workflow(trigger, "nodekit-nodes.memorySqliteChat", sqlite_memory());
    let mut credentials = model(&model_server);
    credentials["httpBasicAuth"] = json!({"user": "ada", "password": "pw-secret"});
    let served = Served::start(
        &path,
        credentials,
        &["--max-runs", "1", "--max-message-chars", "100"],
    )
    .await;
    let client = client();
    let url = served.chat_url();
    let message = |session: &str, text: &str| json!({"action": "sendMessage", "sessionId": session, "chatInput": text});
    let post = |body: Value| {
        client
            .post(&url)
            .basic_auth("ada", Some("pw-secret"))
            .json(&body)
    };

    let status = |r: &reqwest::Response| r.status().as_u16();
    let no_auth = client
        .post(&url)
        .json(&message("s", "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(&no_auth), 401);
    assert_eq!(
        no_auth.headers()["www-authenticate"],
        "Basic realm=\"Webhook\""
    );
    let wrong = client
        .post(&url)
        .basic_auth("ada", Some("pw-wrong"))
        .json(&message("s", "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(&wrong), 401);
    let text = wrong.text().await.unwrap();
    assert!(!text.contains("pw-secret"), "{text}");

    for (body, code, says) in [
        (message("a/b", "hi"), 400, "session id"),
        (message(&"x".repeat(300), "hi"), 400, "longer than 200"),
        (message("s", &"y".repeat(101)), 413, "longer than 100"),
        (
            json!({"action": "dance", "sessionId": "s"}),
            400,
            "unknown action",
        ),
        (
            json!({"action": "sendMessage", "chatInput": "hi"}),
            400,
            "sessionId",
        ),
    ] {
        let r = post(body.clone()).send().await.unwrap();
        assert_eq!(status(&r), code, "{body}");
        let text = r.text().await.unwrap();
        assert!(text.contains(says), "{body}: {text}");
    }
    // A body announced too large is refused before it is sent (a client
    // still writing it would see the connection close instead).
    let head = format!(
        "POST /webhook/{WEBHOOK}/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         authorization: Basic YWRhOnB3LXNlY3JldA==\r\ncontent-length: 2000000\r\n\r\n"
    );
    let mut stream = tokio::net::TcpStream::connect(served.base.trim_start_matches("http://"))
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes())
        .await
        .unwrap();
    let mut reply = vec![0; 4096];
    let n = tokio::io::AsyncReadExt::read(&mut stream, &mut reply)
        .await
        .unwrap();
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("larger than 1048576 bytes"), "{reply}");
    let not_json = post(json!(null)).body("{not json").send().await.unwrap();
    assert_eq!(status(&not_json), 400);

    // CORS: the allowed origin gets its header; another is refused.
    let preflight = client
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type, authorization",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(status(&preflight), 204);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        "https://shop.example"
    );
    let elsewhere = post(message("s", "hi"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(&elsewhere), 403);
    // DNS rebinding: a page of another origin whose name points here
    // sends its own name as Host, which is not served.
    let rebound = post(message("s", "hi"))
        .header("origin", "http://evil.example")
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(&rebound), 403);
    assert!(
        rebound
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    let empty = post(message("s", "")).send().await.unwrap();
    assert_eq!(status(&empty), 400);
    // The server's own origin (its hosted page) is not held to the list.
    let own = post(message("s", &"y".repeat(101)))
        .header("origin", served.base.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(status(&own), 413, "refused for its size, not its origin");

    // One run at a time: a second message meanwhile gets 429 at once.
    let first = tokio::spawn(
        post(message("s-1", "hi"))
            .header("origin", "https://shop.example")
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let busy = post(message("s-2", "hi")).send().await.unwrap();
    assert_eq!(status(&busy), 429);
    assert_eq!(busy.headers()["retry-after"], "1");
    let first = first.await.unwrap().unwrap();
    assert_eq!(status(&first), 200);
    assert_eq!(
        first.headers()["access-control-allow-origin"],
        "https://shop.example"
    );
    assert_eq!(
        first.json::<Value>().await.unwrap(),
        json!({"output": "slow"})
    );

    let unknown = client
        .get(format!("{}/nothing", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(status(&unknown), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_that_is_not_public_is_not_served() {
    let model_server = Server::start(vec![]).await;
    let path = workflow(json!({}), "nodekit-nodes.memorySqliteChat", sqlite_memory());
    let served = Served::start(&path, model(&model_server), &[]).await;
    let r = served
        .post(json!({"action": "sendMessage", "sessionId": "s", "chatInput": "hi"}))
        .await;
    assert_eq!(r.status(), 404);
    assert!(r.text().await.unwrap().contains("not public"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosted_page_loads_the_widget_from_the_configured_url() {
    let model_server = Server::start(vec![]).await;
    let trigger = json!({"public": true, "initialMessages": "Hello!\nAsk me about orders.",
                         "options": {"title": "Shop </script>", "responseMode": "streaming"}});
    let path = workflow(trigger, "nodekit-nodes.memorySqliteChat", sqlite_memory());
    let served = Served::start(
        &path,
        model(&model_server),
        &["--chat-bundle-url", "http://127.0.0.1:9/chat/dist/"],
    )
    .await;
    let page = client().get(served.chat_url()).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(content_type(&page).starts_with("text/html"));
    let headers = page.headers().clone();
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let policy = headers["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    let html = page.text().await.unwrap();
    // The page's own script runs by its nonce, the widget from its origin.
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap();
    assert!(html.contains(&format!("nonce=\"{nonce}\"")), "{html}");
    assert!(policy.contains("http://127.0.0.1:9"), "{policy}");
    // Checked against the files of the version tested, wherever they are.
    let tested = nodekit::serve::ChatBundleIntegrity::TESTED;
    assert!(
        html.contains(&format!(
            "<script src=\"http://127.0.0.1:9/chat/dist/chat.bundle.umd.js\" crossorigin=\"anonymous\" integrity=\"{}\"",
            tested.script
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "href=\"http://127.0.0.1:9/chat/dist/style.css\" rel=\"stylesheet\" crossorigin=\"anonymous\" integrity=\"{}\"",
            tested.style
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!("\"webhookUrl\":\"/webhook/{WEBHOOK}/chat\"")),
        "{html}"
    );
    assert!(html.contains("\"enableStreaming\":true"), "{html}");
    assert!(
        html.contains("[\"Hello!\",\"Ask me about orders.\"]"),
        "{html}"
    );
    assert_eq!(html.matches("</script>").count(), 2, "{html}");

    // Another version's copy: no hashes to check it against.
    let other = Served::start(
        &path,
        model(&model_server),
        &[
            "--chat-bundle-url",
            "http://127.0.0.1:9/other/",
            "--chat-bundle-integrity",
            "none",
        ],
    )
    .await;
    let html = client()
        .get(other.chat_url())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("http://127.0.0.1:9/other/chat.bundle.umd.js"),
        "{html}"
    );
    assert!(!html.contains("integrity="), "{html}");
}

/// Two servers on one PostgreSQL memory, a session's messages alternating
/// between them: one conversation, as with one server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_memory_hold_one_conversation() {
    let Some(url) = nodekit_test_support::server("DATABASE_URL") else {
        return;
    };
    let replies: Vec<Reply> = (1..=4).map(|n| answer(&format!("answer {n}"))).collect();
    let model_server = Server::start(replies).await;
    let table = nodekit_test_support::unique("serve_chat");
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memoryPostgresChat",
        json!({"tableName": table, "contextWindowLength": 10}),
    );
    let mut credentials = model(&model_server);
    credentials["postgres"] = nodekit_test_support::postgres_credential(&url);
    let a = Served::start(&path, credentials.clone(), &[]).await;
    let b = Served::start(&path, credentials, &[]).await;
    let servers = [&a, &b, &a, &b];
    for (n, server) in servers.iter().enumerate() {
        let n = n + 1;
        assert_eq!(
            server.send("shared-1", &format!("question {n}")).await,
            json!({"output": format!("answer {n}")})
        );
    }
    // The fourth call, on server b, saw all three exchanges before it.
    let last = &model_server.seen()[3].body["messages"];
    let said: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        said,
        [
            "question 1",
            "answer 1",
            "question 2",
            "answer 2",
            "question 3",
            "answer 3",
            "question 4"
        ]
    );
    let expected: Vec<(String, String)> = exchange(&[
        ("question 1", "answer 1"),
        ("question 2", "answer 2"),
        ("question 3", "answer 3"),
        ("question 4", "answer 4"),
    ]);
    assert_eq!(a.previous("shared-1").await, expected);
    assert_eq!(b.previous("shared-1").await, expected);
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP TABLE IF EXISTS {table}")))
        .execute(&pool)
        .await
        .unwrap();
}

/// SIGTERM stops accepting, lets the message in flight be answered, then exits.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_lets_the_message_in_flight_finish() {
    let model_server = Server::start(vec![answer("done").after(Duration::from_millis(1500))]).await;
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let mut served = Served::start(&path, model(&model_server), &[]).await;
    let url = served.chat_url();
    let in_flight = tokio::spawn(
        client()
            .post(url)
            .json(&json!({"action": "sendMessage", "sessionId": "s", "chatInput": "hi"}))
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    served.terminate();
    let answer = in_flight.await.unwrap().unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.json::<Value>().await.unwrap(),
        json!({"output": "done"})
    );
    let status = tokio::time::timeout(Duration::from_secs(10), served.child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        client()
            .get(format!("{}/healthz", served.base))
            .send()
            .await
            .is_err()
    );
}

/// A provider that quotes the client's text in its error, next to a key
/// the server holds, must not let a client find the key out: the replies
/// a client gets cannot depend on how much of the key its text matches.
/// The attack guesses one character at a time from the key's known start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_cannot_be_guessed_through_a_provider_error_that_quotes_the_input() {
    const SECRET: &str = "sk-live-Zq7xK2mP9vLw4RtY8nB";
    let model_server = Server::start_answering(|_, seen| {
        let input = seen.body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned();
        Reply::json(
            400,
            &json!({"error": {"message": format!("Invalid upstream input: '{input}~END'"),
                              "type": "invalid_request_error"}}),
        )
    })
    .await;
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let credentials = json!({"openAiApi": {"apiKey": SECRET, "url": model_server.base_url}});
    let served = Served::start(&path, credentials, &[]).await;
    let client = client();
    let alphabet: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').collect();
    let mut known = SECRET[..8].to_owned();
    for _ in 0..2 {
        let mut replies = std::collections::BTreeMap::new();
        for c in &alphabet {
            let guess = format!("{known}{c}");
            let chat = served
                .post(json!({"action": "sendMessage", "sessionId": "attacker", "chatInput": guess}))
                .await;
            assert_eq!(chat.status(), 500);
            let chat = chat.text().await.unwrap();
            let openai = client
                .post(format!("{}/v1/chat/completions", served.base))
                .json(&json!({"model": "m", "user": "attacker", "messages": [{"role": "user", "content": guess}]}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            for reply in [&chat, &openai] {
                assert!(reply.contains("HTTP 400"), "{reply}");
                assert!(reply.contains("node `Chat Model`"), "{reply}");
                assert!(!reply.contains(&SECRET[..8]), "{reply}");
            }
            replies.insert(*c, (chat, openai));
        }
        let distinct: std::collections::BTreeSet<_> = replies.values().collect();
        assert_eq!(
            distinct.len(),
            1,
            "the replies tell guesses apart: {distinct:#?}"
        );
        // The attacker goes on with the right character, as if it had found it.
        known.push(SECRET.as_bytes()[known.len()] as char);
    }
}

/// A stop whose grace period runs out during a streamed answer ends that
/// answer with an error item, not a cut-off body.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_off_by_a_stop_ends_with_an_error_item() {
    let mut slow = pieces(&["Still ", "thinking"]);
    // After the first piece, the model takes its time.
    slow.0.insert(2, Step::Sleep(Duration::from_secs(20)));
    let model_server = Server::start(vec![slow]).await;
    let trigger =
        json!({"public": true, "mode": "webhook", "options": {"responseMode": "streaming"}});
    let path = workflow(trigger, "nodekit-nodes.memorySqliteChat", sqlite_memory());
    let mut served = Served::start(&path, model(&model_server), &["--shutdown-grace", "2"]).await;
    let response = served
        .post(json!({"action": "sendMessage", "sessionId": "s", "chatInput": "hi"}))
        .await;
    assert_eq!(response.status(), 200);
    let mut response = response;
    let mut text = String::new();
    while !text.contains("Still ") {
        let chunk = response.chunk().await.unwrap().unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    served.terminate();
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = response.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    });
    rest.await.expect("the answer ends within the grace period");
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "error", "{text}");
    assert!(
        last["content"].as_str().unwrap().contains("stopping"),
        "{text}"
    );
    let status = tokio::time::timeout(Duration::from_secs(10), served.child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_with_n8ns_own_agent_and_model_nodes_is_served() {
    let model_server = Server::start(vec![Reply::json(
        200,
        &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": "Hello from Claude."}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 4}}),
    )])
    .await;
    let path = workflow(
        public(json!({})),
        "nodekit-nodes.memorySqliteChat",
        sqlite_memory(),
    );
    let mut export: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    export["nodes"][1]["type"] = json!("@n8n/n8n-nodes-langchain.agent");
    export["nodes"][2] = json!({
        "name": "Chat Model", "type": "@n8n/n8n-nodes-langchain.lmChatAnthropic", "typeVersion": 1.3,
        "parameters": {"model": {"__rl": true, "mode": "list", "value": "claude-sonnet-4-5-20250929"}, "options": {}},
        "credentials": {"anthropicApi": {"id": "1", "name": "Anthropic account"}}
    });
    std::fs::write(&path, export.to_string()).unwrap();
    let root = model_server.base_url.trim_end_matches("/v1").to_owned();
    let served = Served::start(
        &path,
        json!({"anthropicApi": {"apiKey": "sk-ant-local", "url": root}}),
        &[],
    )
    .await;
    let response = served
        .post(json!({"action": "sendMessage", "sessionId": "s1", "chatInput": "Hi"}))
        .await;
    // Which model answered is named beside the answer.
    assert_eq!(
        response.headers()["x-nodekit-model"],
        "claude-sonnet-4-5-20250929"
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["output"], "Hello from Claude.", "{body}");
    let [seen] = model_server.seen().try_into().unwrap();
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("sk-ant-local"));
    assert_eq!(seen.body["max_tokens"], 4096);
}
