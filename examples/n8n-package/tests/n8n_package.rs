//! The n8n package, without n8n: its structure, a `node --check` of every
//! file, descriptions byte-identical to the catalog, and calls through the
//! bridge, both by its JSON protocol and through the generated shims run
//! by Node.js with a stand-in for n8n's execute context (`harness.js`).
//! Faults: a panicking, hanging and aborting node, stray output, a missing
//! or wedged bridge program.
//!
//! Node.js comes from `scripts/test.sh`; without it these tests skip with a
//! reason, or fail under `CI=true`. The full run inside a real n8n is
//! `scripts/n8n-e2e.sh`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use nodekit::Catalog;
use serde_json::{Value, json};

const PROGRAM: &str = env!("CARGO_BIN_EXE_n8n-package");

fn node_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    let found = *FOUND.get_or_init(|| {
        Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !found {
        assert!(
            !nodekit_test_support::in_ci(),
            "Node.js is not installed; scripts/test.sh installs it"
        );
        eprintln!("skipped: Node.js is not installed (scripts/test.sh installs it)");
    }
    found
}

/// A fresh package folder under the target directory, alone in its own
/// folder (as in n8n's custom folder: packages beside it are checked).
/// Both are removed when it is dropped: each package holds a copy of the
/// program (over 100 MB in a debug build).
struct Scratch {
    custom: PathBuf,
    dir: PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.custom);
    }
}

fn scratch(name: &str) -> Scratch {
    let custom = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("n8n-{name}"));
    let _ = std::fs::remove_dir_all(&custom);
    let dir = custom.join("n8n-nodes-text");
    std::fs::create_dir_all(&dir).unwrap();
    Scratch { custom, dir }
}

/// Runs `package --out <dir>` with `args`.
fn run_package(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(PROGRAM)
        .arg("package")
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap()
}

/// `package`'s report, once it succeeded.
fn report(out: std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "package failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes the package of `nodes` (all runnable ones, built-ins included,
/// when empty) and returns `package`'s report.
fn package(dir: &Path, nodes: &[&str]) -> Value {
    let mut args = vec!["--builtins", "--name", "n8n-nodes-text"];
    for n in nodes {
        args.extend(["--node", n]);
    }
    report(run_package(dir, &args))
}

/// Runs `cases` through the shim of `class` in one Node.js process; one answer per case.
fn harness(dir: &Path, class: &str, cases: Value, env: &[(&str, &str)]) -> (Vec<Value>, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness.js");
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .arg(dir)
        .arg(class)
        .arg(cases.to_string())
        .env_remove("NODEKIT_BRIDGE")
        .env_remove("NODEKIT_BRIDGE_TIMEOUT_MS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_with_deadline(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}")))
        .collect();
    (answers, stderr)
}

fn run_with_deadline(mut cmd: Command, limit: Duration) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The parameters n8n gives a new node: every top-level default.
fn defaults(class_file: &Path) -> serde_json::Map<String, Value> {
    let out = Command::new("node")
        .arg("-e")
        .arg(
            "const f = process.argv[1]; const c = require('path').basename(f).split('.')[0];\
             const d = new (require(f)[c])().description; const p = {};\
             for (const q of d.properties) if (!(q.name in p)) p[q.name] = q.default;\
             console.log(JSON.stringify(p));",
        )
        .arg(class_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Packages `node` alone into a fresh folder: the folder and the parameters n8n gives a new node of it.
fn packaged(name: &str, node: &str, class: &str) -> (Scratch, serde_json::Map<String, Value>) {
    let dir = scratch(name);
    package(&dir, &[node]);
    let params = defaults(&dir.join(format!("nodes/{class}/{class}.node.js")));
    (dir, params)
}

fn tool_case(params: serde_json::Map<String, Value>, item: Value) -> Value {
    json!({"parameters": params, "items": [item]})
}

#[test]
fn the_package_has_n8ns_structure() {
    let dir = scratch("structure");
    let report = package(&dir, &[]);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    assert_eq!(manifest["name"], "n8n-nodes-text");
    assert_eq!(manifest["n8n"]["n8nNodesApiVersion"], 1);
    let files: Vec<&str> = manifest["n8n"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    // Every runnable node: the built-in sub-nodes, the SQL tools, and this crate's two tools.
    for class in [
        "TextStatsTool",
        "FaultTool",
        "SelectQueryTool",
        "MemorySqliteChat",
        "LmChatOpenAiCompatible",
        "EmbeddingsOpenAiCompatible",
        "MemoryAgent",
    ] {
        let file = format!("nodes/{class}/{class}.node.js");
        assert!(
            files.contains(&file.as_str()),
            "{file} missing from {files:?}"
        );
    }
    for file in &files {
        assert!(dir.join(file).is_file(), "{file} is listed but not written");
    }
    // Root nodes with AI inputs are packaged: the bridge makes their nodekit sub-nodes.
    for node in ["nodekit-nodes.agent", "nodekit-nodes.vectorStoreSqlite"] {
        assert!(
            report["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["node"] == node),
            "{node} missing: {report}"
        );
    }
    assert_eq!(files.len(), report["nodes"].as_array().unwrap().len());
    // n8n has openAiApi, postgres and redis; only nodekit's own sqlite type is written.
    assert_eq!(
        manifest["n8n"]["credentials"],
        json!(["credentials/Sqlite.credentials.js"])
    );
}

#[test]
fn every_file_passes_node_check_and_exports_its_class() {
    if !node_available() {
        return;
    }
    let dir = scratch("check");
    package(&dir, &[]);
    let mut js = Vec::new();
    for sub in ["nodes", "credentials", "lib"] {
        collect_js(&dir.join(sub), &mut js);
    }
    assert!(js.len() > 10, "{js:?}");
    for file in &js {
        let out = Command::new("node")
            .arg("--check")
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "node --check {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // n8n instantiates `new (require(file)[<file name up to the first dot>])()`.
    let loadable: Vec<&PathBuf> = js
        .iter()
        .filter(|f| !f.starts_with(dir.join("lib")))
        .collect();
    let out = Command::new("node")
        .arg("-e")
        .arg(
            "for (const f of process.argv.slice(1)) {\
               const c = require('path').basename(f).split('.')[0];\
               const o = new (require(f)[c])();\
               if (!o.description && !o.name) throw new Error(f + ': nothing exported as ' + c);\
             }",
        )
        .args(loadable)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn collect_js(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_js(&path, out);
        } else if path.extension().is_some_and(|e| e == "js") {
            out.push(path);
        }
    }
}

#[test]
fn descriptions_are_byte_identical_to_the_catalog() {
    if !node_available() {
        return;
    }
    nodekit_nodes::link();
    n8n_package::link();
    let dir = scratch("descriptions");
    let report = package(&dir, &[]);
    let out = Command::new("node")
        .arg("-e")
        .arg(
            "const dir = process.argv[1]; const m = require(dir + '/package.json'); const out = {};\
             for (const [c, n] of Object.entries(m.nodekit.nodes)) {\
               out[n] = JSON.stringify(new (require(`${dir}/nodes/${c}/${c}.node.js`)[c])().description);\
             }\
             const s = require(dir + '/credentials/Sqlite.credentials.js');\
             out.sqlite = JSON.stringify(new s.Sqlite());\
             console.log(JSON.stringify(out));",
        )
        .arg(&*dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let loaded: serde_json::Map<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(loaded.len(), nodes.len() + 1);
    for node in nodes {
        let name = node["node"].as_str().unwrap();
        let entry = Catalog::global().find(name).unwrap();
        let expected = serde_json::to_string(entry.description).unwrap();
        assert_eq!(loaded[name].as_str().unwrap(), expected, "{name}");
    }
    let sqlite = nodekit::credential::find("sqlite")
        .unwrap()
        .definition()
        .unwrap();
    assert_eq!(
        loaded["sqlite"].as_str().unwrap(),
        serde_json::to_string(&sqlite).unwrap()
    );
}

/// Talks to `<program> bridge` over its pipes.
struct Bridge {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Bridge {
    fn start() -> Bridge {
        Bridge::start_with(&[])
    }

    /// A bridge with these variables added to its environment.
    fn start_with(env: &[(&str, &str)]) -> Bridge {
        let mut child = Command::new(PROGRAM)
            .arg("bridge")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Bridge {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, request: &Value) {
        writeln!(self.stdin, "{request}").unwrap();
    }

    /// The next line that is an answer; other lines (a node's prints) are returned too.
    fn next_line(&mut self) -> Option<String> {
        self.lines.next().map(Result::unwrap)
    }

    fn ask(&mut self, request: Value) -> Value {
        self.send(&request);
        loop {
            let line = self.next_line().expect("the bridge closed its output");
            if let Ok(answer) = serde_json::from_str::<Value>(&line)
                && answer["id"] == request["id"]
            {
                return answer;
            }
        }
    }
}

fn text_stats(id: u64, op: &str, input: Value) -> Value {
    json!({
        "id": id, "op": op, "node": "n8n-nodes-text.textStatsTool", "nodeName": "Count words",
        "parameters": {"text": "={{ $fromAI('text') }}", "wordCounts": true},
        "input": input,
    })
}

fn fault(id: u64, fault: &str, timeout_ms: Option<u64>) -> Value {
    json!({
        "id": id, "op": "toolCall", "node": "faultTool", "nodeName": "Fault",
        "parameters": {"fault": fault, "text": "={{ $fromAI('text') }}"},
        "input": {"text": "hi"}, "timeoutMs": timeout_ms,
    })
}

#[test]
fn the_bridge_protocol_round_trips_and_survives_faults() {
    let mut bridge = Bridge::start();
    let hello = bridge.ask(json!({"id": 1, "op": "hello"}));
    let nodes = hello["result"]["nodes"].as_array().unwrap();
    assert!(
        nodes.contains(&json!("n8n-nodes-text.textStatsTool")),
        "{hello}"
    );

    let tool = bridge.ask(text_stats(2, "toolDescribe", Value::Null));
    assert_eq!(tool["result"]["name"], "Count_words", "{tool}");
    assert_eq!(
        tool["result"]["parameters"]["required"],
        json!(["text"]),
        "{tool}"
    );

    // n8n's agent adds its own input item's fields and a toolCallId: only the schema's keys go through.
    let call = bridge.ask(text_stats(
        3,
        "toolCall",
        json!({"text": "to be or not to be", "chatInput": "count", "toolCallId": "call_1"}),
    ));
    assert_eq!(call["result"]["words"], 6, "{call}");
    assert_eq!(call["result"]["wordCounts"]["be"], 2, "{call}");
    assert_eq!(call["log"][0]["action"], "tool", "{call}");
    assert_eq!(
        call["log"][0]["input"],
        json!({"text": "to be or not to be"}),
        "{call}"
    );

    let panic = bridge.ask(fault(4, "panic", None));
    assert_eq!(panic["error"]["kind"], "panic", "{panic}");
    let message = panic["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`Fault`") && message.contains("the fault tool panics on purpose"),
        "{message}"
    );

    let hang = bridge.ask(fault(5, "hang", Some(200)));
    assert_eq!(hang["error"]["kind"], "timeout", "{hang}");
    assert!(
        hang["error"]["message"].as_str().unwrap().contains("0.2 s"),
        "{hang}"
    );

    // A node printing on standard output: the line stands alone, the answer follows intact.
    bridge.send(&fault(6, "print", None));
    let mut stray = Vec::new();
    let printed = loop {
        let line = bridge.next_line().unwrap();
        match serde_json::from_str::<Value>(&line) {
            Ok(answer) if answer["id"] == 6 => break answer,
            _ => stray.push(line),
        }
    };
    assert_eq!(printed["result"]["echo"], "hi", "{printed}");
    assert_eq!(stray, ["this line is not JSON"]);

    let garbage = bridge.ask(json!({"id": 7, "op": "fly"}));
    assert_eq!(garbage["error"]["kind"], "request", "{garbage}");
    bridge.send(&json!("not a request"));
    let unreadable: Value = serde_json::from_str(&bridge.next_line().unwrap()).unwrap();
    assert_eq!(unreadable["id"], Value::Null);
    assert_eq!(unreadable["error"]["kind"], "request");

    // serde cannot read a lone UTF-16 surrogate (JSON.stringify writes them): the id is still answered.
    writeln!(
        bridge.stdin,
        r#"{{"id": 12, "op": "toolCall", "node": "textStatsTool", "input": {{"text": "\ud800"}}}}"#
    )
    .unwrap();
    let lone: Value = serde_json::from_str(&bridge.next_line().unwrap()).unwrap();
    assert_eq!(lone["id"], 12, "{lone}");
    assert_eq!(lone["error"]["kind"], "request", "{lone}");

    let unknown =
        bridge.ask(json!({"id": 8, "op": "toolCall", "node": "textStatTool", "input": {}}));
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(message.contains("textStatsTool"), "a suggestion: {message}");

    let wrong = bridge.ask(
        json!({"id": 9, "op": "memoryLoad", "node": "textStatsTool", "nodeName": "T",
        "parameters": {"text": "x"}}),
    );
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("supplies a tool"),
        "{wrong}"
    );

    // Still answering after all that.
    let again = bridge.ask(text_stats(10, "toolCall", json!({"text": "one"})));
    assert_eq!(again["result"]["words"], 1, "{again}");

    // An abort takes the process down; the shims see that as the end of output.
    bridge.send(&fault(11, "abort", None));
    assert!(bridge.next_line().is_none());
    let status = bridge.child.wait().unwrap();
    assert!(!status.success());
}

/// nodekit's MCP Client Tool supplies several tools: the bridge describes
/// them all, and a call names one in `tool` (n8n's convention for a
/// toolkit). The server is this program's own `mcp serve`, which the node
/// starts over stdio and which inherits the bridge's credentials.
#[test]
fn a_node_of_several_tools_is_a_toolkit_through_the_bridge() {
    let workflow = concat!(env!("CARGO_MANIFEST_DIR"), "/../workflows/sql-agent.json");
    let shop = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/shop.db");
    let credentials = json!({"sqlite": {"databasePath": shop}}).to_string();
    let request = |id: u64, op: &str, input: Value| {
        json!({
            "id": id, "op": op, "node": "nodekit-nodes.mcpClientTool", "nodeName": "Shop MCP",
            "parameters": {"serverTransport": "stdio", "command": PROGRAM, "arguments": format!("mcp\nserve\n{workflow}")},
            "input": input,
        })
    };
    // Inside n8n, a workflow starts a program only when the operator allows it.
    let mut bridge = Bridge::start_with(&[("NODEKIT_CREDENTIALS", &credentials)]);
    let refused = bridge.ask(request(1, "toolDescribe", Value::Null));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("NODEKIT_MCP_ALLOW_STDIO=1"),
        "{refused}"
    );
    let mut bridge = Bridge::start_with(&[
        ("NODEKIT_CREDENTIALS", &credentials),
        ("NODEKIT_MCP_ALLOW_STDIO", "1"),
    ]);
    let described = bridge.ask(request(1, "toolDescribe", Value::Null));
    let names: Vec<&str> = described["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a toolkit: {described}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Select_Rows", "Run_Query"]);

    let call = bridge.ask(request(
        2,
        "toolCall",
        json!({"tool": "Select_Rows", "tableName": "customers", "columns": "name", "orderBy": "name", "limit": 1, "toolCallId": "call_1"}),
    ));
    let answer: Value = serde_json::from_str(call["result"].as_str().unwrap_or_default())
        .unwrap_or_else(|_| panic!("the rows as text: {call}"));
    assert_eq!(answer["data"], json!([{"name": "Ada Lovelace"}]), "{call}");

    let unnamed = bridge.ask(request(3, "toolCall", json!({"tableName": "customers"})));
    assert_eq!(unnamed["error"]["kind"], "request", "{unnamed}");
    assert!(
        unnamed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`tool`"),
        "{unnamed}"
    );
    let unknown = bridge.ask(request(4, "toolCall", json!({"tool": "Drop_All"})));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Select_Rows, Run_Query"),
        "{unknown}"
    );
}

#[test]
fn a_package_holds_the_programs_own_nodes_unless_built_ins_are_asked_for() {
    let dir = scratch("own-nodes");
    let report = report(run_package(&dir, &["--name", "n8n-nodes-text"]));
    let nodes: Vec<&str> = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert!(!nodes.is_empty(), "{report}");
    assert!(
        nodes.iter().all(|n| !n.starts_with("nodekit-nodes.")),
        "{nodes:?}"
    );
    let skipped = report["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s[0] == "nodekit-nodes.selectQueryTool"
                && s[1].as_str().unwrap().contains("--builtins")),
        "{skipped:?}"
    );
}

#[test]
fn a_node_another_package_beside_it_has_is_refused() {
    let first = scratch("siblings");
    package(&first, &["selectQueryTool", "textStatsTool"]);
    let second = first.parent().unwrap().join("n8n-nodes-other");
    let out = run_package(&second, &["--builtins", "--name", "n8n-nodes-other"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`selectQueryTool`")
            && stderr.contains("`textStatsTool`")
            && stderr.contains("n8n-nodes-text"),
        "{stderr}"
    );
    assert!(!second.join("nodes").exists(), "nothing is written");
    // Nodes the first package does not have are fine.
    report(run_package(
        &second,
        &["--name", "n8n-nodes-other", "--node", "faultTool"],
    ));
}

#[test]
fn codex_files_carry_the_categories_n8n_reads() {
    let dir = scratch("codex");
    package(&dir, &["selectQueryTool", "memorySqliteChat"]);
    let codex = |class: &str| -> Value {
        let text =
            std::fs::read_to_string(dir.join(format!("nodes/{class}/{class}.node.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let tool = codex("SelectQueryTool");
    assert_eq!(tool["categories"], json!(["AI"]), "{tool}");
    assert_eq!(tool["subcategories"]["AI"], json!(["Tools"]), "{tool}");
    assert!(
        tool["resources"].is_object(),
        "n8n requires resources: {tool}"
    );
    let memory = codex("MemorySqliteChat");
    assert_eq!(memory["subcategories"]["AI"], json!(["Memory"]), "{memory}");
}

#[test]
fn package_refuses_a_folder_that_is_not_a_package() {
    let dir = scratch("not-a-package");
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let out = run_package(&dir, &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty"));
    assert!(dir.join("notes.txt").exists());
    // An earlier package is replaced.
    let again = scratch("earlier-package");
    package(&again, &["textStatsTool"]);
    package(&again, &["faultTool"]);
    assert!(!again.join("nodes/TextStatsTool").exists());
}

#[test]
fn the_bridge_finishes_running_calls_when_its_input_closes() {
    let mut bridge = Bridge::start();
    // Calls that never end, even one blocking its thread, do not keep the
    // bridge alive past its 5 s of grace.
    bridge.send(&fault(1, "hang", None));
    bridge.send(&fault(3, "block", None));
    bridge.send(&text_stats(2, "toolCall", json!({"text": "a b"})));
    drop(bridge.stdin);
    let answer: Value = serde_json::from_str(&bridge.lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(answer["result"]["words"], 2);
    let start = std::time::Instant::now();
    assert!(bridge.child.wait().unwrap().success());
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn memory_saves_and_loads_through_the_bridge() {
    let dir = scratch("memory");
    let db = dir.join("chat.db");
    let memory = |id: u64, op: &str, input: Value| {
        json!({
            "id": id, "op": op, "node": "memorySqliteChat", "nodeName": "Memory",
            "parameters": {"sessionIdType": "fromInput", "databasePath": db, "contextWindowLength": 5},
            "item": {"sessionId": "s1", "chatInput": "hello"},
            "input": input,
        })
    };
    let mut bridge = Bridge::start();
    let turn = [
        json!({"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "count", "args": {"text": "a"}}]}}),
        json!({"type": "tool", "data": {"content": "1", "tool_call_id": "c1"}}),
        json!({"type": "ai", "data": {"content": "One word."}}),
    ];
    let saved = bridge.ask(memory(
        1,
        "memorySaveTurn",
        json!({"input": "count a", "turn": turn}),
    ));
    assert_eq!(saved["result"], json!({}), "{saved}");
    assert_eq!(saved["log"][0]["action"], "saveMemory", "{saved}");
    let saved = bridge.ask(memory(
        2,
        "memorySave",
        json!({"input": "thanks", "output": "You are welcome."}),
    ));
    assert!(saved["error"].is_null(), "{saved}");

    // A new process: the messages are in the SQLite file.
    drop(bridge);
    let mut bridge = Bridge::start();
    let loaded = bridge.ask(memory(3, "memoryLoad", json!({})));
    let messages = loaded["result"]["messages"].as_array().unwrap();
    let texts: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["type"].as_str().unwrap(),
                m["data"]["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("human", "count a"),
            ("ai", "One word."),
            ("human", "thanks"),
            ("ai", "You are welcome.")
        ]
    );
    assert_eq!(loaded["log"][0]["action"], "loadMemory", "{loaded}");
}

#[test]
fn the_shim_runs_a_tool_call_as_n8ns_agent_does() {
    if !node_available() {
        return;
    }
    let (dir, mut params) = packaged("shim-tool", "textStatsTool", "TextStatsTool");
    assert!(
        params["text"].as_str().unwrap().contains("$fromAI"),
        "{params:?}"
    );
    params.insert("wordCounts".into(), json!(true));
    let item =
        json!({"chatInput": "how many words?", "text": "a rose is a rose", "toolCallId": "call_1"});
    let (answers, stderr) = harness(&dir, "TextStatsTool", json!([tool_case(params, item)]), &[]);
    assert_eq!(
        answers[0]["output"][0][0]["json"],
        json!({"words": 5, "lines": 1, "characters": 16, "wordCounts": {"a": 2, "rose": 2, "is": 1}}),
        "{answers:?} {stderr}"
    );
    assert_eq!(answers[0]["output"][0][0]["pairedItem"], json!({"item": 0}));
}

#[test]
fn parameters_as_n8n_resolves_them() {
    if !node_available() {
        return;
    }
    let dir = scratch("shim-fromai");
    package(&dir, &["textStatsTool"]);
    // `$fromai` in lower case; `wordCounts` missing, so its default applies.
    let mut params = serde_json::Map::new();
    params.insert(
        "text".into(),
        json!("={{ $fromai('text', 'what to count') }}"),
    );
    let item = json!({"text": "one two", "toolCallId": "c1"});
    // A value n8n resolved already (a fixed text): the model's argument is not used.
    let mut fixed = serde_json::Map::new();
    fixed.insert("text".into(), json!("a fixed text of six words"));
    let (answers, stderr) = harness(
        &dir,
        "TextStatsTool",
        json!([tool_case(params, item.clone()), tool_case(fixed, item)]),
        &[],
    );
    assert_eq!(
        answers[0]["output"][0][0]["json"],
        json!({"words": 2, "lines": 1, "characters": 7}),
        "{answers:?} {stderr}"
    );
    assert_eq!(
        answers[1]["output"][0][0]["json"]["words"], 6,
        "{answers:?}"
    );
}

#[test]
fn the_shim_runs_a_sql_tool_on_a_real_sqlite_database() {
    if !node_available() {
        return;
    }
    let (dir, mut case) = select_tool_on_a_shop("shim-sql");
    case["items"] = json!([{"chatInput": "who are the customers?", "tableName": "customers", "orderBy": "id", "toolCallId": "c1"}]);
    // n8n reads credentials from its database on every call: the shim
    // keeps them for the rest of an execution, not beyond it.
    let in_execution = |id: Option<&str>| {
        let mut case = case.clone();
        case["executionId"] = json!(id);
        case
    };
    let cases = json!([
        in_execution(Some("e1")),
        in_execution(Some("e1")),
        in_execution(Some("e2")),
        in_execution(None),
        in_execution(None)
    ]);
    let (answers, stderr) = harness(&dir, "SelectQueryTool", cases, &[]);
    for answer in &answers {
        let json = &answer["output"][0][0]["json"];
        assert_eq!(json["success"], true, "{answers:?} {stderr}");
        assert_eq!(
            json["data"],
            json!([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]),
            "{json}"
        );
    }
    let reads: Vec<&Value> = answers.iter().map(|a| &a["credentialReads"]).collect();
    assert_eq!(reads, [1, 0, 1, 1, 1], "{answers:?}");
}

#[test]
fn a_tool_whose_definition_is_known_is_supplied_before_its_credentials_are_read() {
    if !node_available() {
        return;
    }
    let (dir, mut case) = select_tool_on_a_shop("shim-supply");
    // Each read of n8n's database takes a while; an agent supplies its
    // tools on every execution, then calls one.
    case["credentialDelayMs"] = json!(50);
    case["supply"] =
        json!({"method": "func", "args": [{"tableName": "customers", "orderBy": "id"}]});
    let in_execution = |id: &str| {
        let mut case = case.clone();
        case["executionId"] = json!(id);
        case
    };
    let mut not_called = in_execution("e3");
    not_called["supply"] = json!({});
    let cases = json!([in_execution("e1"), in_execution("e2"), not_called]);
    let (answers, stderr) = harness(&dir, "SelectQueryTool", cases, &[]);
    // The first supply asks the bridge for the definition, which needs the
    // credentials; the second has it already and waits for nothing. Both
    // tools then run with the credentials read once in their execution. A
    // tool the model does not call reads none, as n8n's own tools.
    let waited: Vec<&Value> = answers.iter().map(|a| &a["readBeforeSupplied"]).collect();
    assert_eq!(waited, [1, 0, 0], "{answers:?} {stderr}");
    assert_eq!(answers[2]["credentialReads"], 0, "{answers:?}");
    for answer in &answers[..2] {
        assert_eq!(answer["credentialReads"], 1, "{answers:?}");
        let out: Value = serde_json::from_str(answer["output"].as_str().unwrap()).unwrap();
        assert_eq!(
            out["data"],
            json!([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]),
            "{out}"
        );
    }
}

#[test]
fn an_execution_loads_its_memory_once_until_it_saves() {
    if !node_available() {
        return;
    }
    let (dir, mut params) = packaged("shim-memory", "memorySqliteChat", "MemorySqliteChat");
    params.insert("databasePath".into(), json!(dir.join("chat.db")));
    // n8n's agent loads its memory on each of its runs in an execution.
    let case = |execution: Option<&str>, method: &str, args: Value| {
        json!({
            "parameters": params, "items": [{"sessionId": "s1", "chatInput": "hi"}],
            "executionId": execution, "supply": {"method": method, "args": args},
        })
    };
    let load = |execution| case(execution, "loadMemoryVariables", json!([{}]));
    let save = |execution, text: &str| {
        case(
            execution,
            "saveContext",
            json!([{"input": text}, {"output": format!("{text}!")}]),
        )
    };
    let cases = json!([
        load(Some("e1")),
        save(Some("e2"), "elsewhere"),
        load(Some("e1")),
        save(Some("e1"), "here"),
        load(Some("e1")),
        load(None)
    ]);
    let (answers, stderr) = harness(&dir, "MemorySqliteChat", cases, &[]);
    let texts = |answer: &Value| -> Vec<String> {
        answer["output"]["chat_history"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer} {stderr}"))
            .iter()
            .map(|m| m["data"]["content"].as_str().unwrap().to_owned())
            .collect()
    };
    // The session's item names it; e1's second load is its first one's,
    // though e2 saved meanwhile, and is recorded again; e1's own save ends that.
    assert!(texts(&answers[0]).is_empty(), "{answers:?}");
    assert!(texts(&answers[2]).is_empty(), "{answers:?}");
    let all = ["elsewhere", "elsewhere!", "here", "here!"];
    assert_eq!(texts(&answers[4]), all, "{answers:?}");
    assert_eq!(texts(&answers[5]), all, "{answers:?}");
    for i in [0, 2, 4, 5] {
        assert_eq!(answers[i]["runs"][0]["action"], "loadMemory", "{answers:?}");
    }
}

/// The packaged select tool (in `name`'s folder) with a harness case for a
/// SQLite shop of two customers: its parameters and credentials.
fn select_tool_on_a_shop(name: &str) -> (Scratch, Value) {
    let (dir, params) = packaged(name, "selectQueryTool", "SelectQueryTool");
    let db = dir.join("shop.db");
    create_shop(&db);
    let case = json!({"parameters": params, "credentials": {"sqlite": {"databasePath": db}}});
    (dir, case)
}

fn create_shop(db: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(db)
            .create_if_missing(true);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        for sql in [
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
            "INSERT INTO customers (id, name) VALUES (1, 'Ada'), (2, 'Grace')",
        ] {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        pool.close().await;
    });
}

#[test]
fn faults_are_clear_node_errors() {
    if !node_available() {
        return;
    }
    let (dir, params) = packaged("shim-faults", "faultTool", "FaultTool");
    let case = |fault: &str, continue_on_fail: bool| {
        let mut p = params.clone();
        p.insert("fault".into(), json!(fault));
        json!({"parameters": p, "items": [{"text": "hi", "toolCallId": "c1"}], "continueOnFail": continue_on_fail})
    };
    let (answers, stderr) = harness(
        &dir,
        "FaultTool",
        json!([
            case("panic", false),
            case("panic", true),
            case("hang", false),
            case("print", false),
            case("abort", false),
            case("none", false),
            case("block", false),
            case("none", false),
        ]),
        &[("NODEKIT_BRIDGE_TIMEOUT_MS", "500")],
    );
    let error = |i: usize| {
        answers[i]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        error(0).contains("panicked: the fault tool panics on purpose"),
        "{answers:?}"
    );
    assert_eq!(
        answers[1]["output"][0][0]["json"]["error"]
            .as_str()
            .map(|e| e.contains("panicked")),
        Some(true),
        "continue on fail: {answers:?}"
    );
    assert!(
        error(2).contains("did not answer within 0.5 s"),
        "{answers:?}"
    );
    assert_eq!(
        answers[3]["output"][0][0]["json"],
        json!({"echo": "hi"}),
        "{answers:?}"
    );
    assert!(
        stderr.contains("nodekit bridge printed: this line is not JSON"),
        "{stderr}"
    );
    assert!(
        error(4).contains("killed by SIGABRT") && error(4).contains("while node \"Fault Tool\""),
        "{answers:?}"
    );
    // The panics of calls 0 and 1, which the bridge survived, are not this
    // crash's output.
    assert!(!error(4).contains("panics on purpose"), "{answers:?}");
    // The next call starts a new bridge process.
    assert_eq!(
        answers[5]["output"][0][0]["json"],
        json!({"echo": "hi"}),
        "{answers:?}"
    );
    // A blocked thread cannot be cancelled: no answer comes, and the bridge is killed and restarted.
    assert!(
        error(6).contains("did not answer within 0.5 s, and the nodekit bridge did not cancel it"),
        "{answers:?}"
    );
    assert_eq!(
        answers[7]["output"][0][0]["json"],
        json!({"echo": "hi"}),
        "{answers:?}"
    );
}

#[test]
fn a_failing_tool_answers_the_model() {
    if !node_available() {
        return;
    }
    let (dir, params) = packaged("shim-tool-error", "selectQueryTool", "SelectQueryTool");
    // No database credential: the tool fails, and n8n's agent hands the error to the model.
    let case =
        json!({"parameters": params, "items": [{"tableName": "customers", "toolCallId": "c1"}]});
    let (answers, _) = harness(&dir, "SelectQueryTool", json!([case]), &[]);
    let error = answers[0]["output"][0][0]["json"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("postgres or sqlite"), "{answers:?}");
}

#[test]
fn a_missing_or_wedged_bridge_program_is_a_clear_error() {
    if !node_available() {
        return;
    }
    let (dir, params) = packaged("shim-missing", "textStatsTool", "TextStatsTool");
    let cases = json!([tool_case(params, json!({"text": "a"}))]);
    std::fs::remove_dir_all(dir.join("bin")).unwrap();
    let (answers, _) = harness(&dir, "TextStatsTool", cases.clone(), &[]);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the nodekit bridge program is missing")
            && message.contains("nodekit package"),
        "{message}"
    );

    // A program that reads requests and never answers.
    let wedged = dir.join("wedged.sh");
    std::fs::write(
        &wedged,
        "#!/bin/sh\necho starting >&2\nexec cat >/dev/null\n",
    )
    .unwrap();
    let exits = dir.join("exits.sh");
    std::fs::write(
        &exits,
        "#!/bin/sh\necho '{not json'\necho 'cannot open the catalog' >&2\nexit 3\n",
    )
    .unwrap();
    for f in [&wedged, &exits] {
        let mut perms = std::fs::metadata(f).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(f, perms).unwrap();
    }
    let (answers, _) = harness(
        &dir,
        "TextStatsTool",
        cases.clone(),
        &[
            ("NODEKIT_BRIDGE", wedged.to_str().unwrap()),
            ("NODEKIT_BRIDGE_TIMEOUT_MS", "300"),
        ],
    );
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("did not answer within 0.3 s") && message.contains("killed"),
        "{message}"
    );
    let (answers, stderr) = harness(
        &dir,
        "TextStatsTool",
        cases,
        &[("NODEKIT_BRIDGE", exits.to_str().unwrap())],
    );
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exited with status 3") && message.contains("cannot open the catalog"),
        "{message}"
    );
    assert!(
        stderr.contains("nodekit bridge printed: {not json"),
        "{stderr}"
    );
    // Its standard error, its log, goes to n8n's log line by line.
    assert!(
        stderr.contains("nodekit bridge: cannot open the catalog"),
        "{stderr}"
    );
}

/// The nodes of a retrieval workflow, as n8n connects them: the SQLite
/// vector store, nodekit's embeddings (an OpenAI-compatible server on
/// 127.0.0.1), its default data loader and its recursive splitter.
#[test]
fn a_vector_store_runs_with_its_nodekit_sub_nodes() {
    if !node_available() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(nodekit_test_support::embeddings::EmbedServer::start(64));
    let dir = scratch("shim-vector-store");
    package(
        &dir,
        &[
            "vectorStoreSqlite",
            "embeddingsOpenAiCompatible",
            "documentDefaultDataLoader",
            "textSplitterRecursiveCharacterTextSplitter",
        ],
    );
    const TEXT: &str = "The boiler pressure must stay between one and two bar. \
                        Bleed the radiators every autumn before the heating season.";
    let db = dir.join("vectors.db");
    let embeddings = json!({
        "class": "EmbeddingsOpenAiCompatible", "nodeName": "Embeddings",
        "parameters": {"model": "bag-of-words"},
        "credentials": {"openAiApi": {"apiKey": "sk-local", "url": server.base_url}},
    });
    let loader = json!({
        "class": "DocumentDefaultDataLoader", "nodeName": "Loader",
        // What n8n resolves `={{ $json.text }}` to for the item.
        "parameters": {"jsonMode": "expressionData", "jsonData": TEXT, "textSplittingMode": "custom"},
        "inputs": {"ai_textSplitter": [{
            "class": "TextSplitterRecursiveCharacterTextSplitter", "nodeName": "Splitter",
            "parameters": {"chunkSize": 40, "chunkOverlap": 0},
        }]},
    });
    let store = |mode: &str, extra: Value, inputs: Value, items: Value| {
        let mut parameters = json!({"mode": mode, "collection": "manuals"});
        parameters
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({
            "nodeName": "Store", "parameters": parameters,
            "credentials": {"sqlite": {"databasePath": db}},
            "inputs": inputs, "items": items,
        })
    };
    // "retrieve": a LangChain vector store, searched by text in the bridge.
    let mut retrieve = store(
        "retrieve",
        json!({}),
        json!({"ai_embedding": [embeddings]}),
        json!([{}]),
    );
    retrieve["supply"] =
        json!({"method": "similaritySearchWithScore", "args": ["autumn heating season", 1]});
    let cases = json!([
        store(
            "insert",
            json!({}),
            json!({"ai_embedding": [embeddings], "ai_document": [loader]}),
            json!([{"text": TEXT}]),
        ),
        store(
            "load",
            json!({"prompt": "boiler pressure bar", "topK": 1}),
            json!({"ai_embedding": [embeddings]}),
            json!([{}]),
        ),
        store(
            "retrieve-as-tool",
            json!({"toolDescription": "The heating manual", "topK": 1}),
            json!({"ai_embedding": [embeddings]}),
            json!([{"input": "when to bleed the radiators", "toolCallId": "c1"}]),
        ),
        retrieve,
        // n8n's own embeddings node: refused, by name.
        store(
            "load",
            json!({"prompt": "boiler"}),
            json!({"ai_embedding": [{"foreign": "OpenAIEmbeddings"}]}),
            json!([{}]),
        ),
    ]);
    let (answers, stderr) = harness(&dir, "VectorStoreSqlite", cases, &[]);

    // Inserted: the text cut by the connected splitter into chunks of at most 40 characters.
    let inserted: Vec<&str> = answers[0]["output"][0]
        .as_array()
        .unwrap_or_else(|| panic!("{answers:?} {stderr}"))
        .iter()
        .map(|d| d["json"]["pageContent"].as_str().unwrap())
        .collect();
    assert!(inserted.len() > 2, "{inserted:?}");
    assert!(inserted.iter().all(|c| c.len() <= 40), "{inserted:?}");
    assert_eq!(inserted.join(" "), TEXT, "{inserted:?}");
    // Each sub-node's calls are runs of that sub-node.
    let runs = |i: usize, node: &str| -> Vec<String> {
        answers[i]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["node"] == node)
            .map(|r| {
                format!(
                    "{}:{}",
                    r["connection"].as_str().unwrap(),
                    r["action"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert!(!runs(0, "Embeddings").is_empty(), "{answers:?}");
    assert!(
        runs(0, "Embeddings")
            .iter()
            .all(|r| r.starts_with("ai_embedding:"))
    );
    assert!(!runs(0, "Splitter").is_empty(), "{answers:?}");
    assert!(
        runs(0, "Splitter")
            .iter()
            .all(|r| r.starts_with("ai_textSplitter:"))
    );

    let found = &answers[1]["output"][0][0]["json"];
    assert!(
        found["document"]["pageContent"]
            .as_str()
            .unwrap()
            .contains("pressure"),
        "{answers:?}"
    );
    let answer = answers[2]["output"][0][0]["json"]["response"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answers:?}"));
    assert!(answer.contains("radiators"), "{answer}");
    let [(document, score)] = &answers[3]["output"]
        .as_array()
        .map(|found| {
            found
                .iter()
                .map(|f| (f[0].clone(), f[1].clone()))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()[..]
    else {
        panic!("{answers:?}")
    };
    assert!(
        document["pageContent"].as_str().unwrap().contains("autumn"),
        "{document}"
    );
    assert_eq!(document["metadata"]["source"], "blob", "{document}");
    assert!(score.as_f64().unwrap() > 0.3, "{score}");
    let refused = answers[4]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        refused.contains("`ai_embedding`") && refused.contains("`OpenAIEmbeddings`"),
        "{answers:?}"
    );
}

/// nodekit's agent inside n8n, with nodekit's chat model (a scripted
/// OpenAI-compatible server on 127.0.0.1) and a nodekit tool: the bridge
/// makes both and runs the agent's loop.
#[test]
fn nodekits_agent_runs_with_its_nodekit_sub_nodes() {
    if !node_available() {
        return;
    }
    use nodekit_test_support::openai::{Reply, Server};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime.block_on(Server::start(vec![
        Reply::json(200, &json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Count_words", "arguments": "{\"text\":\"a rose is a rose\"}"}}
            ]}}]})),
        Reply::json(200, &json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Five words."}}]})),
    ]));
    let dir = scratch("shim-agent");
    package(&dir, &["agent", "lmChatOpenAiCompatible", "textStatsTool"]);
    let case = json!({
        "nodeName": "AI Agent",
        "parameters": {"text": "How many words has 'a rose is a rose'?"},
        "items": [{}],
        "inputs": {
            "ai_languageModel": [{
                "class": "LmChatOpenAiCompatible", "nodeName": "Chat Model",
                "parameters": {"model": "scripted"},
                "credentials": {"openAiApi": {"apiKey": "sk-local", "url": model.base_url}},
            }],
            "ai_tool": [{"class": "TextStatsTool", "nodeName": "Count words", "parameters": {}}],
        },
    });
    let (answers, stderr) = harness(&dir, "Agent", json!([case]), &[]);
    assert_eq!(
        answers[0]["output"][0][0]["json"]["output"], "Five words.",
        "{answers:?} {stderr}"
    );
    let seen = model.seen();
    assert_eq!(seen.len(), 2, "{answers:?}");
    assert_eq!(seen[0].body["tools"][0]["function"]["name"], "Count_words");
    let result = seen[1].tool_results()[0].to_string();
    assert!(
        result.contains("\\\"words\\\":5") || result.contains("\"words\":5"),
        "{result}"
    );
    let runs: Vec<String> = answers[0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}/{}/{}",
                r["node"].as_str().unwrap(),
                r["connection"].as_str().unwrap(),
                r["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        runs.iter()
            .filter(|r| r.starts_with("Chat Model/ai_languageModel/"))
            .count(),
        2,
        "{runs:?}"
    );
    assert!(
        runs.iter().any(|r| r.starts_with("Count words/ai_tool/")),
        "{runs:?}"
    );
}

/// This Linux host's platform as Node.js names it, e.g. `linux-x64`.
fn host_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("linux-{arch}")
}

/// The package holds its program under `bin/<platform>/`, executable, and
/// names it in `package.json` by Node.js's platform name.
#[test]
fn the_program_is_packaged_per_platform() {
    let dir = scratch("platform");
    let report = package(&dir, &["textStatsTool"]);
    let platform = host_platform();
    let file = format!("bin/{platform}/n8n-package");
    assert_eq!(
        report["programs"][0]["platform"],
        platform.as_str(),
        "{report}"
    );
    assert_eq!(report["programs"][0]["file"], file.as_str(), "{report}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["nodekit"]["bridges"],
        json!({platform.clone(): file})
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join(&file))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // This test build is linked dynamically: the report warns of it.
    let dynamic = report["programs"][0]["dynamic"].as_bool().unwrap();
    assert_eq!(
        report["warnings"].as_array().unwrap().len(),
        usize::from(dynamic),
        "{report}"
    );
}

/// A minimal ELF header of a 64-bit little-endian executable for `machine`.
fn elf_header(machine: u16) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // 64-bit
    h[5] = 1; // little-endian
    h[6] = 1; // version
    h[16..18].copy_from_slice(&2u16.to_le_bytes()); // executable
    h[18..20].copy_from_slice(&machine.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes()); // header size
    h[54..56].copy_from_slice(&56u16.to_le_bytes()); // program header size
    h[58..60].copy_from_slice(&64u16.to_le_bytes()); // section header size
    h
}

#[test]
fn binaries_built_elsewhere_are_added_by_their_platform() {
    let dir = scratch("binaries");
    let arm = dir.parent().unwrap().join("n8n-package-arm64");
    std::fs::write(&arm, elf_header(183)).unwrap();
    let arm = arm.to_str().unwrap();
    let out = run_package(
        &dir,
        &[
            "--name",
            "n8n-nodes-text",
            "--node",
            "textStatsTool",
            "--binary",
            arm,
        ],
    );
    let report = report(out);
    let platforms: Vec<&str> = report["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["platform"].as_str().unwrap())
        .collect();
    assert!(platforms.contains(&"linux-arm64"), "{report}");
    assert_eq!(platforms.len(), 2, "{report}");
    assert!(dir.join("bin/linux-arm64/n8n-package-arm64").exists());

    // Two programs for one platform, and a file that is no program.
    let out = run_package(
        &dir,
        &["--node", "textStatsTool", "--binary", arm, "--binary", arm],
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("two programs for linux-arm64"),
        "{e}"
    );
    let script = dir.parent().unwrap().join("not-a-program.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let out = run_package(
        &dir,
        &[
            "--node",
            "textStatsTool",
            "--binary",
            script.to_str().unwrap(),
        ],
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("not-a-program.sh") && e.contains("not a program"),
        "{e}"
    );
}

#[test]
fn a_name_n8n_would_not_install_is_refused_naming_the_rule() {
    let dir = scratch("bad-name");
    let out = run_package(
        &dir,
        &["--name", "weather-nodes", "--node", "textStatsTool"],
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("must start with `n8n-nodes-`"),
        "{e}"
    );
    assert!(!dir.join("package.json").exists());
}

#[test]
fn a_host_without_its_platforms_program_gets_an_error_naming_both() {
    if !node_available() {
        return;
    }
    let (dir, params) = packaged("shim-platform", "textStatsTool", "TextStatsTool");
    let path = dir.join("package.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["nodekit"]["bridges"] = json!({"linux-s390x": "bin/linux-s390x/n8n-package", "darwin-arm64": "bin/darwin-arm64/n8n-package"});
    std::fs::write(&path, manifest.to_string()).unwrap();
    let cases = json!([tool_case(params, json!({"text": "a"}))]);
    let (answers, _) = harness(&dir, "TextStatsTool", cases, &[]);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("no bridge program for {}", host_platform()))
            && message.contains("linux-s390x, darwin-arm64")
            && message.contains("--binary"),
        "{message}"
    );
}

/// Under n8n's queue mode, the bridge warns once, on standard error, that
/// Simple Memory keeps its data in the process; not otherwise.
#[test]
fn in_process_memory_warns_once_under_queue_mode() {
    let run = |mode: Option<&str>| -> String {
        let mut cmd = Command::new(PROGRAM);
        cmd.arg("bridge")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("EXECUTIONS_MODE")
            .env_remove("NODEKIT_LOG");
        if let Some(mode) = mode {
            cmd.env("EXECUTIONS_MODE", mode);
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for (id, session) in [(1, "a"), (2, "b")] {
            let request = json!({
                "id": id, "op": "memoryLoad", "node": "memoryBufferWindow", "nodeName": "Memory",
                "parameters": {"sessionIdType": "fromInput", "contextWindowLength": 5},
                "item": {"sessionId": session, "chatInput": "hello"}, "input": {},
            });
            writeln!(stdin, "{request}").unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let answers = String::from_utf8_lossy(&out.stdout);
        assert_eq!(answers.lines().count(), 2, "{answers}");
        assert!(!answers.contains("\"error\""), "{answers}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let queue = run(Some("queue"));
    assert_eq!(queue.matches("runs in queue mode").count(), 1, "{queue}");
    assert!(
        queue.contains("Simple Memory") && queue.contains("WARN"),
        "{queue}"
    );
    for mode in [None, Some("regular")] {
        let quiet = run(mode);
        assert!(!quiet.contains("queue mode"), "{quiet}");
    }
}

/// The program speaks as itself, and `package` sums up what it left out
/// in a line a reason, not a line a node.
#[test]
fn the_program_names_itself_and_sums_up_what_it_left_out() {
    let version = Command::new(PROGRAM).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    assert!(version.starts_with("n8n-package "), "{version}");
    let dir = nodekit_test_support::scratch_dir().join(nodekit_test_support::unique("summary"));
    let out = run_package(&dir, &["--name", "n8n-nodes-text"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let left_out: Vec<&str> = stderr.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(left_out.len(), 1, "{stderr}");
    assert!(
        left_out[0].starts_with("n8n-package: left out "),
        "{stderr}"
    );
    // The tests run a debug build, which is worth a word.
    assert!(stderr.contains("debug build"), "{stderr}");
}

#[test]
fn the_packaged_anthropic_chat_model_answers_the_agent_in_anthropics_format() {
    if !node_available() {
        return;
    }
    use nodekit_test_support::openai::{Reply, Server};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime.block_on(Server::start(vec![Reply::json(200, &json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "Bonjour."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 3}
    }))]));
    let dir = scratch("shim-anthropic");
    let report = package(&dir, &["agent", "lmChatAnthropic"]);
    // n8n ships `anthropicApi`: the package uses it and writes no credential file.
    assert!(
        !dir.join("credentials/AnthropicApi.credentials.js").exists(),
        "{report}"
    );
    let case = json!({
        "nodeName": "AI Agent",
        "parameters": {"text": "Say hello in French."},
        "items": [{}],
        "inputs": {
            "ai_languageModel": [{
                "class": "LmChatAnthropic", "nodeName": "Anthropic Chat Model",
                "parameters": {"model": {"__rl": true, "mode": "list", "value": "claude-sonnet-4-5-20250929"}},
                "credentials": {"anthropicApi": {"apiKey": "sk-ant-local", "url": model.base_url.trim_end_matches("/v1")}},
            }],
        },
    });
    let (answers, stderr) = harness(&dir, "Agent", json!([case]), &[]);
    assert_eq!(
        answers[0]["output"][0][0]["json"]["output"], "Bonjour.",
        "{answers:?} {stderr}"
    );
    let seen = model.seen();
    assert_eq!(seen.len(), 1, "{answers:?}");
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some("sk-ant-local"));
    assert_eq!(seen[0].body["max_tokens"], 4096);
}

#[test]
fn n8ns_model_and_embeddings_nodes_package_on_n8ns_own_credentials() {
    let nodes = [
        ("lmChatOpenAi", "LmChatOpenAi"),
        ("lmChatAzureOpenAi", "LmChatAzureOpenAi"),
        ("lmChatGoogleGemini", "LmChatGoogleGemini"),
        ("lmChatOllama", "LmChatOllama"),
        ("lmChatGroq", "LmChatGroq"),
        ("lmChatMistralCloud", "LmChatMistralCloud"),
        ("lmChatDeepSeek", "LmChatDeepSeek"),
        ("lmChatOpenRouter", "LmChatOpenRouter"),
        ("lmChatXAiGrok", "LmChatXAiGrok"),
        ("embeddingsOpenAi", "EmbeddingsOpenAi"),
        ("embeddingsAzureOpenAi", "EmbeddingsAzureOpenAi"),
        ("embeddingsGoogleGemini", "EmbeddingsGoogleGemini"),
        ("embeddingsOllama", "EmbeddingsOllama"),
        ("embeddingsMistralCloud", "EmbeddingsMistralCloud"),
    ];
    let dir = scratch("n8n-model-nodes");
    let names: Vec<&str> = nodes.iter().map(|(name, _)| *name).collect();
    let report = package(&dir, &names);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    let files = &manifest["n8n"]["nodes"];
    for (name, class) in nodes {
        let file = format!("nodes/{class}/{class}.node.js");
        assert!(
            files.as_array().unwrap().contains(&json!(file)) && dir.join(&file).is_file(),
            "{file} is not in {files}"
        );
        let packaged = report["nodes"].as_array().unwrap().iter();
        assert!(
            packaged
                .clone()
                .any(|n| n["node"] == format!("nodekit-nodes.{name}")),
            "{name} is not in {report}"
        );
    }
    // Every credential they use is one n8n ships: the package writes none.
    let credentials = dir.join("credentials");
    let written: Vec<_> = std::fs::read_dir(&credentials)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?} {report}");
}
