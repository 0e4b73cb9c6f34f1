//! `nodekit mcp serve` as MCP clients meet it: JSON-RPC lines over the
//! program's standard input and output, and HTTP requests to `--http`.
//! The tools are the SQL agent example's, on the sample SQLite database,
//! and (for cancellation) an execute tool on PostgreSQL.

use std::process::Stdio;
use std::time::Duration;

use nodekit::Catalog;
use nodekit::tool::NodeTool;
use nodekit_test_support::openai::{Reply, Server};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const SQL_AGENT: &str = "examples/workflows/sql-agent.json";

fn nodekit(args: &[&str], credentials: &Value) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nodekit"));
    command
        .args(args)
        .current_dir(ROOT)
        .env("NODEKIT_CREDENTIALS", credentials.to_string())
        .env_remove("NODEKIT_CREDENTIALS_FILE")
        .kill_on_drop(true);
    command
}

fn shop() -> Value {
    json!({"sqlite": {"databasePath": "examples/data/shop.db"}})
}

/// A `nodekit mcp serve` over standard input and output, initialised.
struct StdioServer {
    child: Child,
    input: Option<ChildStdin>,
    output: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl StdioServer {
    async fn start(workflow: &str, credentials: &Value) -> StdioServer {
        let mut child = nodekit(&["mcp", "serve", workflow], credentials)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut server = StdioServer {
            input: child.stdin.take(),
            output: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
        };
        let init = server
            .request(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "nodekit-test", "version": "1"}}}),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "nodekit", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
        server
    }

    async fn send(&mut self, line: &str) {
        let input = self.input.as_mut().unwrap();
        input.write_all(line.as_bytes()).await.unwrap();
        input.write_all(b"\n").await.unwrap();
        input.flush().await.unwrap();
    }

    /// The next message the server writes (within 30 s).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.output.next_line())
            .await
            .expect("the server answers within 30 s")
            .unwrap()
            .expect("the server keeps its output open");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends `message` and returns the answer with its id (skipping notifications).
    async fn request(&mut self, message: Value) -> Value {
        self.send(&message.to_string()).await;
        loop {
            let answer = self.next().await;
            if answer.get("id") == message.get("id") {
                return answer;
            }
        }
    }

    /// Sends `notifications/cancelled` for request `id`.
    async fn cancel(&mut self, id: u64) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the user stopped it"}});
        self.send(&note.to_string()).await;
    }

    async fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}))
            .await
    }
}

/// A tool result's text, parsed when it is JSON.
/// A `tools/call` of the execute tool `Run_Query` with `query`.
fn run_query_call(id: u64, query: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "Run_Query", "arguments": {"query": query}}})
}

fn text_of(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"));
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_the_workflows_tools_as_the_agent_sees_them() {
    let mut server = StdioServer::start(SQL_AGENT, &shop()).await;

    // Listed exactly as the agent shows them to a model, with flat schemas.
    let listed = server
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let workflow: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{ROOT}/{SQL_AGENT}")).unwrap())
            .unwrap();
    nodekit_nodes::link();
    let mut names = Vec::new();
    for node in workflow["nodes"].as_array().unwrap() {
        let Some(kind) = node["type"].as_str().filter(|t| t.ends_with("Tool")) else {
            continue;
        };
        let entry = Catalog::global().find(kind).unwrap();
        let agent_sees = NodeTool::with_version(
            entry.description,
            node["name"].as_str().unwrap(),
            &node["parameters"],
            node["typeVersion"].as_f64().unwrap(),
        )
        .unwrap();
        let definition = agent_sees.definition();
        let served = tools
            .iter()
            .find(|t| t["name"] == definition.name.as_str())
            .unwrap_or_else(|| panic!("{} is listed: {listed}", definition.name));
        assert_eq!(served["description"], definition.description.as_str());
        assert_eq!(served["inputSchema"], definition.parameters);
        names.push(definition.name.clone());
    }
    assert_eq!(names, ["Select_Rows", "Run_Query"]);
    let text = listed.to_string();
    assert!(!text.contains("$ref") && !text.contains("oneOf"), "{text}");

    // A call answers as the agent's would.
    let answer = server
        .call(
            2,
            "Select_Rows",
            json!({"tableName": "products", "whereConditions": "category = 'books'",
                "orderBy": "price DESC", "columns": "name, price"}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        text_of(&answer)["data"],
        json!([{"name": "Rust in practice (e-book)", "price": 32.0}, {"name": "SQL for agents (e-book)", "price": 24.0}])
    );

    // What the tool refuses is a tool result marked as an error, with its categories.
    let answer = server
        .call(
            3,
            "Run_Query",
            json!({"query": "SELECT name FROM customers; DROP TABLE customers"}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let refused = text_of(&answer);
    assert_eq!(refused["success"], false);
    assert!(
        refused["errorType"].is_string() && refused["suggestion"].is_string(),
        "{refused}"
    );
    let answer = server.call(4, "Select_Rows", json!({"tableName": 7})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let why = text_of(&answer).to_string();
    assert!(why.contains("tableName"), "{why}");

    // Protocol mistakes get protocol errors, and the session goes on.
    let answer = server.call(5, "Drop_Everything", json!({})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Select_Rows")
    );
    // Unparsable lines are ignored, as every official MCP SDK does on stdio
    // (answering them can start an error storm); a message of the wrong
    // shape gets "invalid request".
    server
        .send("{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": ")
        .await;
    server
        .send("{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": 7}")
        .await;
    let answer = server.next().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    server
        .send(&format!("{{\"pad\": \"{}\"}}", "x".repeat(5 << 20)))
        .await;
    let answer = server
        .call(
            7,
            "Select_Rows",
            json!({"tableName": "customers", "limit": 1}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    // Closing standard input ends the server.
    drop(server.input.take());
    let status = tokio::time::timeout(Duration::from_secs(10), server.child.wait())
        .await
        .expect("the server exits when its input closes")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_without_tools_is_refused() {
    let dir = nodekit_test_support::scratch_dir();
    let path = dir.join(nodekit_test_support::unique("no_tools") + ".json");
    std::fs::write(
        &path,
        json!({"nodes": [{"name": "AI Agent", "type": "nodekit-nodes.agent", "parameters": {}}]})
            .to_string(),
    )
    .unwrap();
    let out = nodekit(&["mcp", "serve", path.to_str().unwrap()], &shop())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no tools to serve"), "{stderr}");
}

/// `nodekit mcp serve --http ADDR` of the SQL example, requiring `token`
/// when one is given; and its URL, once it listens.
async fn http_server(addr: &str, token: Option<&str>) -> (Child, String) {
    serve_over_http(SQL_AGENT, &shop(), addr, token).await
}

/// `nodekit mcp serve WORKFLOW --http ADDR` with `credentials` (and a
/// token when given), once it serves; and its URL.
async fn serve_over_http(
    workflow: &str,
    credentials: &Value,
    addr: &str,
    token: Option<&str>,
) -> (Child, String) {
    let mut args = vec!["mcp", "serve", workflow, "--http", addr];
    if token.is_some() {
        args.extend(["--token-env", "MCP_TEST_TOKEN"]);
    }
    let mut command = nodekit(&args, credentials);
    if let Some(token) = token {
        command.env("MCP_TEST_TOKEN", token);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line.find("http://") {
                return line[at..].to_owned();
            }
        }
        panic!("the server exited before serving");
    })
    .await
    .expect("the server starts within 30 s");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// The JSON-RPC message of an HTTP answer, sent as JSON or as an event stream.
async fn message_of(response: reqwest::Response) -> Value {
    let text = response.text().await.unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .unwrap_or_else(|| panic!("a JSON-RPC message: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_needs_the_token_a_known_host_and_a_sized_body() {
    let (mut child, url) = http_server("127.0.0.1:0", Some("s3cret-token")).await;
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let client = nodekit::model::http_client().build().unwrap();
    let post = |body: String| {
        client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "nodekit-test", "version": "1"}}})
    .to_string();

    // No token, a wrong one: 401, and nothing about the tools.
    for auth in [None, Some("Bearer wrong-token!"), Some("s3cret-token")] {
        let mut request = post(initialize.clone());
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{auth:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        assert!(!response.text().await.unwrap().contains("Select_Rows"));
    }
    let bearer = "Bearer s3cret-token";
    // Another host's name (DNS rebinding), another path, an oversized body.
    let response = post(initialize.clone())
        .header("authorization", bearer)
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = client
        .post(url.replace("/mcp", "/other"))
        .header("authorization", bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    // A body over the limit is refused before it is read.
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut raw = tokio::net::TcpStream::connect(addr).await.unwrap();
    raw.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {bearer}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            5 << 20
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut status = String::new();
    BufReader::new(raw).read_line(&mut status).await.unwrap();
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    let response = post("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".into())
        .header("authorization", bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400, "JSON that is not JSON-RPC");
    // A page of another origin (or a sandboxed one) may not call the tools.
    for origin in ["http://evil.example.com", "null"] {
        let response = post(initialize.clone())
            .header("authorization", bearer)
            .header("origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{origin}");
    }
    // Nor may a request whose target names another host.
    let mut raw = tokio::net::TcpStream::connect(addr).await.unwrap();
    raw.write_all(
        format!(
            "POST http://attacker.example/mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {bearer}\r\n\
             Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut status = String::new();
    BufReader::new(raw).read_line(&mut status).await.unwrap();
    assert!(status.starts_with("HTTP/1.1 400"), "{status}");

    // With the token: a session that lists and calls the tools.
    // The scheme in any case, as HTTP allows.
    let response = post(initialize)
        .header("authorization", "bearer s3cret-token")
        .header("origin", format!("http://{addr}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        message_of(response).await["result"]["serverInfo"]["name"],
        "nodekit"
    );
    let in_session = |body: Value| {
        post(body.to_string())
            .header("authorization", bearer)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
    };
    let response = in_session(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let listed = message_of(
        in_session(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        2,
        "{listed}"
    );
    let answer = message_of(
        in_session(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "Select_Rows", "arguments": {"tableName": "customers", "columns": "name", "limit": 2}}}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        text_of(&answer)["data"].as_array().unwrap().len(),
        2,
        "{answer}"
    );
    // Calls over one keep-alive connection are answered as soon as they
    // are written: an event stream's first event and its result are not
    // held back for the client's delayed acknowledgement (about 40 ms).
    let mut times = Vec::new();
    for id in 10..30 {
        let started = std::time::Instant::now();
        let answer = message_of(
            in_session(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "Select_Rows", "arguments": {"tableName": "customers", "columns": "name", "limit": 1}}}))
            .send()
            .await
            .unwrap(),
        )
        .await;
        times.push(started.elapsed());
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    times.sort();
    assert!(
        times[times.len() / 2] < Duration::from_millis(20),
        "{times:?}"
    );
    // A closed session is answered 200, as clients expect.
    let closed = client
        .delete(&url)
        .header("authorization", bearer)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);

    // SIGTERM stops the server cleanly.
    let pid = child.id().unwrap().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(signalled.success());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server stops")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// A PostgreSQL schema with a 3,000-row table (a three-way join of it runs
/// for minutes) and an empty `notes` table, and a workflow whose execute
/// tool may write to both.
async fn slow_postgres() -> Option<(sqlx::PgPool, String, std::path::PathBuf, Value)> {
    let url = nodekit_test_support::server("DATABASE_URL")?;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let schema = nodekit_test_support::unique("nk_mcp");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE SCHEMA {schema}; SET search_path TO {schema};
         CREATE TABLE numbers (n int); INSERT INTO numbers SELECT generate_series(1, 3000);
         CREATE TABLE notes (body text);"
    )))
    .execute(&pool)
    .await
    .unwrap();
    let path = write_tool_workflow(&schema, json!({"schema": schema}));
    let credentials = json!({"postgres": nodekit_test_support::postgres_credential(&url)});
    Some((pool, schema, path, credentials))
}

/// A workflow of an agent and an execute tool `Run_Query` that may write to
/// the tables `numbers` and `notes` for two minutes a call (with `options`
/// besides), written to a scratch file named after `name`.
fn write_tool_workflow(name: &str, options: Value) -> std::path::PathBuf {
    let mut all = json!({"allowedTables": "numbers, notes", "allowWrites": true, "timeout": 120});
    all.as_object_mut()
        .unwrap()
        .extend(options.as_object().unwrap().clone());
    let workflow = json!({
        "nodes": [
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
            {"name": "Run Query", "type": "nodekit-nodes.executeSqlTool", "typeVersion": 1,
             "parameters": {"options": all}},
        ],
        "connections": {"Run Query": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]}},
    });
    let path = nodekit_test_support::scratch_dir().join(format!("{name}.json"));
    std::fs::write(&path, workflow.to_string()).unwrap();
    path
}

/// How many queries of `schema`'s tables are running or holding a transaction open.
async fn busy(pool: &sqlx::PgPool, schema: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
         AND state <> 'idle' AND query LIKE '%' || $1 || '%'",
    )
    .bind(schema)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn until_idle(pool: &sqlx::PgPool, schema: &str, within: Duration) -> bool {
    let end = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < end {
        if busy(pool, schema).await == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_abandoned_call_stops_and_rolls_back() {
    let Some((pool, schema, path, credentials)) = slow_postgres().await else {
        return;
    };
    let endless = format!(
        "INSERT INTO {schema}.notes (body) SELECT count(*)::text FROM {schema}.numbers a, {schema}.numbers b, {schema}.numbers c"
    );
    let mut server = StdioServer::start(path.to_str().unwrap(), &credentials).await;

    // `notifications/cancelled` stops the running query; the session goes on.
    let call = run_query_call(1, &endless);
    server.send(&call.to_string()).await;
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    while busy(&pool, &schema).await == 0 {
        assert!(tokio::time::Instant::now() < end, "the query starts");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.cancel(1).await;
    assert!(
        until_idle(&pool, &schema, Duration::from_secs(10)).await,
        "the query stops"
    );
    let answer = server
        .call(
            2,
            "Run_Query",
            json!({"query": format!("SELECT count(*) AS n FROM {schema}.notes")}),
        )
        .await;
    assert_eq!(text_of(&answer)["data"], json!([{"n": 0}]), "{answer}");

    // A client that goes away mid-call: the call is cancelled, its write rolled back.
    server.send(&call.to_string()).await;
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    while busy(&pool, &schema).await == 0 {
        assert!(tokio::time::Instant::now() < end, "the query starts");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(server.input.take());
    let status = tokio::time::timeout(Duration::from_secs(15), server.child.wait())
        .await
        .expect("the server exits when its client goes away")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        until_idle(&pool, &schema, Duration::from_secs(10)).await,
        "the query stops"
    );
    let notes: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {schema}.notes"
    )))
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(notes, 0);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&pool)
        .await
        .unwrap();
}

/// SQLite runs a statement on a thread of its own: a cancelled call must
/// interrupt it there, or it goes on holding the write lock until its
/// deadline, and every other write waits and fails meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_sqlite_call_stops_and_frees_the_database() {
    let dir = nodekit_test_support::scratch_dir();
    let name = nodekit_test_support::unique("nk_mcp_sqlite");
    let db = dir.join(format!("{name}.db"));
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&db)
        .create_if_missing(true);
    let mut conn = sqlx::ConnectOptions::connect(&options).await.unwrap();
    sqlx::raw_sql(
        "CREATE TABLE numbers (n integer);
         WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3000)
         INSERT INTO numbers SELECT n FROM s;
         CREATE TABLE notes (body text);",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let path = write_tool_workflow(&name, json!({}));
    let credentials = json!({"sqlite": {"databasePath": db}});
    let mut server = StdioServer::start(path.to_str().unwrap(), &credentials).await;

    let endless = "INSERT INTO notes (body) SELECT count(*) FROM numbers a, numbers b, numbers c";
    let call = run_query_call(1, endless);
    server.send(&call.to_string()).await;
    // The statement is running (it would for minutes) and holds the write lock.
    tokio::time::sleep(Duration::from_secs(1)).await;
    server.cancel(1).await;
    // The lock is free again within moments (the statement would hold it
    // for two minutes): a write goes through.
    let write = json!({"query": "INSERT INTO notes (body) VALUES ('after')"});
    let mut answer = Value::Null;
    for id in 2..32 {
        answer = server.call(id, "Run_Query", write.clone()).await;
        if text_of(&answer)["success"] == json!(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(text_of(&answer)["success"], json!(true), "{answer}");
    let answer = server
        .call(40, "Run_Query", json!({"query": "SELECT body FROM notes"}))
        .await;
    assert_eq!(
        text_of(&answer)["data"],
        json!([{"body": "after"}]),
        "{answer}"
    );
}

/// A workflow of nodekit's agent, the scripted model and an MCP Client Tool
/// with `mcp` as its parameters; written to a scratch file.
fn mcp_agent_workflow(mcp: Value) -> std::path::PathBuf {
    let workflow = json!({
        "nodes": [
            {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
            {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1,
             "parameters": {"model": "gpt-4o-mini"}},
            {"name": "Shop MCP", "type": "nodekit-nodes.mcpClientTool", "typeVersion": 1.2, "parameters": mcp},
        ],
        "connections": {
            "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
            "Shop MCP": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
        },
    });
    let path = nodekit_test_support::scratch_dir()
        .join(nodekit_test_support::unique("mcp_agent") + ".json");
    std::fs::write(&path, workflow.to_string()).unwrap();
    path
}

/// A run's answer on standard output, once it succeeded.
fn answer_of(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn tool_call_reply(id: &str, name: &str, args: Value) -> Reply {
    Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "tool_calls": [
        {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}
    ]}, "finish_reason": "tool_calls"}]}),
    ])
}

fn answer_reply(text: &str) -> Reply {
    Reply::sse(&[
        json!({"choices": [{"delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
    ])
}

/// `nodekit run WORKFLOW` on one message, with the shop and the scripted model's credentials (and `extra`).
async fn run_agent(workflow: &std::path::Path, model: &str, extra: Value) -> std::process::Output {
    let mut credentials = shop();
    credentials["openAiApi"] = json!({"apiKey": "sk-local", "url": model});
    for (k, v) in extra.as_object().unwrap() {
        credentials[k] = v.clone();
    }
    nodekit(
        &[
            "run",
            workflow.to_str().unwrap(),
            "--message",
            "Which books are there?",
        ],
        &credentials,
    )
    .stdin(Stdio::null())
    .output()
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodekits_agent_uses_an_mcp_servers_tools_over_stdio() {
    let model = Server::start(vec![
        tool_call_reply(
            "call_1",
            "Select_Rows",
            json!({"tableName": "products", "whereConditions": "category = 'books'", "columns": "name", "orderBy": "name"}),
        ),
        tool_call_reply("call_2", "Select_Rows", json!({"tableName": 7})),
        answer_reply("Two e-books."),
    ])
    .await;
    // The server is `nodekit mcp serve` itself, started by the client node;
    // it inherits the run's credentials (the shop database).
    let workflow = mcp_agent_workflow(json!({
        "serverTransport": "stdio",
        "command": env!("CARGO_BIN_EXE_nodekit"),
        "arguments": format!("mcp\nserve\n{ROOT}/{SQL_AGENT}"),
        "include": "except",
        "excludeTools": ["Run_Query"],
    }));
    let out = run_agent(&workflow, &model.base_url, json!({})).await;
    assert_eq!(answer_of(&out), "Two e-books.");

    let seen = model.seen();
    // The model was offered the server's tool, with the server's schema, and not the excluded one.
    let offered = seen[0].body["tools"].as_array().unwrap();
    assert_eq!(offered.len(), 1, "{offered:?}");
    assert_eq!(offered[0]["function"]["name"], "Select_Rows");
    assert!(offered[0]["function"]["parameters"]["properties"]["tableName"].is_object());
    let results = seen[2].tool_results();
    assert_eq!(
        results[0]["data"],
        json!([{"name": "Rust in practice (e-book)"}, {"name": "SQL for agents (e-book)"}])
    );
    // The remote refusal reached the model as a tool error, and the run went on.
    let refused = results[1].as_str().unwrap();
    assert!(
        refused.starts_with("Error: the MCP tool `Select_Rows` failed"),
        "{refused}"
    );
    assert!(refused.contains("tableName"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodekits_agent_uses_an_mcp_servers_tools_over_http_with_a_token() {
    let (_server, url) = http_server("127.0.0.1:0", Some("http-token")).await;
    let model = Server::start(vec![
        tool_call_reply(
            "call_1",
            "Select_Rows",
            json!({"tableName": "customers", "columns": "name", "limit": 1, "orderBy": "name"}),
        ),
        answer_reply("Ada Lovelace."),
    ])
    .await;
    let workflow = mcp_agent_workflow(json!({
        "endpointUrl": url,
        "authentication": "bearerAuth",
        "include": "selected",
        "includeTools": ["Select_Rows"],
    }));
    let out = run_agent(
        &workflow,
        &model.base_url,
        json!({"httpBearerAuth": {"token": "http-token"}}),
    )
    .await;
    assert_eq!(answer_of(&out), "Ada Lovelace.");
    let results = model.seen()[1].tool_results();
    assert_eq!(results[0]["data"], json!([{"name": "Ada Lovelace"}]));

    // The same token as a header of the user's choice (n8n's Header Auth).
    let workflow_with_header = mcp_agent_workflow(json!({
        "endpointUrl": url,
        "authentication": "headerAuth",
        "include": "selected",
        "includeTools": ["Select_Rows"],
    }));
    let model = Server::start(vec![
        tool_call_reply(
            "call_1",
            "Select_Rows",
            json!({"tableName": "customers", "columns": "name", "limit": 1, "orderBy": "name"}),
        ),
        answer_reply("Ada Lovelace."),
    ])
    .await;
    let header = json!({"httpHeaderAuth": {"name": "Authorization", "value": "Bearer http-token"}});
    let out = run_agent(&workflow_with_header, &model.base_url, header).await;
    assert_eq!(answer_of(&out), "Ada Lovelace.");

    // A wrong token: the run fails, saying where and why, without the token.
    let out = run_agent(
        &workflow,
        &model.base_url,
        json!({"httpBearerAuth": {"token": "wrong-one"}}),
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&url) && !stderr.contains("wrong-one"),
        "{stderr}"
    );
}

/// The protocol's older HTTP+SSE transport on 127.0.0.1, in front of a
/// `nodekit mcp serve` over stdio: `GET /sse` opens the event stream, whose
/// first event names `/messages?session=1`; each message `POST`ed there goes
/// to the server's input, and each line of its output comes back as a
/// `message` event. Returns the stream's URL.
async fn sse_in_front_of_stdio() -> String {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let mut server = nodekit(&["mcp", "serve", SQL_AGENT], &shop())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut output = BufReader::new(server.stdout.take().unwrap()).lines();
    async fn request_head(stream: &mut tokio::net::TcpStream) -> String {
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8];
            stream.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        String::from_utf8(head).unwrap().to_ascii_lowercase()
    }
    tokio::spawn(async move {
        let _server = server;
        let (mut events, _) = listener.accept().await.unwrap();
        let head = request_head(&mut events).await;
        assert!(head.starts_with("get /sse "), "{head}");
        let (_, mut events) = events.into_split();
        events
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages?session=1\n\n")
            .await
            .unwrap();
        tokio::spawn(async move {
            while let Ok(Some(line)) = output.next_line().await {
                let event = format!("event: message\ndata: {line}\n\n");
                if events.write_all(event.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        loop {
            let (mut post, _) = listener.accept().await.unwrap();
            let head = request_head(&mut post).await;
            assert!(head.starts_with("post /messages?session=1 "), "{head}");
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let mut body = vec![0; length];
            post.read_exact(&mut body).await.unwrap();
            input.write_all(&body).await.unwrap();
            input.write_all(b"\n").await.unwrap();
            post.write_all(
                b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            )
            .await
            .unwrap();
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodekits_agent_uses_an_mcp_servers_tools_over_http_and_sse() {
    let url = sse_in_front_of_stdio().await;
    let model = Server::start(vec![
        tool_call_reply("call_1", "Select_Rows", json!({"tableName": "customers", "columns": "city", "whereConditions": "name = 'Grace Hopper'"})),
        answer_reply("New York."),
    ])
    .await;
    let workflow = mcp_agent_workflow(json!({"serverTransport": "sse", "endpointUrl": url}));
    let out = run_agent(&workflow, &model.base_url, json!({})).await;
    assert_eq!(answer_of(&out), "New York.");
    let seen = model.seen();
    let offered: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["Select_Rows", "Run_Query"]);
    assert_eq!(
        seen[1].tool_results()[0]["data"],
        json!([{"city": "New York"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_goes_on_when_its_server_restarts() {
    use nodekit::mcp::{McpClient, ServerTransport, ToolFilter};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (mut server, _) = http_server(&port.to_string(), None).await;
    let transport = ServerTransport::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
    };
    let client = McpClient::connect(&transport, Duration::from_secs(10))
        .await
        .unwrap();
    let tools = client
        .tools(&ToolFilter::Selected(vec!["Select_Rows".into()]))
        .await
        .unwrap();
    let select = &tools[0];
    let args = json!({"tableName": "customers", "columns": "name", "orderBy": "name", "limit": 1});
    let rows = |answer: Value| {
        serde_json::from_str::<Value>(answer.as_str().unwrap()).unwrap()["data"].clone()
    };
    assert_eq!(
        rows(select.call(args.clone()).await.unwrap()),
        json!([{"name": "Ada Lovelace"}])
    );

    // While it is down, a call fails with a tool error naming the server.
    server.kill().await.unwrap();
    let down = select.call(args.clone()).await.unwrap_err().to_string();
    assert!(
        down.contains("Select_Rows") && down.contains(&format!("127.0.0.1:{port}")),
        "{down}"
    );

    // Back up, on the same address: the next call opens a new session.
    let _server = http_server(&port.to_string(), None).await;
    assert_eq!(
        rows(select.call(args).await.unwrap()),
        json!([{"name": "Ada Lovelace"}])
    );
}

/// SIGTERM while a call runs over HTTP: the call is cancelled, its
/// statement on the database too, before the program exits.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_over_http_cancels_the_running_statement() {
    let Some((pool, schema, path, credentials)) = slow_postgres().await else {
        return;
    };
    let (mut child, url) =
        serve_over_http(path.to_str().unwrap(), &credentials, "127.0.0.1:0", None).await;
    let client = nodekit::model::http_client().build().unwrap();
    let post = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialized = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "nodekit-test", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    let endless = format!(
        "INSERT INTO {schema}.notes (body) SELECT count(*)::text FROM {schema}.numbers a, {schema}.numbers b, {schema}.numbers c"
    );
    let call = post(run_query_call(2, &endless), Some(&session));
    let call = tokio::spawn(call);
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    while busy(&pool, &schema).await == 0 {
        assert!(tokio::time::Instant::now() < end, "the query starts");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("the server stops")
        .unwrap();
    assert!(status.success(), "{status}");
    // Cancelled, not left to run to its time limit after the program is gone.
    assert!(
        until_idle(&pool, &schema, Duration::from_secs(3)).await,
        "the statement was cancelled"
    );
    let _ = call.await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&pool)
        .await
        .unwrap();
}
