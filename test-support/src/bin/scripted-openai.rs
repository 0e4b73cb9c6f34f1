//! A scripted OpenAI-compatible chat server on 127.0.0.1, for trying a
//! workflow offline: it answers each request with the next reply of a JSON
//! file (an array of chat-completion bodies), and exits once every reply
//! has been sent, or after 10 minutes.
//!
//! ```sh
//! cargo run -p nodekit-test-support --bin scripted-openai -- examples/workflows/weather-replies.json 8711
//! ```
//!
//! Point a chat model's credential at the URL it prints, e.g.
//! `{"openAiApi": {"apiKey": "sk-local", "url": "http://127.0.0.1:8711/v1"}}`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use nodekit_test_support::openai::{Reply, Server};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(600);

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(file), port) = (args.next(), args.next()) else {
        eprintln!("usage: scripted-openai REPLIES.json [PORT]");
        return ExitCode::from(2);
    };
    let port: u16 = match port.as_deref().unwrap_or("0").parse() {
        Ok(p) => p,
        Err(_) => {
            eprintln!("the port must be a number from 0 to 65535");
            return ExitCode::from(2);
        }
    };
    let bodies: Vec<Value> = match std::fs::read_to_string(&file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(bodies) => bodies,
        Err(e) => {
            eprintln!("{file}: {e}; expected a JSON array of chat-completion bodies");
            return ExitCode::FAILURE;
        }
    };
    if bodies.is_empty() {
        eprintln!("{file}: no replies");
        return ExitCode::FAILURE;
    }
    let replies: Vec<Reply> = bodies.iter().map(|b| Reply::json(200, b)).collect();
    let server = match Server::start_on(port, replies).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", server.base_url);
    let started = Instant::now();
    while server.seen().len() < bodies.len() && started.elapsed() < LIMIT {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the last answer reach the client.
    tokio::time::sleep(Duration::from_millis(300)).await;
    ExitCode::SUCCESS
}
