#!/usr/bin/env python3
"""Macro compile cost: a crate of 50 `#[ai_node]` nodes against the same 50
nodes written by hand with nodekit's public types.

Both crates are generated into a scratch folder (outside the repository),
their dependencies are built once, and then each crate alone is rebuilt
from clean several times; the median difference is what the macros add.

    python3 benches/compile-cost/run.py [--runs 5] [--nodes 50]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MACRO_NODE = '''
/// Node {i}: looks things up.
#[ai_node(name = "node{i}", output = tool)]
pub struct Node{i} {{
    /// What to look for.
    #[from_ai]
    pub query: String,
    /// How many results.
    #[param(default = 10, min = 1, max = 100)]
    pub limit: u32,
    /// Sort order.
    #[param(default = Order::Asc)]
    pub order: Order,
    /// Only in descending order.
    #[param(default = false, display_options(show(order = [Order::Desc])))]
    pub strict: bool,
    /// A note.
    pub note: Option<String>,
    /// Threshold.
    #[param(default = 0.5, min = 0, max = 1)]
    pub threshold: f64,
}}
'''

HAND_NODE = '''
/// Node {i}: looks things up.
pub struct Node{i} {{
    pub query: String,
    pub limit: u32,
    pub order: Order,
    pub strict: bool,
    pub note: Option<String>,
    pub threshold: f64,
}}

impl Params for Node{i} {{
    fn properties() -> Vec<NodeProperty> {{
        vec![
            prop("Query", "query", PropertyType::String, json!("={{{{ $fromAI('query', 'What to look for.', 'string') }}}}"), "What to look for.", None, None, None),
            prop("Limit", "limit", PropertyType::Number, json!(10), "How many results.", Some(TypeOptions {{ min_value: Some(Number(1.0)), max_value: Some(Number(100.0)), ..Default::default() }}), None, None),
            prop("Order", "order", PropertyType::Options, json!("asc"), "Sort order.", None, None, Some(vec![
                PropertyOption::Choice(OptionChoice {{ name: "asc".into(), value: json!("asc"), description: Some("Smallest first.".into()), action: None }}),
                PropertyOption::Choice(OptionChoice {{ name: "desc".into(), value: json!("desc"), description: Some("Largest first.".into()), action: None }}),
            ])),
            prop("Strict", "strict", PropertyType::Boolean, json!(false), "Only in descending order.", None,
                Some(DisplayOptions {{ show: [("order".to_owned(), vec![json!("desc")])].into_iter().collect(), ..Default::default() }}), None),
            prop("Note", "note", PropertyType::String, json!(""), "A note.", None, None, None),
            prop("Threshold", "threshold", PropertyType::Number, json!(0.5), "Threshold.", Some(TypeOptions {{ min_value: Some(Number(0.0)), max_value: Some(Number(1.0)), ..Default::default() }}), None, None),
        ]
    }}

    fn from_params_at(values: &Map<String, Value>, at: &Location<'_>) -> nodekit::Result<Self> {{
        Ok(Node{i} {{
            query: match lookup(values, "query", at)? {{ Some(v) => convert(&v, at, "query", &Checks::NONE)?, None => return Err(missing("query", at)) }},
            limit: match lookup(values, "limit", at)? {{ Some(v) => convert(&v, at, "limit", &Checks {{ min: Some(1.0), max: Some(100.0), ..Checks::NONE }})?, None => 10 }},
            order: match lookup(values, "order", at)? {{ Some(v) => convert(&v, at, "order", &Checks::NONE)?, None => Order::Asc }},
            strict: match lookup(values, "strict", at)? {{ Some(v) => convert(&v, at, "strict", &Checks::NONE)?, None => false }},
            note: match lookup(values, "note", at)? {{ Some(v) if v.is_null() => None, Some(v) => Some(convert(&v, at, "note", &Checks::NONE)?), None => None }},
            threshold: match lookup(values, "threshold", at)? {{ Some(v) => convert(&v, at, "threshold", &Checks {{ min: Some(0.0), max: Some(1.0), ..Checks::NONE }})?, None => 0.5 }},
        }})
    }}
}}

impl Node for Node{i} {{
    const NAME: &'static str = "node{i}";
    fn description() -> &'static NodeDescription {{
        static D: OnceLock<NodeDescription> = OnceLock::new();
        D.get_or_init(|| tool_description("node{i}", "Node {i}", "Node {i}: looks things up.", Self::properties()))
    }}
}}

nodekit::__private::inventory::submit! {{
    nodekit::__private::Registration::new("bench", <Node{i} as Node>::description)
}}
'''

COMMON = '''
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}
'''

HAND_PRELUDE = '''
use std::sync::OnceLock;
use nodekit::description::*;
use nodekit::params::Location;
use nodekit::__private::{Checks, convert, lookup, missing};
use nodekit::{Node, Params};
use serde_json::{Map, Value, json};

#[allow(clippy::too_many_arguments)]
fn prop(display_name: &str, name: &str, kind: PropertyType, default: Value, description: &str,
        type_options: Option<TypeOptions>, display_options: Option<DisplayOptions>, options: Option<Vec<PropertyOption>>) -> NodeProperty {
    NodeProperty { display_name: display_name.into(), name: name.into(), kind, type_options, default, required: false,
        description: Some(description.into()), hint: None, placeholder: None, no_data_expression: false, display_options, options,
        implicit_default: false }
}

fn tool_description(name: &str, display_name: &str, description: &str, properties: Vec<NodeProperty>) -> NodeDescription {
    NodeDescription {
        display_name: display_name.into(), name: name.into(), icon: None, group: vec!["transform".into()],
        version: NodeVersion::One(Number(1.0)), default_version: None, description: description.into(), subtitle: None,
        defaults: NodeDefaults { name: display_name.into() },
        codex: Some(Codex { categories: vec!["AI".into()], subcategories: [("AI".to_owned(), vec!["Tools".to_owned()])].into_iter().collect(), resources: None }),
        inputs: vec![], outputs: vec![ConnectionType::Tool], output_names: vec!["Tool".into()], credentials: vec![],
        usable_as_tool: None, properties,
    }
}
'''


def write_crate(base, name, body):
    os.makedirs(os.path.join(base, name, "src"))
    with open(os.path.join(base, name, "Cargo.toml"), "w") as f:
        f.write(f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"

[dependencies]
nodekit = {{ path = "{ROOT}/runtime" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = {{ version = "1", features = ["preserve_order"] }}
schemars = {{ version = "1.2", default-features = false, features = ["std", "derive", "preserve_order"] }}
''')
    with open(os.path.join(base, name, "src", "lib.rs"), "w") as f:
        f.write(body)


def build_seconds(base, crate, env):
    subprocess.run(["cargo", "clean", "-q", "-p", crate], cwd=base, env=env, check=True)
    start = time.monotonic()
    subprocess.run(["cargo", "build", "-q", "-p", crate], cwd=base, env=env, check=True)
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="nodekit-compile-cost-")
    try:
        with open(os.path.join(base, "Cargo.toml"), "w") as f:
            f.write('[workspace]\nresolver = "3"\nmembers = ["macro50", "hand50"]\n')
        macro_body = "//! Generated.\nuse nodekit::prelude::*;\n" + COMMON + "".join(
            MACRO_NODE.format(i=i) for i in range(args.nodes))
        hand_body = "//! Generated.\n#![allow(missing_docs)]\n" + HAND_PRELUDE + COMMON + "".join(
            HAND_NODE.format(i=i) for i in range(args.nodes))
        write_crate(base, "macro50", macro_body)
        write_crate(base, "hand50", hand_body)
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(base, "target"))
        # Dependencies (and both crates) once, so the timed builds are the crates alone.
        subprocess.run(["cargo", "build", "-q", "--workspace"], cwd=base, env=env, check=True)
        results = {}
        for crate in ["hand50", "macro50"]:
            times = [build_seconds(base, crate, env) for _ in range(args.runs)]
            results[crate] = times
            print(f"{crate}: median {statistics.median(times):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)})")
        added = statistics.median(results["macro50"]) - statistics.median(results["hand50"])
        print(f"added by the macros for {args.nodes} nodes: {added:.2f} s (target: under 2 s)")
    finally:
        if args.keep:
            print("scratch folder:", base)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
