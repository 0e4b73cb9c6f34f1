//! The authoring guide's "Make it run" (`runtime/docs/authoring.md`), end
//! to end: the weather tool answers `tool-call`, and an agent through `run`,
//! with the chat model played by a scripted OpenAI-compatible server on
//! 127.0.0.1 (the replies file the guide uses).

use std::process::Command;

use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};

const WEATHER: &str = env!("CARGO_BIN_EXE_weather");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn tool_call(args: &Value) -> Value {
    let out = Command::new(WEATHER)
        .args(["tool-call", "weatherForecastTool", "--args"])
        .arg(args.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_tool_answers_tool_call() {
    let answer = tool_call(&json!({"city": "Berlin", "days": 2}));
    assert_eq!(answer["city"], "Berlin");
    assert_eq!(answer["units"], "metric");
    let days = answer["days"].as_array().unwrap();
    assert_eq!(days.len(), 2);
    for (i, day) in days.iter().enumerate() {
        assert_eq!(day["day"], i + 1);
        assert!(day["high"].as_i64().unwrap() >= day["low"].as_i64().unwrap());
    }
    // Repeatable, and the default is 3 days.
    assert_eq!(tool_call(&json!({"city": "Berlin", "days": 2})), answer);
    assert_eq!(
        tool_call(&json!({"city": "Berlin"}))["days"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // Bounds hold for the model's arguments too: the answer is a refusal it can read.
    let out = Command::new(WEATHER)
        .args([
            "tool-call",
            "weatherForecastTool",
            "--args",
            r#"{"city": "Berlin", "days": 9}"#,
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("days"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_answers_with_the_tool_through_run() {
    let replies: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(format!("{EXAMPLES}/workflows/weather-replies.json")).unwrap(),
    )
    .unwrap();
    let server = Server::start(replies.iter().map(|r| Reply::json(200, r)).collect()).await;
    let dir = nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("tour"));
    std::fs::create_dir_all(&dir).unwrap();
    let credentials = dir.join("credentials.json");
    std::fs::write(
        &credentials,
        json!({"openAiApi": {"apiKey": "sk-local", "url": server.base_url}}).to_string(),
    )
    .unwrap();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(WEATHER)
            .arg("run")
            .arg(format!("{EXAMPLES}/workflows/weather-agent.json"))
            .args([
                "--message",
                "What is the weather in Berlin?",
                "--credentials",
            ])
            .arg(&credentials)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Here is the forecast for Berlin for the next two days."
    );
    assert!(
        stderr.contains("[tool Weather_Forecast answered: "),
        "{stderr}"
    );
    // The model got the tool's answer: the same forecast `tool-call` gives.
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[1].tool_results(),
        [tool_call(&json!({"city": "Berlin", "days": 2}))]
    );
    std::fs::remove_dir_all(&dir).ok();
}
