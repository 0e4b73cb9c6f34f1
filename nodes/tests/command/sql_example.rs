//! The SQL example end to end through the `nodekit` program: `tool-call`
//! against the sample database, and `nodekit run` of
//! `examples/workflows/sql-agent.json` with a scripted OpenAI-compatible
//! model that calls both SQL tools.

use nodekit_test_support::openai as support;

use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{Reply, Server};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn nodekit(args: &[&str], credentials: &Value) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(args)
        .current_dir(ROOT)
        .env("NODEKIT_CREDENTIALS", credentials.to_string())
        .env_remove("NODEKIT_CREDENTIALS_FILE")
        .output()
        .unwrap()
}

fn shop() -> Value {
    json!({"sqlite": {"databasePath": "examples/data/shop.db"}})
}

fn answer(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn tool_call_prints_the_answer_and_refusals_exit_zero() {
    let v = answer(&nodekit(
        &[
            "tool-call",
            "selectQueryTool",
            "--args",
            r#"{"tableName": "products", "whereConditions": "category = 'books'", "orderBy": "price DESC", "columns": "name, price"}"#,
        ],
        &shop(),
    ));
    assert_eq!(v["success"], true);
    assert_eq!(
        v["data"],
        json!([{"name": "Rust in practice (e-book)", "price": 32.0}, {"name": "SQL for agents (e-book)", "price": 24.0}])
    );

    // A refused request is the tool's answer, not a failure of the command.
    let v = answer(&nodekit(
        &[
            "tool-call",
            "executeSqlTool",
            "--params",
            r#"{"options": {"deniedTables": "staff_salaries"}}"#,
            "--args",
            r#"{"query": "SELECT * FROM staff_salaries"}"#,
        ],
        &shop(),
    ));
    assert_eq!(v["success"], false);
    assert_eq!(v["errorType"], "invalid_table");
    assert!(!v.to_string().contains("250000"));

    // Usage errors are failures: no credential, unknown node.
    let out = nodekit(
        &["tool-call", "selectQueryTool", "--args", "{}"],
        &json!({}),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("postgres or sqlite"));
    let out = nodekit(&["tool-call", "noSuchTool"], &shop());
    assert!(!out.status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_agent_example_answers_from_the_database() {
    let call = |id: &str, name: &str, args: Value| {
        Reply::sse(&[
            json!({"choices": [{"delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}
        ]}, "finish_reason": "tool_calls"}]}),
        ])
    };
    let server = Server::start(vec![
        call(
            "call_1",
            "Run_Query",
            json!({"query": "SELECT c.name, sum(o.quantity * p.price) AS spent FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id WHERE o.status <> 'cancelled' GROUP BY c.name ORDER BY spent DESC LIMIT 1"}),
        ),
        call(
            "call_2",
            "Select_Rows",
            json!({"tableName": "customers", "columns": "city", "whereConditions": "name = 'Grace Hopper'"}),
        ),
        Reply::sse(&[
            json!({"choices": [{"delta": {"role": "assistant", "content": "Grace Hopper, from New York."}, "finish_reason": "stop"}]}),
        ]),
    ])
    .await;
    let credentials = json!({
        "sqlite": {"databasePath": "examples/data/shop.db"},
        "openAiApi": {"apiKey": "sk-local", "url": server.base_url},
    });
    let out = tokio::task::spawn_blocking(move || {
        nodekit(
            &[
                "run",
                "examples/workflows/sql-agent.json",
                "--message",
                "Who spent the most, and where do they live?",
            ],
            &credentials,
        )
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Grace Hopper, from New York."
    );

    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let tools: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Select_Rows", "Run_Query"]);
    // The tool results the model received.
    let result = |i: usize| -> Value {
        let messages = seen[i].body["messages"].as_array().unwrap();
        serde_json::from_str(messages.last().unwrap()["content"].as_str().unwrap()).unwrap()
    };
    let spent = result(1);
    assert_eq!(spent["success"], true, "{spent}");
    assert_eq!(
        spent["data"],
        json!([{"name": "Grace Hopper", "spent": 429.0}])
    );
    let city = result(2);
    assert_eq!(city["data"], json!([{"city": "New York"}]));
}
