//! `#[param(flatten)]`: a group's fields are the node's own parameters.
use nodekit::prelude::*;
use serde_json::json;

/// Which conversation.
#[derive(NodeParams, Debug, PartialEq)]
pub struct Session {
    /// Where the key comes from.
    #[param(default = "fromInput", options = ["fromInput", "customKey"])]
    pub source: String,
    /// The key.
    #[param(display_options(show(source = ["customKey"])))]
    pub key: Option<String>,
}

/// A memory with a shared session group.
#[ai_node(output = memory)]
pub struct GroupedMemory {
    /// How many messages.
    #[param(default = 5)]
    pub window: u32,
    /// The session group.
    #[param(flatten)]
    pub session: Session,
    /// Shown only for a custom key: a condition on a flattened parameter.
    #[param(default = false, display_options(show(source = ["customKey"])))]
    pub strict: bool,
}

fn main() {
    let names: Vec<String> = GroupedMemory::properties()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["window", "source", "key", "strict"]);
    let node =
        GroupedMemory::from_params(&json!({"source": "customKey", "key": "k1"}), "m").unwrap();
    assert_eq!(node.window, 5);
    assert_eq!(
        node.session,
        Session {
            source: "customKey".into(),
            key: Some("k1".into())
        }
    );
    let node = GroupedMemory::from_params(&json!({}), "m").unwrap();
    assert_eq!(node.session.source, "fromInput");
    assert_eq!(node.session.key, None);
}
