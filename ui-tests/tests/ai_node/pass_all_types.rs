//! Every supported field type and attribute, checked against the JSON they produce.
use nodekit::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

/// One header.
#[derive(Debug, NodeParams)]
pub struct Header {
    /// Header name.
    name: String,
    /// Header value.
    #[param(default = "")]
    value: String,
}

/// More settings.
#[derive(Debug, NodeParams)]
pub struct Extra {
    /// Retries.
    #[param(default = 2, min = 0, max = 10)]
    retries: u8,
    /// Proxy.
    proxy: Option<String>,
}

/// Exercises everything.
///
/// Second paragraph.
#[ai_node(
    name = "everything",
    display_name = "Everything",
    output = main,
    version = [1, 2],
    default_version = 2,
    credentials = ["httpBasicAuth"],
    icon = "fa:star",
    group = ["input"],
    subtitle = "={{ $parameter.text }}",
    usable_as_tool,
    package = "n8n-nodes-test",
    documentation_url = "https://docs.example.test/everything",
    notice = "Read the docs first."
)]
#[derive(Debug)]
pub struct Everything {
    /// Some text.
    #[param(
        placeholder = "Type here",
        hint = "Any text",
        rows = 4,
        no_data_expression
    )]
    text: String,
    /// A secret.
    #[param(password, default = "")]
    secret: String,
    /// An integer.
    #[param(default = 3, min = 1, max = 9)]
    small: u16,
    /// A signed integer.
    #[param(default = -4)]
    signed: i32,
    /// A float given an integer default.
    #[param(default = 1, precision = 2)]
    ratio: f64,
    /// A switch.
    #[param(default = true)]
    flag: bool,
    /// An enum.
    #[param(default = Direction::Desc)]
    direction: Direction,
    /// Several enum values.
    #[param(display_name = "Directions Allowed")]
    directions: Vec<Direction>,
    /// Inline options.
    #[param(options = ["a", "b"], default = "b", display_options(show(flag = [true], "@version" = [2])))]
    letter: String,
    /// A list of strings.
    tags: Vec<String>,
    /// Arbitrary JSON.
    #[param(default = "{\"a\": 1}")]
    body: serde_json::Value,
    /// Optional number.
    maybe: Option<u32>,
    /// A date.
    #[param(kind = "dateTime", default = "")]
    when: String,
    /// Options loaded at edit time.
    #[param(load_options_method = "getModels", default = "m")]
    model: String,
    /// A collection.
    #[param(collection, placeholder = "Add Option")]
    extra: Extra,
    /// A fixed collection.
    #[param(fixed_collection)]
    headers: Vec<Header>,
    /// An expression default.
    #[param(name = "sessionId", default = "={{ $json.sessionId }}", display_options(hide(direction = [Direction::Asc])))]
    session: Option<String>,
    /// Filled by the LLM.
    #[from_ai(
        key = "search_term",
        description = "What to search",
        type = "string",
        default = "all"
    )]
    search: String,
    /// Not a parameter.
    #[param(skip)]
    cache: Vec<u8>,
}

fn main() {
    let d = serde_json::to_value(Everything::description()).unwrap();
    assert_eq!(d["name"], "everything");
    assert_eq!(d["version"], json!([1, 2]));
    assert_eq!(d["defaultVersion"], 2);
    assert_eq!(
        d["description"],
        "Exercises everything.\n\nSecond paragraph."
    );
    assert_eq!(d["inputs"], json!(["main"]));
    assert_eq!(d["usableAsTool"], true);
    assert_eq!(
        d["codex"]["resources"]["primaryDocumentation"][0]["url"],
        "https://docs.example.test/everything"
    );
    let props = d["properties"].as_array().unwrap();
    let p = |name: &str| props.iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!(props[0]["type"], "notice");
    assert_eq!(
        p("text"),
        json!({"displayName": "Text", "name": "text", "type": "string", "typeOptions": {"rows": 4}, "default": "", "required": true, "description": "Some text.", "hint": "Any text", "placeholder": "Type here", "noDataExpression": true})
    );
    assert_eq!(p("secret")["typeOptions"], json!({"password": true}));
    assert_eq!(
        p("small")["typeOptions"],
        json!({"minValue": 1, "maxValue": 9})
    );
    assert_eq!(p("signed")["default"], -4);
    assert_eq!(p("ratio")["default"], 1);
    assert_eq!(p("ratio")["typeOptions"], json!({"numberPrecision": 2}));
    assert_eq!(p("flag")["type"], "boolean");
    assert_eq!(p("direction")["type"], "options");
    assert_eq!(p("direction")["default"], "desc");
    assert_eq!(
        p("direction")["options"][0],
        json!({"name": "asc", "value": "asc", "description": "Smallest first."})
    );
    assert_eq!(p("directions")["type"], "multiOptions");
    assert_eq!(p("directions")["displayName"], "Directions Allowed");
    assert_eq!(
        p("letter")["displayOptions"],
        json!({"show": {"flag": [true], "@version": [2]}})
    );
    assert_eq!(p("tags")["typeOptions"], json!({"multipleValues": true}));
    assert_eq!(p("body")["type"], "json");
    assert_eq!(p("maybe").get("required"), None);
    assert_eq!(p("when")["type"], "dateTime");
    assert_eq!(
        p("model")["typeOptions"],
        json!({"loadOptionsMethod": "getModels"})
    );
    assert_eq!(p("extra")["type"], "collection");
    assert_eq!(p("extra")["options"][0]["name"], "retries");
    assert_eq!(p("headers")["type"], "fixedCollection");
    assert_eq!(p("headers")["options"][0]["values"][0]["name"], "name");
    assert_eq!(
        p("sessionId")["displayOptions"],
        json!({"hide": {"direction": ["asc"]}})
    );
    assert_eq!(
        p("search")["default"],
        "={{ $fromAI('search_term', 'What to search', 'string', 'all') }}"
    );
    assert!(props.iter().all(|p| p["name"] != "cache"));

    let node = Everything::from_params(
        &json!({
            "text": "hi", "small": 9, "signed": -1, "ratio": 0.5, "flag": false,
            "direction": "asc", "directions": ["asc", "desc"], "letter": "a",
            "tags": ["x"], "body": "{\"k\": [1]}", "maybe": null, "when": "2026-01-01",
            "model": "m", "extra": {"retries": 4}, "headers": {"values": [{"name": "X-A", "value": "1"}]},
            "sessionId": "s1", "search": "cats"
        }),
        "Everything",
    )
    .unwrap();
    assert_eq!(node.small, 9);
    assert_eq!(node.direction, Direction::Asc);
    assert_eq!(node.body, json!({"k": [1]}));
    assert_eq!(node.maybe, None);
    assert_eq!(node.extra.retries, 4);
    assert_eq!(node.headers[0].name, "X-A");
    assert!(node.cache.is_empty());
    let _ = (
        &node.text,
        &node.secret,
        node.signed,
        node.ratio,
        node.flag,
        &node.directions,
        &node.letter,
        &node.tags,
        &node.when,
        &node.model,
        &node.extra.proxy,
        &node.headers[0].value,
        &node.session,
        &node.search,
    );
}
