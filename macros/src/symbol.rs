//! Attribute keys, named once (serde_derive's habit) so that parsing and
//! "did you mean" suggestions agree.

/// Keys of `#[ai_node(...)]`.
pub const NODE_KEYS: &[&str] = &[
    "name",
    "display_name",
    "description",
    "output",
    "version",
    "default_version",
    "credentials",
    "icon",
    "group",
    "subtitle",
    "usable_as_tool",
    "package",
    "documentation_url",
    "notice",
];

/// Keys of `#[param(...)]`.
pub const PARAM_KEYS: &[&str] = &[
    "name",
    "display_name",
    "description",
    "default",
    "required",
    "min",
    "max",
    "precision",
    "options",
    "display_options",
    "placeholder",
    "hint",
    "password",
    "rows",
    "no_data_expression",
    "load_options_method",
    "collection",
    "fixed_collection",
    "kind",
    "json",
    "skip",
];

/// Keys of `#[from_ai(...)]`.
pub const FROM_AI_KEYS: &[&str] = &["key", "description", "type", "default"];

/// Values of `#[ai_node(output = ...)]`.
pub const OUTPUTS: &[&str] = &[
    "main",
    "agent",
    "chat_model",
    "memory",
    "tool",
    "embeddings",
    "vector_store",
];

/// Values of `#[param(kind = "...")]`.
pub const KINDS: &[&str] = &[
    "string", "number", "boolean", "json", "dateTime", "color", "hidden", "options",
];

/// The argument types `$fromAI` accepts.
pub const FROM_AI_TYPES: &[&str] = &["string", "number", "boolean", "json"];
