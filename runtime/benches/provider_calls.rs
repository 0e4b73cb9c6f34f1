//! Per-call time of nodekit's Anthropic and Gemini clients, whole answers,
//! against a local keep-alive HTTP server, beside bare reqwest posting the
//! same body to the same server. With `BENCH_NODE_DIR` set (a folder with
//! the Node.js packages installed), the Node.js clients of
//! `benches/providers/calls.mjs` run against the same server in the same
//! run, and the table compares them. `benches/providers/run.sh` does that.
//!
//! `cargo bench -p nodekit --features anthropic,gemini --bench provider_calls`
//! (env: `BENCH_CALLS`, `BENCH_WARMUP`, `BENCH_NODE_DIR`, `BENCH_JSON`)

use std::convert::Infallible;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use nodekit::message::{Message, ToolCall};
use nodekit::model::anthropic::{AnthropicChatModel, AnthropicConfig};
use nodekit::model::gemini::{GeminiChatModel, GeminiConfig};
use nodekit::model::{CallOptions, ChatModel, ModelSettings};
use nodekit::tool::ToolDefinition;
use serde_json::{Value, json};

/// The answers: a short text and the usage, in each provider's form.
fn anthropic_answer() -> Bytes {
    json!({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Yes: rain all afternoon, 14 °C. Take an umbrella."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 412, "output_tokens": 17, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
    .to_string()
    .into()
}

fn gemini_answer() -> Bytes {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Yes: rain all afternoon, 14 °C. Take an umbrella."}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 412, "candidatesTokenCount": 17, "totalTokenCount": 429},
        "modelVersion": "gemini-2.5-flash", "responseId": "r1"})
    .to_string()
    .into()
}

/// A keep-alive HTTP/1.1 server on its own thread and runtime: the
/// Messages API's answer on `…/messages`, Gemini's on `…:generateContent`.
fn start_server() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let (anthropic, gemini) = (anthropic_answer(), gemini_answer());
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                socket.set_nodelay(true).unwrap();
                let (anthropic, gemini) = (anthropic.clone(), gemini.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: Request<hyper::body::Incoming>| {
                            let answer = if request.uri().path().ends_with(":generateContent") {
                                gemini.clone()
                            } else {
                                anthropic.clone()
                            };
                            async move {
                                // The whole request is read, as a real server does.
                                let _ = request.into_body().collect().await;
                                Ok::<_, Infallible>(
                                    Response::builder()
                                        .header("content-type", "application/json")
                                        .body(Full::new(answer))
                                        .unwrap(),
                                )
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                        .await;
                });
            }
        });
    });
    addr
}

/// The conversation both sides send: a system prompt, a question, a tool
/// call and its result, a follow-up.
fn conversation() -> Vec<Message> {
    let mut asked = Message::ai("Let me check.");
    asked.tool_calls.push(ToolCall {
        id: "toolu_01".into(),
        name: "get_weather".into(),
        args: json!({"city": "Paris"}),
    });
    let mut result = Message::tool("Rain, 14 °C", "toolu_01");
    result.name = Some("get_weather".into());
    vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::human("What is the weather in Paris?"),
        asked,
        result,
        Message::human("And should I take an umbrella?"),
    ]
}

fn options() -> CallOptions {
    CallOptions {
        tools: vec![ToolDefinition {
            name: "get_weather".into(),
            description: "The weather in a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }],
        ..CallOptions::default()
    }
}

struct Timing {
    client: String,
    p50_us: f64,
    p99_us: f64,
    /// CPU time of the calling thread per call: the client's own cost,
    /// which the loopback's latency does not blur.
    cpu_us: f64,
}

/// This thread's time on a CPU so far, in µs (Linux's schedstat; 0 where
/// there is none).
fn thread_cpu_us() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e3)
}

async fn time<F: std::future::Future<Output = ()>>(
    client: &str,
    calls: usize,
    warmup: usize,
    mut call: impl FnMut() -> F,
) -> Timing {
    for _ in 0..warmup {
        call().await;
    }
    let mut us = Vec::with_capacity(calls);
    let cpu = thread_cpu_us();
    for _ in 0..calls {
        let t = Instant::now();
        call().await;
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let cpu_us = (thread_cpu_us() - cpu) / calls as f64;
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * calls as f64) as usize).min(calls - 1)];
    Timing {
        client: client.into(),
        p50_us: at(0.5),
        p99_us: at(0.99),
        cpu_us,
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let calls = env("BENCH_CALLS", 2000);
    let warmup = env("BENCH_WARMUP", 200);
    let addr = start_server();
    let base = format!("http://{addr}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let messages = conversation();
    let options = options();
    let settings = ModelSettings {
        max_tokens: Some(1024),
        ..ModelSettings::default()
    };
    let anthropic = AnthropicChatModel::new(
        AnthropicConfig::new("sk-ant-bench", "claude-sonnet-4-5")
            .base_url(base.clone())
            .settings(settings.clone()),
    )
    .unwrap();
    let gemini = GeminiChatModel::new(
        GeminiConfig::new("AIza-bench", "gemini-2.5-flash")
            .base_url(base.clone())
            .settings(settings),
    )
    .unwrap();
    let anthropic_body = anthropic.request_body(&messages, &options, false).unwrap();
    let gemini_body = gemini.request_body(&messages, &options).unwrap();
    // reqwest as nodekit builds it (rustls provider installed), nothing more.
    let client = nodekit::model::http_client().build().unwrap();

    let mut timings = Vec::new();
    rt.block_on(async {
        timings.push(
            time("nodekit Anthropic", calls, warmup, || async {
                anthropic.invoke(&messages, &options).await.unwrap();
            })
            .await,
        );
        let url = format!("{base}/v1/messages");
        timings.push(
            time("reqwest (Anthropic body)", calls, warmup, || async {
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("x-api-key", "sk-ant-bench")
                    .header("anthropic-version", "2023-06-01")
                    .body(anthropic_body.clone())
                    .send()
                    .await
                    .unwrap();
                r.bytes().await.unwrap();
            })
            .await,
        );
        timings.push(
            time("nodekit Gemini", calls, warmup, || async {
                gemini.invoke(&messages, &options).await.unwrap();
            })
            .await,
        );
        let url = format!("{base}/v1beta/models/gemini-2.5-flash:generateContent");
        timings.push(
            time("reqwest (Gemini body)", calls, warmup, || async {
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("x-goog-api-key", "AIza-bench")
                    .body(gemini_body.clone())
                    .send()
                    .await
                    .unwrap();
                r.bytes().await.unwrap();
            })
            .await,
        );
    });

    if let Ok(dir) = std::env::var("BENCH_NODE_DIR") {
        let bodies = std::env::temp_dir().join(format!(
            "nodekit-provider-bodies-{}.json",
            std::process::id()
        ));
        let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap();
        std::fs::write(
            &bodies,
            json!({"anthropic": parse(&anthropic_body), "gemini": parse(&gemini_body)}).to_string(),
        )
        .unwrap();
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/providers/calls.mjs");
        std::fs::copy(&script, std::path::Path::new(&dir).join("calls.mjs")).unwrap();
        let out = std::process::Command::new("node")
            .arg("calls.mjs")
            .current_dir(&dir)
            .env("ANTHROPIC_URL", &base)
            .env("GEMINI_URL", &base)
            .env("BENCH_CALLS", calls.to_string())
            .env("BENCH_WARMUP", warmup.to_string())
            .env("BENCH_BODIES", &bodies)
            .output()
            .expect("node runs");
        let _ = std::fs::remove_file(&bodies);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let node: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for t in node {
            timings.push(Timing {
                client: t["client"].as_str().unwrap().into(),
                p50_us: t["p50_us"].as_f64().unwrap(),
                p99_us: t["p99_us"].as_f64().unwrap(),
                cpu_us: t["cpu_us"].as_f64().unwrap(),
            });
        }
    }

    println!("\n{calls} calls each after {warmup} to warm up, one server, one run\n");
    println!(
        "| client | p50 µs | p99 µs | p50 ÷ nodekit | p99 ÷ nodekit | CPU µs/call | CPU ÷ nodekit |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for provider in ["Anthropic", "Gemini"] {
        let ours = timings
            .iter()
            .find(|t| t.client == format!("nodekit {provider}"))
            .unwrap();
        let (p50, p99, cpu) = (ours.p50_us, ours.p99_us, ours.cpu_us);
        for t in timings.iter().filter(|t| {
            t.client.contains(provider)
                || (provider == "Anthropic" && t.client.contains("anthropic"))
                || (provider == "Gemini" && (t.client.contains("genai")))
        }) {
            println!(
                "| {} | {:.0} | {:.0} | {:.2}x | {:.2}x | {:.1} | {:.1}x |",
                t.client,
                t.p50_us,
                t.p99_us,
                t.p50_us / p50,
                t.p99_us / p99,
                t.cpu_us,
                t.cpu_us / cpu
            );
        }
    }
    if let Ok(path) = std::env::var("BENCH_JSON") {
        let rows: Vec<Value> = timings
            .iter()
            .map(|t| json!({"client": t.client, "p50_us": t.p50_us, "p99_us": t.p99_us, "cpu_us": t.cpu_us}))
            .collect();
        std::fs::write(path, Value::Array(rows).to_string()).unwrap();
    }
}
