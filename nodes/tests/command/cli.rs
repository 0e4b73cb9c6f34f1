//! The `nodekit` binary: output on stdout, errors on stderr, exit codes.

use std::process::{Command, Output};

use serde_json::{Value, json};

pub(super) fn nodekit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(args)
        .output()
        .expect("the nodekit binary runs")
}

fn nodekit_with_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the nodekit binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn catalog_lists_built_in_nodes_sorted_and_deterministic() {
    let first = nodekit(&["catalog"]);
    let catalog = stdout_json(&first);
    let names: Vec<&str> = catalog
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "nodekit-nodes.agent",
            "nodekit-nodes.deleteDataTool",
            "nodekit-nodes.describeDatabaseTool",
            "nodekit-nodes.documentDefaultDataLoader",
            "nodekit-nodes.embeddingsAzureOpenAi",
            "nodekit-nodes.embeddingsGoogleGemini",
            "nodekit-nodes.embeddingsMistralCloud",
            "nodekit-nodes.embeddingsOllama",
            "nodekit-nodes.embeddingsOpenAi",
            "nodekit-nodes.embeddingsOpenAiCompatible",
            "nodekit-nodes.executeSqlTool",
            "nodekit-nodes.insertDataTool",
            "nodekit-nodes.lmChatAnthropic",
            "nodekit-nodes.lmChatAzureOpenAi",
            "nodekit-nodes.lmChatDeepSeek",
            "nodekit-nodes.lmChatGoogleGemini",
            "nodekit-nodes.lmChatGroq",
            "nodekit-nodes.lmChatMistralCloud",
            "nodekit-nodes.lmChatOllama",
            "nodekit-nodes.lmChatOpenAi",
            "nodekit-nodes.lmChatOpenAiCompatible",
            "nodekit-nodes.lmChatOpenRouter",
            "nodekit-nodes.lmChatXAiGrok",
            "nodekit-nodes.mcpClientTool",
            "nodekit-nodes.memoryAgent",
            "nodekit-nodes.memoryBufferWindow",
            "nodekit-nodes.memoryPostgresChat",
            "nodekit-nodes.memoryRedisChat",
            "nodekit-nodes.memorySqliteChat",
            "nodekit-nodes.modelSelector",
            "nodekit-nodes.selectQueryTool",
            "nodekit-nodes.sqlTransactionTool",
            "nodekit-nodes.textSplitterCharacterTextSplitter",
            "nodekit-nodes.textSplitterRecursiveCharacterTextSplitter",
            "nodekit-nodes.toolHttpRequest",
            "nodekit-nodes.toolThink",
            "nodekit-nodes.updateDataTool",
            "nodekit-nodes.upsertDataTool",
            "nodekit-nodes.vectorStoreInMemory",
            "nodekit-nodes.vectorStorePGVector",
            "nodekit-nodes.vectorStoreSqlite",
        ]
    );
    assert_eq!(nodekit(&["catalog"]).stdout, first.stdout);
}

#[test]
fn catalog_writes_a_file() {
    let dir =
        nodekit_test_support::scratch_dir().join(format!("nodekit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nodes.json");
    let out = nodekit(&["catalog", "--out", file.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written, stdout_json(&nodekit(&["catalog"])));
    let bad = nodekit(&[
        "catalog",
        "--out",
        dir.join("missing/dir/x.json").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).starts_with("nodekit: cannot write"),
        "{}",
        stderr(&bad)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn describe_matches_n8n_simple_memory() {
    let d = stdout_json(&nodekit(&["describe", "memoryBufferWindow"]));
    assert_eq!(d["displayName"], "Simple Memory");
    assert_eq!(d["outputs"], json!(["ai_memory"]));
    assert_eq!(
        d["codex"]["subcategories"],
        json!({"AI": ["Memory"], "Memory": ["Other memories"]})
    );
    // Like n8n's, a notice says that the memory is not shared in queue mode.
    assert_eq!(d["properties"][0]["type"], "notice");
    assert!(
        d["properties"][0]["displayName"]
            .as_str()
            .unwrap()
            .contains("not compatible with Queue Mode"),
        "{d}"
    );
    assert_eq!(d["properties"][1]["name"], "sessionIdType");
    assert_eq!(d["properties"][1]["default"], "fromInput");
    assert_eq!(
        d["properties"][1]["options"][1],
        json!({"name": "Define below", "value": "customKey", "description": "Use an expression to reference data in previous nodes or enter static text."})
    );
    assert_eq!(
        d["properties"][2]["displayOptions"],
        json!({"show": {"sessionIdType": ["customKey"]}})
    );
    assert_eq!(
        d["properties"][3],
        json!({
            "displayName": "Context Window Length",
            "name": "contextWindowLength",
            "type": "number",
            "typeOptions": {"minValue": 1},
            "default": 5,
            "description": "How many past interactions the model receives as context."
        })
    );
    let same = stdout_json(&nodekit(&["describe", "nodekit-nodes.memoryBufferWindow"]));
    assert_eq!(same, d);
}

#[test]
fn unknown_node_is_an_error_with_a_suggestion() {
    let out = nodekit(&["describe", "memoryBufferWindo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "nodekit: unknown node `memoryBufferWindo` (did you mean `nodekit-nodes.memoryBufferWindow`?)\n"
    );
}

#[test]
fn tool_schema_follows_the_parameters() {
    let params = r#"{"sessionIdType": "customKey", "sessionKey": "={{ $fromAI('user', 'Who is asking', 'string') }}"}"#;
    let t = stdout_json(&nodekit(&[
        "tool-schema",
        "memoryBufferWindow",
        "--params",
        params,
        "--name",
        "My memory",
    ]));
    assert_eq!(t["type"], "function");
    assert_eq!(t["function"]["name"], "My_memory");
    assert_eq!(
        t["function"]["parameters"]["properties"]["user"],
        json!({"type": "string", "description": "Who is asking"})
    );
    // With the key from the input, the hidden sessionKey asks for nothing.
    let t = stdout_json(&nodekit(&[
        "tool-schema",
        "memoryBufferWindow",
        "--params",
        r#"{"sessionKey": "={{ $fromAI('user') }}"}"#,
    ]));
    assert_eq!(t["function"]["name"], "Simple_Memory");
    assert_eq!(t["function"]["parameters"]["properties"], json!({}));
}

#[test]
fn from_ai_reads_arbitrary_json_from_a_file_or_stdin() {
    let params = json!({"a": "={{ $fromAI('n', 'A number', 'number', 3) }}", "b": [{"c": "x {{ $fromAI(\"s\") }}"}]});
    let dir =
        nodekit_test_support::scratch_dir().join(format!("nodekit-fromai-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.json");
    std::fs::write(&file, params.to_string()).unwrap();
    let from_file = stdout_json(&nodekit(&[
        "from-ai",
        "--params",
        &format!("@{}", file.display()),
    ]));
    assert_eq!(from_file["required"], json!(["s"]));
    assert_eq!(from_file["properties"]["n"]["default"], 3);
    let inline = stdout_json(&nodekit(&["from-ai", "--params", &params.to_string()]));
    assert_eq!(inline, from_file);
    let out = nodekit_with_stdin(&["from-ai", "--params", "-"], &params.to_string());
    assert_eq!(stdout_json(&out), from_file);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_a_clear_error_never_a_panic() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["from-ai", "--params", "{"],
            "nodekit: --params is not valid JSON: EOF while parsing an object at line 1 column 1\n",
        ),
        (
            &["from-ai", "--params", "@/nonexistent/p.json"],
            "nodekit: cannot read --params file /nonexistent/p.json",
        ),
        (
            &[
                "from-ai",
                "--params",
                r#"{"a": "={{ $fromAI('bad key') }}"}"#,
            ],
            "nodekit: Parameter key `bad key` is invalid",
        ),
        (
            &[
                "from-ai",
                "--params",
                r#"{"a": "={{ $fromAI('k', 'd', 'strng') }}"}"#,
            ],
            "nodekit: Failed to parse $fromAI arguments: 'k', 'd', 'strng': Error: Invalid type: strng",
        ),
        (
            &["from-ai", "--params", r#"{"a": "={{ $fromAI('k' }}"}"#],
            "nodekit: Unbalanced parentheses",
        ),
        (
            &["tool-schema", "memoryBufferWindow", "--params", "[1]"],
            "nodekit: node `Simple Memory`: parameters must be a JSON object",
        ),
        (
            &["tool-schema", "memoryBufferWindow", "--name", ""],
            "nodekit: --name is empty",
        ),
    ];
    for (args, expected) in cases {
        let out = nodekit(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with(expected),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"));
    }
    // Nesting deeper than the JSON parser allows.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let out = nodekit_with_stdin(&["from-ai", "--params", "-"], &deep);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("recursion limit exceeded"),
        "{}",
        stderr(&out)
    );
    // A large, wide document is fine.
    let wide = json!(
        (0..20_000)
            .map(|i| (
                format!("k{i}"),
                json!(format!("={{{{ $fromAI('k{i}') }}}}"))
            ))
            .collect::<serde_json::Map<_, _>>()
    );
    let out = nodekit_with_stdin(&["from-ai", "--params", "-"], &wide.to_string());
    assert_eq!(
        stdout_json(&out)["required"].as_array().unwrap().len(),
        20_000
    );
}

#[test]
fn usage_errors_exit_2_and_every_subcommand_has_help() {
    let out = nodekit(&["describe"]);
    assert_eq!(out.status.code(), Some(2));
    for sub in ["catalog", "describe", "tool-schema", "from-ai"] {
        let out = nodekit(&[sub, "--help"]);
        assert!(out.status.success(), "{sub}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage: nodekit"),
            "{sub}"
        );
    }
}

/// Runs `nodekit args`, reads the first bytes of its standard output, then
/// closes the pipe as `head -c 10` does.
fn read_head_then_close(args: &[&str]) -> (Vec<u8>, Output) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the nodekit binary runs");
    let mut head = vec![0; 10];
    // The pipe's reading end closes when this statement ends.
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    (head, child.wait_with_output().unwrap())
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    // The catalog (about 90 KB) is more than a pipe holds (64 KiB): the
    // program is still writing when the reader leaves.
    let (head, out) = read_head_then_close(&["catalog"]);
    assert!(head.starts_with(b"[\n  {"), "{head:?}");
    assert_eq!(out.status.code(), Some(141), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Broken pipe"), "{}", stderr(&out));

    // The bridge's answers too, when n8n stops reading them.
    let mut child = Command::new(env!("CARGO_BIN_EXE_nodekit"))
        .arg("bridge")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(b"{\"id\": 1, \"op\": \"hello\"}\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn errors_quote_long_input_cut_short() {
    let long = "a".repeat(100_000);
    let dir =
        nodekit_test_support::scratch_dir().join(format!("nodekit-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let workflow = dir.join("wf.json");
    std::fs::write(
        &workflow,
        json!({"nodes": [{"name": long, "type": long, "parameters": {}}]}).to_string(),
    )
    .unwrap();
    let workflow = workflow.to_str().unwrap();
    let missing = format!("/nonexistent/{long}");
    let filter = json!({ &long: {"nope": 1} }).to_string();
    let db = format!("sqlite:{}", dir.join("v.db").display());
    let credentials = json!({"openAiApi": {"apiKey": "sk-local", "url": "http://127.0.0.1:9/v1"}});
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (&["describe", &long], None, "nodekit: unknown node `aaa"),
        (
            &["describe", &format!("--{long}")],
            None,
            "error: unexpected argument '--aaa",
        ),
        (
            &["run", workflow, "--message", "hi"],
            None,
            "nodekit: workflow: node `aaa",
        ),
        (
            &["run", &missing, "--message", "hi"],
            None,
            "nodekit: cannot read workflow /nonexistent/aaa",
        ),
        (
            &["catalog", "--out", &missing],
            None,
            "nodekit: cannot write /nonexistent/aaa",
        ),
        (
            &["from-ai", "--params", &format!("@{missing}")],
            None,
            "nodekit: cannot read --params file /nonexistent/aaa",
        ),
        (
            &[
                "tool-schema",
                "memoryBufferWindow",
                "--name",
                &long,
                "--params",
                "[1]",
            ],
            None,
            "nodekit: node `aaa",
        ),
        (
            &["index", workflow, "--store", &long],
            None,
            "nodekit: unknown store \"aaa",
        ),
        (
            &["query", "x", "--store", &db, "--filter", &filter],
            Some(&credentials.to_string()),
            "nodekit: vector store: unknown filter operator `nope` on `aaa",
        ),
        (
            &["run", workflow, "--message", "hi"],
            Some(&json!(long).to_string()),
            "nodekit: NODEKIT_CREDENTIALS is not a JSON object of credentials by type: invalid type: string \"aaa",
        ),
    ];
    for (args, credentials, expected) in cases {
        let mut command = Command::new(env!("CARGO_BIN_EXE_nodekit"));
        command.args(*args).env_remove("NODEKIT_CREDENTIALS_FILE");
        match credentials {
            Some(c) => command.env("NODEKIT_CREDENTIALS", c),
            None => command.env_remove("NODEKIT_CREDENTIALS"),
        };
        let out = command.output().unwrap();
        let what = &args[0];
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{what}: {:?}",
            out.status
        );
        let text = stderr(&out);
        assert!(
            text.starts_with(expected),
            "{what}: {}",
            &text[..text.len().min(300)]
        );
        assert!(text.len() < 1024, "{what}: {} bytes on stderr", text.len());
        assert!(text.contains('…'), "{what}: {text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
