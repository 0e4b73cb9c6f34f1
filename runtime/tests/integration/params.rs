//! Typed extraction of node parameters: defaults, errors, expressions.

use nodekit::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Mode {
    Simple,
    Advanced,
}

#[derive(Debug, NodeParams)]
struct Options {
    /// Temperature.
    #[param(default = 0.7, min = 0, max = 2)]
    temperature: f64,
}

/// A node for tests.
#[ai_node(name = "testNode", version = [1, 2])]
#[derive(Debug)]
struct TestNode {
    /// Required text.
    query: String,
    /// Bounded number.
    #[param(default = 10, min = 1, max = 100)]
    limit: u32,
    /// Mode.
    #[param(default = Mode::Simple)]
    mode: Mode,
    /// Only in advanced mode.
    #[param(default = "x", display_options(show(mode = [Mode::Advanced])))]
    advanced_only: String,
    /// Only in version 2.
    #[param(default = 1, display_options(show("@version" = [2])))]
    v2_only: u32,
    /// JSON body.
    #[param(default = "{}")]
    body: serde_json::Value,
    /// Optional.
    note: Option<String>,
    /// Session.
    #[param(default = "={{ $json.sessionId }}")]
    session: String,
    /// Plain template default.
    #[param(default = "=hello")]
    greeting: String,
    /// Nested.
    #[param(collection)]
    options: Options,
}

/// A node with a fixed collection, for tests.
#[ai_node(name = "testFixedNode")]
#[derive(Debug)]
struct FixedNode {
    /// A fixed collection.
    #[param(fixed_collection)]
    extra: Vec<Options>,
}

fn build(v: serde_json::Value) -> nodekit::Result<TestNode> {
    TestNode::from_params(&v, "My Node")
}

#[test]
fn defaults_apply_and_values_are_typed() {
    let n = build(json!({"query": "q", "session": "s", "body": "{\"a\": [1, 2]}", "options": {"temperature": 1}})).unwrap();
    assert_eq!(n.limit, 10);
    assert_eq!(n.mode, Mode::Simple);
    assert_eq!(n.body, json!({"a": [1, 2]}));
    assert_eq!(n.note, None);
    assert_eq!(n.greeting, "hello");
    assert_eq!(n.options.temperature, 1.0);
    assert_eq!(
        (
            n.query.as_str(),
            n.session.as_str(),
            n.advanced_only.as_str(),
            n.v2_only
        ),
        ("q", "s", "x", 1)
    );
}

#[test]
fn a_json_body_may_be_a_value_too() {
    let n = build(json!({"query": "q", "session": "s", "body": {"k": true}})).unwrap();
    assert_eq!(n.body, json!({"k": true}));
}

#[test]
fn a_resource_locator_gives_its_value() {
    // How n8n stores a model picked from a list.
    let picked = json!({"__rl": true, "mode": "list", "value": "claude-sonnet-4-5", "cachedResultName": "Claude"});
    let n =
        build(json!({"query": picked, "session": {"__rl": true, "mode": "id", "value": "=s1"}}))
            .unwrap();
    assert_eq!(
        (n.query.as_str(), n.session.as_str()),
        ("claude-sonnet-4-5", "s1")
    );
    // A JSON parameter that happens to be an object is left alone.
    let n =
        build(json!({"query": "q", "session": "s", "body": {"__rl": false, "value": 1}})).unwrap();
    assert_eq!(n.body, json!({"__rl": false, "value": 1}));
    let e = build(json!({"query": {"__rl": true, "mode": "list", "value": ""}, "session": "s"}))
        .unwrap_err();
    assert!(e.to_string().contains("`query` is required"), "{e}");
}

#[test]
fn a_fixed_collection_is_a_list_of_entries_or_one_entry() {
    let build = |v| FixedNode::from_params(&v, "My Node");
    let n = build(json!({"extra": {"values": [{"temperature": 1}, {}]}})).unwrap();
    let temperatures: Vec<f64> = n.extra.iter().map(|o| o.temperature).collect();
    assert_eq!(temperatures, [1.0, 0.7]);
    // n8n stores a fixed collection without `multipleValues` as one object.
    let n = build(json!({"extra": {"values": {"temperature": 1.5}}})).unwrap();
    assert_eq!(n.extra.len(), 1);
    assert_eq!(n.extra[0].temperature, 1.5);
    assert!(build(json!({})).unwrap().extra.is_empty());
    let e = build(json!({"extra": {"values": 3}})).unwrap_err();
    assert!(e.to_string().contains("`values` list"), "{e}");
    let e = build(json!({"extra": {"values": {"temperature": 5}}})).unwrap_err();
    assert!(e.to_string().contains("extra.values.temperature"), "{e}");
}

#[test]
fn integral_floats_fit_integers() {
    let n = build(json!({"query": "q", "session": "s", "limit": 20.0})).unwrap();
    assert_eq!(n.limit, 20);
}

#[test]
fn missing_required_names_node_and_parameter() {
    let e = build(json!({"session": "s"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `query` is required but has no value; set it in the node's parameters"
    );
}

#[test]
fn wrong_type_gives_path_expected_and_found() {
    let e = build(json!({"query": "q", "session": "s", "limit": "ten"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `limit` must be an integer (u32, at least 0), but it is a string (\"ten\")"
    );
    let e = build(json!({"query": "q", "session": "s", "options": {"temperature": "hot"}}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `options.temperature` must be a number (f64), but it is a string (\"hot\")"
    );
    let e = build(json!({"query": "q", "session": "s", "mode": "expert"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `mode` must be one of \"simple\", \"advanced\" (Mode), but it is a string (\"expert\")"
    );
    let e = build(json!({"query": "q", "session": "s", "options": 3})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `options` must be an object of parameters, but it is a number (3)"
    );
    let e = build(json!({"query": "q", "session": "s", "body": "{not json"})).unwrap_err();
    assert!(e.to_string().starts_with("node `My Node`: parameter `body` must be JSON text (key must be a string at line 1 column 2)"), "{e}");
}

#[test]
fn out_of_range_is_refused() {
    let e = build(json!({"query": "q", "session": "s", "limit": 0})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `limit` is 0, but it must be from 1 to 100"
    );
    let e =
        build(json!({"query": "q", "session": "s", "options": {"temperature": 2.5}})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `options.temperature` is 2.5, but it must be from 0 to 2"
    );
}

#[test]
fn unresolved_expressions_are_errors() {
    let e = build(json!({"query": "q"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameter `session` holds the expression ={{ $json.sessionId }}, which was not resolved before the node ran"
    );
    let e = build(json!({"query": "={{ $json.q }}", "session": "s"})).unwrap_err();
    assert!(
        matches!(e, nodekit::Error::Param(nodekit::error::ParamError::UnresolvedExpression { ref path, .. }) if path == "query"),
        "{e}"
    );
}

#[test]
fn parameters_must_be_an_object() {
    let e = build(json!([1, 2])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `My Node`: parameters must be a JSON object, but they are an array ([1,2])"
    );
}

#[test]
fn long_values_are_shortened_in_errors() {
    let long = "x".repeat(10_000);
    let e = build(json!({"query": "q", "session": "s", "limit": long})).unwrap_err();
    assert!(e.to_string().len() < 200, "{e}");
}

#[test]
fn with_defaults_follows_display_options_and_version() {
    let props = &TestNode::description().properties;
    let values = json!({"query": "q"});
    let v1 = nodekit::params::with_defaults(props, values.as_object().unwrap(), 1.0);
    assert!(!v1.contains_key("advancedOnly"));
    assert!(!v1.contains_key("v2Only"));
    assert_eq!(v1["limit"], 10);
    let values = json!({"query": "q", "mode": "advanced"});
    let v2 = nodekit::params::with_defaults(props, values.as_object().unwrap(), 2.0);
    assert_eq!(v2["advancedOnly"], "x");
    assert_eq!(v2["v2Only"], 1);
}

#[test]
fn description_is_cached_and_deterministic() {
    let a = serde_json::to_string(TestNode::description()).unwrap();
    let b = serde_json::to_string(TestNode::description()).unwrap();
    assert_eq!(a, b);
    assert!(std::ptr::eq(
        TestNode::description(),
        TestNode::description()
    ));
    let names: Vec<&str> = TestNode::description()
        .properties
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "query",
            "limit",
            "mode",
            "advancedOnly",
            "v2Only",
            "body",
            "note",
            "session",
            "greeting",
            "options"
        ]
    );
}

#[test]
fn description_round_trips_through_json() {
    let d = TestNode::description();
    let text = serde_json::to_string(d).unwrap();
    let back: nodekit::description::NodeDescription = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}
