//! The node as an agent calls it: through the catalog, with the arguments
//! a model would send.
use std::sync::Arc;

use nodekit::Catalog;
use nodekit::serde_json::json;
use nodekit::tool::Tool;

/// The Word Count node with default parameters, as the tool it supplies.
async fn word_count() -> Arc<dyn Tool> {
    {{crate}}::link();
    let entry = Catalog::global().find("wordCountTool").expect("registered");
    let mut tools = entry
        .tools("Word Count", &json!({}), None, Default::default())
        .await
        .expect("supplied");
    tools.pop().expect("one tool")
}

#[tokio::test]
async fn word_count_counts_and_lists_the_most_frequent() {
    let answer = word_count()
        .await
        .call(json!({"text": "the cat saw the dog", "top": 1}))
        .await
        .expect("answered");
    assert_eq!(answer, json!({"words": 5, "top": [["the", 2]]}));
}

#[tokio::test]
async fn a_top_out_of_bounds_is_an_argument_error() {
    let error = word_count()
        .await
        .call(json!({"text": "a", "top": 99}))
        .await
        .expect_err("99 is above 20");
    assert!(error.to_string().contains("top"), "{error}");
}
