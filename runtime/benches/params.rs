//! Parameter extraction, `$fromAI` substitution and argument validation for
//! a 20-parameter tool node: the work done for every tool call.
//!
//! `cargo bench -p nodekit --bench params`

use nodekit::prelude::*;
use nodekit::tool::NodeTool;
use serde::{Deserialize, Serialize};
use serde_json::json;

fn main() {
    divan::main();
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    Asc,
    Desc,
}

#[derive(Debug, NodeParams)]
#[allow(dead_code)]
struct Extra {
    /// Timeout.
    #[param(default = 30, min = 1)]
    timeout: u32,
    /// Retries.
    #[param(default = 2)]
    retries: u8,
}

/// A tool with twenty parameters, five of them filled by the LLM.
#[ai_node(name = "twenty", output = tool)]
#[derive(Debug)]
#[allow(dead_code)]
struct Twenty {
    /// Query.
    #[from_ai]
    query: String,
    /// Limit.
    #[from_ai(default = 10)]
    #[param(min = 1, max = 1000)]
    limit: u32,
    /// Exact.
    #[from_ai]
    exact: bool,
    /// Filter.
    #[from_ai]
    filter: serde_json::Value,
    /// Note.
    #[from_ai]
    note: Option<String>,
    /// Table.
    #[param(default = "users")]
    table: String,
    /// Schema.
    #[param(default = "public")]
    schema: String,
    /// Order.
    #[param(default = Order::Asc)]
    order: Order,
    /// Column.
    #[param(default = "id")]
    order_by: String,
    /// Offset.
    #[param(default = 0)]
    offset: u64,
    /// Ratio.
    #[param(default = 0.5, min = 0, max = 1)]
    ratio: f64,
    /// Flag a.
    #[param(default = true)]
    a: bool,
    /// Flag b.
    #[param(default = false)]
    b: bool,
    /// Label.
    #[param(options = ["x", "y", "z"], default = "x")]
    label: String,
    /// Tags.
    tags: Vec<String>,
    /// Host.
    #[param(default = "localhost")]
    host: String,
    /// Port.
    #[param(default = 5432, max = 65535)]
    port: u32,
    /// User.
    #[param(default = "reader")]
    user: String,
    /// Maybe.
    maybe: Option<i64>,
    /// Extra.
    #[param(collection)]
    extra: Extra,
}

fn prepared() -> NodeTool {
    NodeTool::new(
        Twenty::description(),
        "Twenty",
        &json!({"tags": ["a", "b"], "extra": {"timeout": 5}}),
    )
    .unwrap()
}

fn args() -> serde_json::Value {
    json!({"query": "find me", "limit": 25, "exact": true, "filter": {"status": "active"}, "note": "n"})
}

/// Validate + substitute + typed construction: one tool call.
#[divan::bench]
fn tool_call(bencher: divan::Bencher) {
    let tool = prepared();
    let args = args();
    bencher.bench(|| tool.instantiate::<Twenty>(divan::black_box(&args)).unwrap());
}

/// The three steps separately.
#[divan::bench]
fn validate_and_substitute(bencher: divan::Bencher) {
    let tool = prepared();
    let args = args();
    bencher.bench(|| tool.parameters_for(divan::black_box(&args)).unwrap());
}

#[divan::bench]
fn typed_extraction(bencher: divan::Bencher) {
    let tool = prepared();
    let params = tool.parameters_for(&args()).unwrap();
    bencher.bench(|| Twenty::from_params(divan::black_box(&params), "Twenty").unwrap());
}

/// Preparing the tool once per workflow run: defaults, `$fromAI` scan, schema compile.
#[divan::bench]
fn prepare_tool() -> NodeTool {
    prepared()
}

/// Argument validation alone (compiled schema).
#[divan::bench]
fn validate_only(bencher: divan::Bencher) {
    let tool = prepared();
    let validator =
        nodekit::from_ai::ArgumentsValidator::new(&tool.definition().parameters).unwrap();
    let args = args();
    bencher.bench(|| validator.validate(divan::black_box(&args)).unwrap());
}

/// The same check by jsonschema (a dev-dependency), on the same schema and
/// arguments, for comparison in the same run.
#[divan::bench]
fn validate_only_jsonschema(bencher: divan::Bencher) {
    let tool = prepared();
    let validator = jsonschema::draft7::options()
        .build(&tool.definition().parameters)
        .unwrap();
    let args = args();
    bencher.bench(|| validator.validate(divan::black_box(&args)).unwrap());
}
