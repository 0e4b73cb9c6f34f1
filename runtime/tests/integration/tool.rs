//! Nodes as tools: definition, argument validation, typed substitution.

use nodekit::prelude::*;
use nodekit::tool::NodeTool;
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, NodeParams)]
struct Filter {
    /// Field to filter on.
    #[param(default = "")]
    field: String,
}

/// Finds rows.
#[ai_node(name = "findRows", output = tool)]
#[derive(Debug)]
struct FindRows {
    /// What to look for.
    #[from_ai]
    query: String,
    /// How many rows.
    #[from_ai(default = 5)]
    #[param(min = 1, max = 50)]
    limit: u32,
    /// Exact matching.
    #[from_ai(key = "exact_match", type = "boolean")]
    exact: bool,
    /// Extra filter JSON.
    #[from_ai(description = "Filter as JSON")]
    filter: serde_json::Value,
    /// Shown only in advanced mode, so its $fromAI is not asked for otherwise.
    #[from_ai]
    #[param(display_options(show(advanced = [true])))]
    hint_text: Option<String>,
    /// Advanced mode.
    #[param(default = false)]
    advanced: bool,
    /// Fixed by the workflow author.
    #[param(collection)]
    extra: Filter,
}

fn tool(params: Value) -> NodeTool {
    NodeTool::new(FindRows::description(), "Find rows: v2!", &params).unwrap()
}

#[test]
fn definition_comes_from_from_ai_parameters() {
    let t = tool(json!({}));
    let d = t.definition();
    assert_eq!(d.name, "Find_rows_v2_");
    assert_eq!(d.description, "Finds rows.");
    assert_eq!(
        d.parameters,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {
                    "type": "integer", "description": "How many rows.", "default": 5,
                    "minimum": 1, "maximum": 50
                },
                "exact_match": {"type": "boolean", "description": "Exact matching."},
                "filter": {
                    "anyOf": [
                        {"type": "object", "minProperties": 1, "additionalProperties": true},
                        {"type": "array", "minItems": 1}
                    ],
                    "description": "Filter as JSON"
                }
            },
            "required": ["query", "exact_match", "filter"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        t.definition().to_openai()["function"]["name"],
        "Find_rows_v2_"
    );
}

#[test]
fn hidden_parameters_ask_nothing() {
    assert!(
        tool(json!({})).definition().parameters["properties"]
            .get("hintText")
            .is_none()
    );
    let t = tool(json!({"advanced": true}));
    assert!(
        t.definition().parameters["properties"]
            .get("hintText")
            .is_some()
    );
}

#[test]
fn workflow_values_replace_from_ai_defaults() {
    let t = tool(json!({"limit": 7, "toolDescription": "Look rows up by text."}));
    assert!(
        t.definition().parameters["properties"]
            .get("limit")
            .is_none()
    );
    assert_eq!(t.definition().description, "Look rows up by text.");
}

#[test]
fn arguments_are_substituted_typed() {
    let t = tool(json!({}));
    let node: FindRows = t
        .instantiate(&json!({"query": "cats", "exact_match": true, "filter": {"color": "black"}}))
        .unwrap();
    assert_eq!(node.query, "cats");
    assert_eq!(node.limit, 5);
    assert!(node.exact);
    assert_eq!(node.filter, json!({"color": "black"}));
    assert!(!node.advanced);
    assert_eq!(node.extra.field, "");
    assert_eq!(node.hint_text, None);
}

#[test]
fn bad_arguments_get_an_error_the_llm_can_act_on() {
    let t = tool(json!({}));
    let e = t
        .parameters_for(&json!({"query": 3, "exact_match": "yes", "surprise": 1}))
        .unwrap_err();
    let text = e.to_string();
    for part in ["/query", "/exact_match", "filter", "surprise"] {
        assert!(text.contains(part), "`{part}` missing from: {text}");
    }
    assert!(matches!(e, nodekit::Error::InvalidArguments(_)));
    let e = t
        .parameters_for(
            &json!({"query": "q", "limit": "ten", "exact_match": true, "filter": {"a": 1}}),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "The tool arguments are invalid. Fix every problem below and call the tool again.
Problems:
- /limit: \"ten\" is not of type \"integer\"
Expected arguments (one JSON object):
- query: string, required. What to look for.
- limit: integer from 1 to 50, optional (default 5). How many rows.
- exact_match: boolean, required. Exact matching.
- filter: non-empty JSON object or array, required. Filter as JSON
No other arguments are accepted."
    );
}

#[test]
fn a_declared_fields_type_and_bounds_reach_the_model() {
    let t = tool(json!({}));
    for (limit, problem) in [
        (
            json!(500),
            "- /limit: 500 is greater than the maximum of 50",
        ),
        (json!(0), "- /limit: 0 is less than the minimum of 1"),
        (json!(2.5), "- /limit: 2.5 is not of type \"integer\""),
    ] {
        let args = json!({"query": "q", "limit": limit, "exact_match": false, "filter": [1]});
        let e = t.instantiate::<FindRows>(&args).unwrap_err();
        assert!(matches!(e, nodekit::Error::InvalidArguments(_)), "{e}");
        assert!(e.to_string().contains(problem), "{e}");
    }
    let args = json!({"query": "q", "limit": 50, "exact_match": false, "filter": [1]});
    assert_eq!(t.instantiate::<FindRows>(&args).unwrap().limit, 50);
}

#[test]
fn a_from_ai_call_written_in_the_workflow_keeps_n8ns_schema() {
    // The workflow's own expression, not the field's default: n8n's schema,
    // and the field's bounds are checked when the node is built.
    let t = tool(json!({"limit": "={{ $fromAI('limit', 'How many rows.', 'number') }}"}));
    assert_eq!(
        t.definition().parameters["properties"]["limit"],
        json!({"type": "number", "description": "How many rows."})
    );
    let e = t
        .instantiate::<FindRows>(
            &json!({"query": "q", "limit": 500, "exact_match": false, "filter": [1]}),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `Find rows: v2!`: parameter `limit` is 500, but it must be from 1 to 50"
    );
}

#[test]
fn broken_from_ai_syntax_is_reported_with_the_node() {
    let e = NodeTool::new(
        FindRows::description(),
        "Finder",
        &json!({"query": "={{ $fromAI('q' }}"}),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with("node `Finder`: "), "{text}");
}

#[test]
fn conflicting_duplicate_keys_are_reported() {
    let e = NodeTool::new(
        FindRows::description(),
        "Finder",
        &json!({"query": "={{ $fromAI('q', 'one') }}", "extra": {"field": "={{ $fromAI('q', 'two') }}"}}),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("Duplicate key 'q' found with different description or type"),
        "{e}"
    );
}

/// Versioned, with optional and list parameters.
#[ai_node(name = "versioned", output = tool, version = [1, 2], default_version = 1)]
#[derive(Debug)]
struct Versioned {
    /// Only asked for in version 2.
    #[from_ai]
    #[param(display_options(show("@version" = [2])))]
    v2_question: Option<String>,
    /// Tags the LLM gives, as one JSON list.
    #[from_ai]
    tags: Vec<String>,
    /// Optional, no default: absent stays `None`.
    #[param(min = 1)]
    page: Option<u32>,
    /// Required, no default.
    #[param(required, default = "")]
    table: String,
    /// A map given as JSON text.
    #[param(json, default = "{\"a\": 1}")]
    weights: std::collections::BTreeMap<String, u32>,
}

#[test]
fn the_version_decides_version_conditions() {
    let v1 = NodeTool::new(Versioned::description(), "V", &json!({"table": "t"})).unwrap();
    assert!(
        v1.definition().parameters["properties"]
            .get("v2Question")
            .is_none()
    );
    let v2 =
        NodeTool::with_version(Versioned::description(), "V", &json!({"table": "t"}), 2.0).unwrap();
    assert!(
        v2.definition().parameters["properties"]
            .get("v2Question")
            .is_some()
    );
}

#[test]
fn lists_are_json_arguments_and_absent_options_stay_none() {
    let t = NodeTool::new(Versioned::description(), "V", &json!({"table": "t"})).unwrap();
    assert_eq!(
        t.definition().parameters["properties"]["tags"]["anyOf"][1]["type"],
        "array"
    );
    let node: Versioned = t.instantiate(&json!({"tags": ["a", "b"]})).unwrap();
    assert_eq!(node.tags, ["a", "b"]);
    assert_eq!(node.table, "t");
    assert_eq!(node.page, None);
    assert_eq!(node.v2_question, None);
    assert_eq!(node.weights.get("a"), Some(&1));
    let node: Versioned = NodeTool::new(
        Versioned::description(),
        "V",
        &json!({"table": "t", "weights": "{\"b\": 2}"}),
    )
    .unwrap()
    .instantiate(&json!({"tags": ["x"]}))
    .unwrap();
    assert_eq!(node.weights.get("b"), Some(&2));
}

#[test]
fn an_empty_required_parameter_is_missing() {
    let t = NodeTool::new(Versioned::description(), "V", &json!({})).unwrap();
    let e = t
        .instantiate::<Versioned>(&json!({"tags": ["x"]}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `V`: parameter `table` is required but has no value; set it in the node's parameters"
    );
}

#[test]
fn workflow_expressions_pass_through_to_the_engine() {
    let t = NodeTool::new(
        FindRows::description(),
        "F",
        &json!({"extra": {"field": "={{ $json.column }}"}}),
    )
    .unwrap();
    assert_eq!(t.parameters()["extra"]["field"], "={{ $json.column }}");
    let e = t
        .instantiate::<FindRows>(&json!({"query": "q", "exact_match": true, "filter": [1]}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node `F`: parameter `extra.field` holds the expression ={{ $json.column }}, which was not resolved before the node ran"
    );
}

/// Units of a forecast: an enum is an options parameter.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
enum Units {
    Metric,
    Imperial,
}

/// What a forecast shows: a `Vec` of it is a multiOptions parameter.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
enum Shown {
    Temperature,
    WindSpeed,
    Rain,
}

/// Forecasts the weather.
#[ai_node(name = "forecastChoices", output = tool)]
#[derive(Debug)]
struct Forecast {
    /// How many days ahead.
    #[from_ai]
    #[param(min = 1, max = 7)]
    days: u32,
    /// Units of the temperatures.
    #[from_ai]
    units: Units,
    /// What to show.
    #[from_ai]
    shown: Vec<Shown>,
    /// How much detail.
    #[from_ai]
    #[param(options = ["low", "high"])]
    detail: Option<String>,
}

#[test]
fn an_options_fields_choices_reach_the_model() {
    let t = NodeTool::new(Forecast::description(), "Forecast", &json!({})).unwrap();
    let properties = &t.definition().parameters["properties"];
    assert_eq!(
        properties["units"],
        json!({"type": "string", "description": "Units of the temperatures.", "enum": ["metric", "imperial"]})
    );
    assert_eq!(
        properties["shown"],
        json!({
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "enum": ["temperature", "windSpeed", "rain"]},
            "description": "What to show."
        })
    );
    assert_eq!(properties["detail"]["enum"], json!(["low", "high"]));
    let node: Forecast = t
        .instantiate(&json!({"days": 2, "units": "imperial", "shown": ["rain", "windSpeed"], "detail": "low"}))
        .unwrap();
    assert_eq!(
        (node.days, node.units, node.shown, node.detail.as_deref()),
        (
            2,
            Units::Imperial,
            vec![Shown::Rain, Shown::WindSpeed],
            Some("low")
        )
    );
}

#[test]
fn a_wrong_choice_is_reported_with_the_other_problems() {
    let t = NodeTool::new(Forecast::description(), "Forecast", &json!({})).unwrap();
    let e = t
        .instantiate::<Forecast>(
            &json!({"days": 9, "units": "kelvin", "shown": ["rain", "snow"], "detail": 3}),
        )
        .unwrap_err();
    assert!(matches!(e, nodekit::Error::InvalidArguments(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "The tool arguments are invalid. Fix every problem below and call the tool again.
Problems:
- /days: 9 is greater than the maximum of 7
- /units: \"kelvin\" is not one of \"metric\" or \"imperial\"
- /shown/1: \"snow\" is not one of \"temperature\", \"windSpeed\" or \"rain\"
- /detail: 3 is not of type \"string\"
- /detail: 3 is not one of \"low\" or \"high\"
Expected arguments (one JSON object):
- days: integer from 1 to 7, required. How many days ahead.
- units: one of [\"metric\", \"imperial\"], required. Units of the temperatures.
- shown: non-empty array, each one of [\"temperature\", \"windSpeed\", \"rain\"], required. What to show.
- detail: one of [\"low\", \"high\"], required. How much detail.
No other arguments are accepted."
    );
    let e = t
        .instantiate::<Forecast>(
            &json!({"days": 1, "units": "metric", "shown": [], "detail": "low"}),
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("- /shown: [] has less than 1 item\n"),
        "{e}"
    );
}

#[test]
fn a_choice_written_in_the_workflow_keeps_n8ns_schema() {
    let t = NodeTool::new(
        Forecast::description(),
        "Forecast",
        &json!({"units": "={{ $fromAI('units', 'Units', 'string') }}"}),
    )
    .unwrap();
    assert_eq!(
        t.definition().parameters["properties"]["units"],
        json!({"type": "string", "description": "Units"})
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::from),
        "=\\{\\{ \\$fromAI\\(.{0,30}\\) \\}\\}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("query".to_owned()),
                    Just("limit".to_owned()),
                    Just("filter".to_owned()),
                    Just("extra".to_owned()),
                    Just("advanced".to_owned()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary parameter JSON never panics: it builds a node or returns an error.
    #[test]
    fn arbitrary_params_never_panic(params in arb_json(), args in arb_json()) {
        let _ = FindRows::from_params(&params, "n");
        if let Ok(t) = NodeTool::new(FindRows::description(), "n", &params) {
            let _ = t.instantiate::<FindRows>(&args);
        }
    }
}
