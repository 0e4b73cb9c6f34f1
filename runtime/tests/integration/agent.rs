//! The agent loop, custom models and the logging factories. Models here are
//! custom models (the seed's `type: 'custom'`) scripted per call; the HTTP
//! client itself is covered in `openai.rs`.

use nodekit_test_support::openai as support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use nodekit::agent::{Agent, AgentOptions};
use nodekit::event::AgentEvent;
use nodekit::history::{ChatHistory, InProcessHistory};
use nodekit::memory::{ConversationMemory, Memory, MemoryOptions};
use nodekit::message::{Message, Role, ToolCall, Usage};
use nodekit::model::custom::CustomChatModel;
use nodekit::model::{CallOptions, ChatModel, StreamChunk};
use nodekit::node::{SupplyContext, SupplyObject};
use nodekit::run_log::{LogScope, Logged, RunLog};
use nodekit::tool::{FnTool, Tool, ToolDefinition};
use serde_json::{Value, json};

/// A custom model that answers from a script and records what it was sent.
fn scripted(answers: Vec<Message>) -> (CustomChatModel, Arc<Mutex<Vec<Vec<Message>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let model = CustomChatModel::new("scripted", move |messages, _options| {
        seen2.lock().unwrap().push(messages);
        let next = answers.lock().unwrap().next();
        async move { Ok(next.unwrap_or_else(|| Message::ai("(script ended)"))) }
    });
    (model, seen)
}

fn calls(calls: &[(&str, &str, Value)]) -> Message {
    let mut m = Message::ai("");
    m.tool_calls = calls
        .iter()
        .map(|(id, name, args)| ToolCall {
            id: (*id).into(),
            name: (*name).into(),
            args: args.clone(),
        })
        .collect();
    m.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 2,
        total_tokens: 12,
        ..Default::default()
    });
    m
}

fn tool(
    name: &str,
    f: impl Fn(Value) -> nodekit::Result<Value> + Send + Sync + 'static,
) -> Arc<dyn Tool> {
    let f = Arc::new(f);
    Arc::new(FnTool::new(
        ToolDefinition {
            name: name.into(),
            description: format!("the {name} tool"),
            parameters: json!({"type": "object"}),
        },
        move |args| {
            let f = f.clone();
            async move { f(args) }
        },
    ))
}

fn agent(model: CustomChatModel, tools: Vec<Arc<dyn Tool>>) -> Agent {
    Agent::new(Arc::new(model), tools, AgentOptions::default()).unwrap()
}

#[tokio::test]
async fn tool_results_errors_and_unknown_tools_go_back_to_the_model() {
    let (model, seen) = scripted(vec![
        calls(&[
            ("1", "add", json!({"a": 2, "b": 3})),
            ("2", "fail", json!({})),
            ("3", "nope", json!({})),
            ("4", "add", json!({"__raw": "{a: 2"})),
        ]),
        Message::ai("done"),
    ]);
    let add = tool("add", |a| {
        Ok(json!(a["a"].as_i64().unwrap() + a["b"].as_i64().unwrap()))
    });
    let fail = tool("fail", |_| {
        Err(nodekit::Error::NodeFailed {
            node: "fail".into(),
            message: "disk full".into(),
        })
    });
    let out = agent(model, vec![add, fail]).run("go", None).await.unwrap();
    assert_eq!(out.output, json!("done"));
    assert_eq!(out.iterations, 2);
    assert_eq!(out.usage.total_tokens, 12);
    let second = &seen.lock().unwrap()[1];
    let tool_messages: Vec<(&str, String)> = second
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.tool_call_id.as_deref().unwrap(), m.text()))
        .collect();
    assert_eq!(
        tool_messages,
        [
            ("1", "5".to_owned()),
            ("2", "Error: node `fail`: disk full".to_owned()),
            ("3", "Error: there is no tool named `nope`. Available tools: add, fail".to_owned()),
            ("4", "Error: the arguments are not valid JSON: {a: 2. Send the arguments as one JSON object.".to_owned()),
        ]
    );
    assert_eq!(out.intermediate_steps.iter().filter(|s| s.error).count(), 3);
}

#[tokio::test]
async fn an_endless_tool_loop_stops_at_max_iterations() {
    let loop_forever = CustomChatModel::new("loop", |_, _| async {
        Ok(calls(&[("x", "add", json!({"a": 1, "b": 1}))]))
    });
    let add = tool("add", |_| Ok(json!(2)));
    let options = AgentOptions {
        max_iterations: 4,
        ..AgentOptions::default()
    };
    let e = Agent::new(Arc::new(loop_forever), vec![add], options)
        .unwrap()
        .run("go", None)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "agent: Agent stopped due to max iterations (4); the model kept calling tools"
    );
    assert!(
        matches!(
            e,
            nodekit::Error::Agent(nodekit::error::AgentError::MaxIterations { limit: 4 })
        ),
        "{e:?}"
    );
}

#[tokio::test]
async fn workflow_errors_have_kinds_and_keep_the_catalog_error() {
    use nodekit::error::WorkflowError;
    use nodekit::workflow::{RunOptions, Workflow};
    let node = |name: &str, node_type: &str| json!({"name": name, "type": node_type});
    let twice = json!({"nodes": [node("a", "x"), node("a", "y")]});
    let e = Workflow::from_json(&twice.to_string()).unwrap_err();
    assert_eq!(e.to_string(), "workflow: two nodes are both named `a`");
    assert!(
        matches!(&e, nodekit::Error::Workflow(WorkflowError::DuplicateNode { name }) if name == "a"),
        "{e:?}"
    );

    let unknown = json!({"nodes": [node("a", "no.suchNode")]});
    let e = Workflow::from_json(&unknown.to_string())
        .unwrap()
        .run(nodekit::Catalog::global(), RunOptions::default())
        .await
        .unwrap_err();
    let nodekit::Error::Workflow(WorkflowError::NodeType { node, source }) = &e else {
        panic!("not a node-type error: {e:?}");
    };
    assert_eq!(node, "a");
    let cause = std::error::Error::source(&e).expect("the catalog's error is the source");
    assert_eq!(cause.to_string(), source.to_string());
    assert!(e.to_string().ends_with(&source.to_string()), "{e}");
}

#[tokio::test]
async fn an_answer_with_neither_text_nor_tools_is_an_empty_output_with_a_warning() {
    let (model, _) = scripted(vec![Message::ai("")]);
    let out = agent(model, vec![]).run("go", None).await.unwrap();
    assert_eq!(out.output, json!(""));
    assert_eq!(out.warnings, [nodekit::agent::EMPTY_ANSWER]);
    let (model, _) = scripted(vec![Message::ai("hi")]);
    let out = agent(model, vec![]).run("go", None).await.unwrap();
    assert!(out.warnings.is_empty());
}

#[tokio::test]
async fn duplicate_tool_names_are_refused() {
    let (model, _) = scripted(vec![]);
    let e = Agent::new(
        Arc::new(model),
        vec![tool("t", |_| Ok(json!(1))), tool("t", |_| Ok(json!(2)))],
        AgentOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "agent: two tools are both named `t`; rename one of the tool nodes"
    );
}

#[tokio::test]
async fn the_tool_calls_of_one_turn_run_concurrently() {
    let (model, _) = scripted(vec![
        calls(&[
            ("1", "slow", json!({})),
            ("2", "slow", json!({})),
            ("3", "slow", json!({})),
        ]),
        Message::ai("ok"),
    ]);
    let slow: Arc<dyn Tool> = Arc::new(FnTool::new(
        ToolDefinition {
            name: "slow".into(),
            description: "sleeps".into(),
            parameters: json!({"type": "object"}),
        },
        |_| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(json!("slept"))
        },
    ));
    let start = Instant::now();
    agent(model, vec![slow]).run("go", None).await.unwrap();
    // Three 300 ms tools one after another would take 900 ms.
    assert!(
        start.elapsed() < Duration::from_millis(800),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn memory_is_loaded_without_orphaned_tool_messages_and_saved() {
    let history = Arc::new(InProcessHistory::session("agent-test-orphans"));
    history
        .add_messages(&[
            Message::tool("stale result", "gone"),
            Message::human("earlier"),
            Message::ai("reply"),
        ])
        .await
        .unwrap();
    let memory: Arc<dyn Memory> = Arc::new(ConversationMemory::new(MemoryOptions::buffer_window(
        history.clone(),
        0,
    )));
    let (model, seen) = scripted(vec![Message::ai("now")]);
    let out = agent(model, vec![])
        .with_memory(memory)
        .run("question", None)
        .await
        .unwrap();
    assert_eq!(out.output, json!("now"));
    let sent: Vec<(Role, String)> = seen.lock().unwrap()[0]
        .iter()
        .map(|m| (m.role, m.text()))
        .collect();
    assert_eq!(
        sent,
        [
            (Role::System, "You are a helpful assistant".into()),
            (Role::Human, "earlier".into()),
            (Role::Ai, "reply".into()),
            (Role::Human, "question".into())
        ]
    );
    let stored: Vec<String> = history
        .messages()
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(
        stored,
        ["stale result", "earlier", "reply", "question", "now"]
    );
}

#[tokio::test]
async fn structured_output_is_validated_and_corrected() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let (model, seen) = scripted(vec![
        Message::ai("{\"n\": \"three\"}"),
        Message::ai("```json\n{\"n\": 3}\n```"),
    ]);
    let options = AgentOptions {
        output_schema: Some(schema),
        ..AgentOptions::default()
    };
    let out = Agent::new(Arc::new(model), vec![], options)
        .unwrap()
        .run("count", None)
        .await
        .unwrap();
    assert_eq!(out.output, json!({"n": 3}));
    let retry = seen.lock().unwrap()[1].last().unwrap().text();
    assert!(
        retry.starts_with("Your answer must be only JSON that follows this schema"),
        "{retry}"
    );
    assert!(
        retry.contains("/n: \"three\" is not of type \"integer\""),
        "{retry}"
    );
}

#[tokio::test]
async fn events_stream_text_and_tool_calls() {
    let (model, _) = scripted(vec![
        calls(&[("1", "add", json!({"a": 1, "b": 2}))]),
        Message::ai("three"),
    ]);
    let add = tool("add", |a| {
        Ok(json!(a["a"].as_i64().unwrap() + a["b"].as_i64().unwrap()))
    });
    let (tx, mut rx) = nodekit::event::EventSender::channel();
    agent(model, vec![add]).run("go", Some(&tx)).await.unwrap();
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    assert_eq!(
        events,
        [
            AgentEvent::ToolCall {
                id: "1".into(),
                name: "add".into(),
                args: json!({"a": 1, "b": 2})
            },
            AgentEvent::ToolResult {
                id: "1".into(),
                name: "add".into(),
                output: "3".into(),
                error: false
            },
            AgentEvent::TextDelta {
                text: "three".into()
            },
        ]
    );
}

#[tokio::test]
async fn custom_models_stream_through_invoke_when_they_have_no_stream() {
    let (model, _) = scripted(vec![calls(&[("1", "t", json!({"k": 1}))])]);
    let mut s = model
        .stream(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    let mut chunks = Vec::new();
    while let Some(c) = s.next().await {
        chunks.push(c.unwrap());
    }
    assert!(matches!(&chunks[0], StreamChunk::ToolCallDelta { name: Some(n), .. } if n == "t"));
    assert!(matches!(chunks.last(), Some(StreamChunk::Finish { .. })));
    let streaming = CustomChatModel::new("s", |_, _| async { Ok(Message::ai("unused")) })
        .with_stream(|_, _| async {
            let chunks = vec![
                Ok(StreamChunk::TextDelta { text: "a".into() }),
                Ok(StreamChunk::TextDelta { text: "b".into() }),
            ];
            Ok(Box::pin(futures::stream::iter(chunks)) as nodekit::model::ChunkStream)
        });
    let s = streaming
        .stream(&[], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(s.count().await, 2);
}

#[tokio::test]
async fn bound_tools_reach_the_model() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let model: Arc<dyn ChatModel> =
        Arc::new(CustomChatModel::new("m", move |_, options: CallOptions| {
            seen2.lock().unwrap().push(
                options
                    .tools
                    .iter()
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>(),
            );
            async { Ok(Message::ai("ok")) }
        }));
    let bound = model.bind_tools(vec![ToolDefinition {
        name: "search".into(),
        description: String::new(),
        parameters: json!({}),
    }]);
    bound
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [vec!["search".to_owned()]]);
}

#[tokio::test]
async fn factories_log_every_call() {
    let log = RunLog::new();
    let ctx = SupplyContext::new("My Model", Default::default(), json!({}), log.clone());
    let (model, _) = scripted(vec![
        calls(&[("1", "t", json!({}))]),
        Message::ai("streamed"),
    ]);
    let model = ctx.create_chat_model(model).unwrap();
    model
        .invoke(&[Message::human("hi")], &CallOptions::default())
        .await
        .unwrap();
    let mut s = model
        .stream(&[Message::human("again")], &CallOptions::default())
        .await
        .unwrap();
    while s.next().await.is_some() {}
    let failing = ctx
        .create_chat_model(CustomChatModel::new("bad", |_, _| async {
            Err(nodekit::Error::NodeFailed {
                node: "bad".into(),
                message: "boom".into(),
            })
        }))
        .unwrap();
    assert!(failing.invoke(&[], &CallOptions::default()).await.is_err());
    let tool_ctx = SupplyContext::new("My Tool", Default::default(), json!({}), log.clone());
    let t = tool_ctx.logged(tool("t", |_| Ok(json!("fine"))));
    t.call(json!({"q": 1})).await.unwrap();

    let entries = log.entries();
    let summary: Vec<(&str, &str, bool)> = entries
        .iter()
        .map(|e| (e.node.as_str(), e.action.as_str(), e.error.is_some()))
        .collect();
    assert_eq!(
        summary,
        [
            ("My Model", "invoke", false),
            ("My Model", "stream", false),
            ("My Model", "invoke", true),
            ("My Tool", "tool", false)
        ]
    );
    assert_eq!(entries[0].usage.map(|u| u.total_tokens), Some(12));
    assert_eq!(entries[0].input["messages"][0]["content"], "hi");
    assert_eq!(entries[1].output["message"]["content"], "streamed");
    assert_eq!(entries[2].error.as_deref(), Some("node `bad`: boom"));
    assert_eq!(entries[3].input, json!({"q": 1}));
    assert_eq!(entries[3].output, json!({"response": "fine"}));
    let run_data = log.to_run_data();
    assert_eq!(run_data["My Model"].as_array().unwrap().len(), 3);
    assert_eq!(
        run_data["My Model"][2]["error"]["message"],
        "node `bad`: boom"
    );
}

mod embeddings {
    use super::support::{Reply, Server};
    use base64::Engine;
    use nodekit::embed::{Embedder, EmbeddingsConfig, Encoding, OpenAiEmbedder};
    use serde_json::json;

    fn config(server: &Server) -> EmbeddingsConfig {
        EmbeddingsConfig {
            base_url: server.base_url.clone(),
            ..EmbeddingsConfig::new("sk-e", "embed-test")
        }
    }

    #[tokio::test]
    async fn batches_dimensions_and_order_by_index() {
        let server = Server::start(vec![
            Reply::json(200, &json!({"data": [{"index": 1, "embedding": [1.0, 1.5]}, {"index": 0, "embedding": [0.0, 0.5]}]})),
            Reply::json(200, &json!({"data": [{"index": 0, "embedding": [2.0, 2.5]}]})),
        ])
        .await;
        let e = OpenAiEmbedder::new(EmbeddingsConfig {
            batch_size: 2,
            dimensions: Some(2),
            ..config(&server)
        })
        .unwrap();
        let vectors = e
            .embed(&["a".into(), "b".into(), "c".into()])
            .await
            .unwrap();
        assert_eq!(vectors, [vec![0.0, 0.5], vec![1.0, 1.5], vec![2.0, 2.5]]);
        let seen = server.seen();
        assert_eq!(seen[0].path, "/v1/embeddings");
        assert_eq!(
            seen[0].body,
            json!({"model": "embed-test", "input": ["a", "b"], "encoding_format": "float", "dimensions": 2})
        );
        assert_eq!(seen[1].body["input"], json!(["c"]));
    }

    #[tokio::test]
    async fn base64_vectors_are_decoded() {
        let bytes: Vec<u8> = [0.25f32, -1.0, 3.5]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        let server = Server::start(vec![Reply::json(
            200,
            &json!({"data": [{"index": 0, "embedding": b64}]}),
        )])
        .await;
        let e = OpenAiEmbedder::new(EmbeddingsConfig {
            encoding: Encoding::Base64,
            ..config(&server)
        })
        .unwrap();
        assert_eq!(
            e.embed(&["x".into()]).await.unwrap(),
            [vec![0.25, -1.0, 3.5]]
        );
        assert_eq!(server.seen()[0].body["encoding_format"], "base64");
    }

    #[tokio::test]
    async fn wrong_answers_are_clear_errors() {
        for (body, message) in [
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}]}),
                "asked for 2 embeddings, got 1",
            ),
            (
                json!({"data": [{"index": 0, "embedding": "!!"}, {"index": 1, "embedding": [1.0]}]}),
                "embedding 0 is not valid base64 of f32s",
            ),
            (
                json!({"data": [{"index": 5, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}]}),
                "embedding index 5 is out of range",
            ),
            (
                json!({"object": "list"}),
                "the embeddings answer has no `data` list",
            ),
        ] {
            let server = Server::start(vec![Reply::json(200, &body)]).await;
            let e = OpenAiEmbedder::new(config(&server)).unwrap();
            let err = e
                .embed(&["a".into(), "b".into()])
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains(message), "{err}");
        }
    }
}

#[tokio::test]
async fn review_fixes_logging_has_no_gaps() {
    use nodekit::node::Supply;
    let log = RunLog::new();
    // A supply made without the factories is logged anyway, and one made
    // with them is not logged twice.
    fn raw(
        _: Value,
        _: SupplyContext,
    ) -> nodekit::model::BoxFuture<'static, nodekit::Result<Supply>> {
        Box::pin(async {
            Ok(Supply::ChatModel(Arc::new(
                scripted(vec![Message::ai("a")]).0,
            )))
        })
    }
    fn made(
        _: Value,
        ctx: SupplyContext,
    ) -> nodekit::model::BoxFuture<'static, nodekit::Result<Supply>> {
        let (model, _) = scripted(vec![Message::ai("b")]);
        Box::pin(async move { Ok(ctx.create_chat_model(model)?.into()) })
    }
    for make in [raw as nodekit::node::SupplyFn, made] {
        // A context is made for each supply.
        let ctx = SupplyContext::new("Raw", Default::default(), json!({}), log.clone());
        let Supply::ChatModel(model) = ctx.clone().supply(make, Value::Null).await.unwrap() else {
            unreachable!()
        };
        model
            .invoke(&[Message::human("hi")], &CallOptions::default())
            .await
            .unwrap();
    }
    assert_eq!(log.entries().len(), 2);
    // Once a node has supplied, its context keeps nothing it logs later
    // (a tool node's calls): an object is held by its caller alone.
    let ctx = SupplyContext::new("Raw", Default::default(), json!({}), log.clone());
    let kept = ctx.logged(tool("t", |_| Ok(json!("fine"))));
    assert_eq!(
        Arc::strong_count(&kept),
        2,
        "remembered while the node supplies"
    );
    ctx.clone().supply(raw, Value::Null).await.unwrap();
    let later = ctx.logged(tool("t", |_| Ok(json!("fine"))));
    assert_eq!(Arc::strong_count(&later), 1);
    // A stream dropped before its end is logged as such.
    let streaming = CustomChatModel::new("s", |_, _| async { Ok(Message::ai("unused")) })
        .with_stream(|_, _| async {
            let chunks = vec![
                Ok(StreamChunk::TextDelta { text: "a".into() }),
                Ok(StreamChunk::TextDelta { text: "b".into() }),
            ];
            Ok(Box::pin(futures::stream::iter(chunks)) as nodekit::model::ChunkStream)
        });
    let model = ctx.create_chat_model(streaming).unwrap();
    let mut s = model.stream(&[], &CallOptions::default()).await.unwrap();
    s.next().await.unwrap().unwrap();
    drop(s);
    let last = log.entries().pop().unwrap();
    assert_eq!(
        (last.action.as_str(), last.error.as_deref()),
        ("stream", Some("the stream was dropped before its end"))
    );
    assert!(!format!("{ctx:?}").contains("apiKey"));
}

/// A kind of sub-node nodekit does not name, as a crate of its own adds one.
trait Reranker: Send + Sync + std::fmt::Debug {
    fn rerank(
        &self,
        texts: Vec<String>,
    ) -> nodekit::model::BoxFuture<'_, nodekit::Result<Vec<String>>>;
}

impl Reranker for Logged<dyn Reranker> {
    fn rerank(
        &self,
        texts: Vec<String>,
    ) -> nodekit::model::BoxFuture<'_, nodekit::Result<Vec<String>>> {
        let input = json!({"texts": texts.len()});
        self.scope().call(
            "rerank",
            move || input,
            self.inner().rerank(texts),
            |v| json!({"response": v}),
        )
    }
}

/// What the reranker's node supplies, and its consumer downcasts to.
#[derive(Debug)]
struct RerankerHandle(Arc<dyn Reranker>);

impl SupplyObject for RerankerHandle {
    fn logged(self: Arc<Self>, scope: &LogScope) -> Arc<dyn SupplyObject> {
        Arc::new(RerankerHandle(Arc::new(Logged::new(
            self.0.clone(),
            scope.clone(),
        ))))
    }

    fn what(&self) -> &'static str {
        "a reranker"
    }
}

#[derive(Debug)]
struct Reverse;

impl Reranker for Reverse {
    fn rerank(
        &self,
        mut texts: Vec<String>,
    ) -> nodekit::model::BoxFuture<'_, nodekit::Result<Vec<String>>> {
        texts.reverse();
        Box::pin(async move { Ok(texts) })
    }
}

#[tokio::test]
async fn an_outside_kind_of_sub_node_is_logged_as_it_leaves_its_node() {
    use nodekit::description::ConnectionType;
    use nodekit::node::Supply;
    fn make(
        _: Value,
        _: SupplyContext,
    ) -> nodekit::model::BoxFuture<'static, nodekit::Result<Supply>> {
        Box::pin(async {
            Ok(Supply::Other {
                connection: ConnectionType::Reranker,
                object: Arc::new(RerankerHandle(Arc::new(Reverse))),
            })
        })
    }
    let log = RunLog::new();
    let ctx = SupplyContext::new("Rerank", Default::default(), json!({}), log.clone());
    let supply = ctx.supply(make, Value::Null).await.unwrap();
    assert_eq!(
        (supply.connection(), supply.what()),
        (ConnectionType::Reranker, "a reranker")
    );
    let Supply::Other { object, .. } = supply else {
        unreachable!()
    };
    let object: Arc<dyn std::any::Any + Send + Sync> = object;
    let reranker = object.downcast::<RerankerHandle>().unwrap();
    let ranked = reranker
        .0
        .rerank(vec!["a".into(), "b".into()])
        .await
        .unwrap();
    assert_eq!(ranked, ["b", "a"]);
    let entries = log.entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].node.as_str(), entries[0].action.as_str()),
        ("Rerank", "rerank")
    );
    assert_eq!(entries[0].output, json!({"response": ["b", "a"]}));
}

#[tokio::test]
async fn review_fixes_tool_calls_are_bounded_and_cancellable() {
    let many: Vec<(String, &str, Value)> =
        (0..70).map(|i| (i.to_string(), "t", json!({}))).collect();
    let refs: Vec<(&str, &str, Value)> = many
        .iter()
        .map(|(i, n, a)| (i.as_str(), *n, a.clone()))
        .collect();
    let (model, seen) = scripted(vec![calls(&refs), Message::ai("done")]);
    agent(model, vec![tool("t", |_| Ok(json!("ok")))])
        .run("go", None)
        .await
        .unwrap();
    let refused = seen.lock().unwrap()[1]
        .iter()
        .filter(|m| m.role == Role::Tool && m.text().starts_with("Error: at most 64 tool calls"))
        .count();
    assert_eq!(refused, 6);

    let token = nodekit::model::CancelToken::new();
    let (model, _) = scripted(vec![calls(&[("1", "slow", json!({}))])]);
    let slow: Arc<dyn Tool> = Arc::new(FnTool::new(
        ToolDefinition {
            name: "slow".into(),
            description: String::new(),
            parameters: json!({}),
        },
        |_| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!("late"))
        },
    ));
    let options = AgentOptions {
        cancel: Some(token.clone()),
        ..AgentOptions::default()
    };
    let agent = Agent::new(Arc::new(model), vec![slow], options).unwrap();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let start = Instant::now();
    let e = agent.run("go", None).await.unwrap_err();
    assert_eq!(e.to_string(), "agent: the run was cancelled");
    assert!(matches!(
        e,
        nodekit::Error::Agent(nodekit::error::AgentError::Cancelled)
    ));
    assert!(start.elapsed() < Duration::from_secs(5));
}
