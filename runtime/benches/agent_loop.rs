//! Agent-loop overhead per model call, excluding model time, against the
//! peers' scripted OpenAI-compatible mock (`mock_openai.py` from
//! `../shared/peers/langchain-agent-bench`), with the methodology of that
//! peer harness so the numbers compare: R conversations of K+1 model calls
//! (K tool rounds), N tools sent with every request, overhead per call =
//! (wall time − the mock's own handling time) / model calls; median of the
//! repetitions after warm-up.
//!
//! `MOCK_URL=http://127.0.0.1:8765 cargo bench -p nodekit --bench agent_loop`
//! (`benches/agent-loop/run.sh` starts the mock and runs the peer too).
//! Without `MOCK_URL` it prints how to run and exits.

use std::sync::Arc;
use std::time::Instant;

use nodekit::agent::{Agent, AgentOptions};
use nodekit::model::openai::OpenAiConfig;
use nodekit::node::SupplyContext;
use nodekit::run_log::RunLog;
use nodekit::tool::{FnTool, Tool, ToolDefinition};
use serde_json::{Value, json};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let Ok(mock) = std::env::var("MOCK_URL") else {
        eprintln!(
            "agent_loop: set MOCK_URL to a running mock_openai.py (see benches/agent-loop/run.sh); skipping"
        );
        return;
    };
    // One thread, like Node's event loop on the peer's side.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(mock.trim_end_matches('/').to_owned()));
}

async fn run(mock: String) {
    let tool_counts: Vec<usize> = std::env::var("BENCH_N")
        .unwrap_or_else(|_| "1,10,50".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let (conversations, reps, warmup) = (
        env("BENCH_R", 20),
        env("BENCH_REPS", 7),
        env("BENCH_WARMUP", 2),
    );
    let http = nodekit::model::http_client().build().unwrap();
    let mut results = Vec::new();
    println!(
        "| client | tools N | wall µs / model call | overhead µs / call (wall − server) | min–max over reps | mock server µs / call |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    // The floor: bare reqwest requests with a constant body, as the peer's `fetch_const`.
    let floor_body = r#"{"model":"mock-gpt","messages":[{"role":"user","content":"hi"}]}"#;
    let url = format!("{mock}/v1/chat/completions");
    let bare = || async {
        for _ in 0..conversations * 6 {
            let response = http
                .post(&url)
                .header("content-type", "application/json")
                .body(floor_body)
                .send()
                .await
                .unwrap();
            response.bytes().await.unwrap();
        }
    };
    let f = measure(&http, &mock, warmup, reps, bare).await;
    println!(
        "| reqwest_const | 1 | {:.0} | {:.0} | {:.0}–{:.0} | {:.0} |",
        f.wall, f.overhead, f.min, f.max, f.server
    );
    results.push(json!({"client": "reqwest_const", "tools": 1, "wall_us_per_call": f.wall, "overhead_us_per_call": f.overhead, "server_us_per_call": f.server}));
    for n in tool_counts {
        let agent = agent(&mock, n);
        let run = || async {
            for _ in 0..conversations {
                let out = agent.run("go", None).await.expect("agent run");
                assert!(
                    !out.intermediate_steps.is_empty(),
                    "the mock script ran tools"
                );
            }
        };
        let m = measure(&http, &mock, warmup, reps, run).await;
        let (wall, overhead, server) = (m.wall, m.overhead, m.server);
        println!(
            "| nodekit | {n} | {wall:.0} | {overhead:.0} | {:.0}–{:.0} | {server:.0} |",
            m.min, m.max
        );
        results.push(json!({"client": "nodekit", "tools": n, "wall_us_per_call": wall, "overhead_us_per_call": overhead, "server_us_per_call": server}));
    }
    if let Ok(path) = std::env::var("BENCH_JSON") {
        std::fs::write(&path, serde_json::to_string_pretty(&results).unwrap()).unwrap();
    }
}

/// Medians over the measured repetitions, in µs per model call.
struct Measured {
    wall: f64,
    overhead: f64,
    server: f64,
    min: f64,
    max: f64,
}

async fn measure<F, Fut>(
    http: &reqwest::Client,
    mock: &str,
    warmup: usize,
    reps: usize,
    work: F,
) -> Measured
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (mut walls, mut servers, mut overheads) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..warmup + reps {
        http.post(format!("{mock}/reset")).send().await.unwrap();
        let start = Instant::now();
        work().await;
        let wall = start.elapsed().as_nanos() as f64;
        let stats: Value = http
            .get(format!("{mock}/stats"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let calls = stats["requests"].as_f64().unwrap();
        let server = stats["server_ns"].as_f64().unwrap();
        if rep >= warmup {
            walls.push(wall / calls / 1000.0);
            servers.push(server / calls / 1000.0);
            overheads.push((wall - server) / calls / 1000.0);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Measured {
        min: overheads.iter().copied().fold(f64::MAX, f64::min),
        max: overheads.iter().copied().fold(0.0, f64::max),
        wall: median(&mut walls),
        overhead: median(&mut overheads),
        server: median(&mut servers),
    }
}

fn agent(mock: &str, tools: usize) -> Agent {
    let ctx = SupplyContext::new("Chat Model", Default::default(), Value::Null, RunLog::new());
    let config = OpenAiConfig {
        max_retries: 0,
        ..OpenAiConfig::new("sk-bench", "mock-gpt").base_url(format!("{mock}/v1"))
    };
    let model = ctx.create_chat_model(config).unwrap();
    let tools: Vec<Arc<dyn Tool>> = (0..tools)
        .map(|i| {
            let definition = ToolDefinition {
                name: format!("t{i}"),
                description: format!("Tool number {i}."),
                parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}),
            };
            Arc::new(FnTool::new(definition, |_| async { Ok(Value::String("ok".into())) })) as Arc<dyn Tool>
        })
        .collect();
    Agent::new(model, tools, AgentOptions::default()).unwrap()
}
