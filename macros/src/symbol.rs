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
    "optional_credentials",
    "main_input",
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
    "flatten",
];

/// Keys of `#[from_ai(...)]`.
pub const FROM_AI_KEYS: &[&str] = &["key", "description", "type", "default"];

/// Keys of `#[param(...)]` written without a value.
pub const PARAM_FLAGS: &[&str] = &[
    "required",
    "password",
    "no_data_expression",
    "collection",
    "fixed_collection",
    "json",
    "skip",
    "flatten",
];

/// Values of `#[ai_node(output = ...)]`.
pub const OUTPUTS: &[&str] = &[
    "main",
    "agent",
    "chat_model",
    "memory",
    "tool",
    "embeddings",
    "vector_store",
    "document_loader",
    "text_splitter",
    "model_selector",
];

/// Values of `#[param(kind = "...")]`.
pub const KINDS: &[&str] = &[
    "string", "number", "boolean", "json", "dateTime", "color", "hidden", "options", "filter",
];

/// The argument types `$fromAI` accepts.
pub const FROM_AI_TYPES: &[&str] = &["string", "number", "boolean", "json"];

#[cfg(feature = "db-tool")]
/// Keys of `#[db_tool(...)]`: those of `#[ai_node]` that a SQL tool may set,
/// and its own. `output`, `main_input`, `optional_credentials` and
/// `usable_as_tool` are fixed by the macro (see [`DB_TOOL_FIXED_KEYS`]).
pub const DB_TOOL_KEYS: &[&str] = &[
    "query",
    "operation",
    "name",
    "display_name",
    "description",
    "version",
    "default_version",
    "credentials",
    "icon",
    "group",
    "subtitle",
    "package",
    "documentation_url",
    "notice",
];

#[cfg(feature = "db-tool")]
/// `#[ai_node]` keys that `#[db_tool]` sets itself, with why.
pub const DB_TOOL_FIXED_KEYS: &[(&str, &str)] = &[
    (
        "output",
        "a db_tool is always a tool node (`output = tool`)",
    ),
    ("main_input", "a db_tool always has an optional main input"),
    (
        "optional_credentials",
        "a db_tool always takes an optional `postgres` or `sqlite` credential",
    ),
    (
        "usable_as_tool",
        "a db_tool is a tool already; `usable_as_tool` is for main nodes",
    ),
];

#[cfg(feature = "db-tool")]
/// Values of `#[db_tool(operation = ...)]`.
pub const OPERATIONS: &[&str] = &[
    "select",
    "insert",
    "update",
    "delete",
    "execute",
    "describe",
    "upsert",
    "transaction",
];

/// One request argument: the request struct's field, the n8n parameter
/// name that fills it, and whether it is required.
#[cfg(feature = "db-tool")]
pub type OperationArg = (&'static str, &'static str, bool);

/// The request arguments of each operation: the request struct's field
/// (`nodekit::sql::SelectRequest`, ...), the n8n parameter name a tool's
/// field must have to fill it (n8n's own SQL tools' names), and whether it
/// is required.
#[cfg(feature = "db-tool")]
pub const OPERATION_ARGS: &[(&str, &[OperationArg])] = &[
    (
        "select",
        &[
            ("table", "tableName", true),
            ("columns", "columns", false),
            ("filter", "whereConditions", false),
            ("order_by", "orderBy", false),
            ("limit", "limit", false),
            ("offset", "offset", false),
        ],
    ),
    (
        "insert",
        &[("table", "tableName", true), ("rows", "rows", true)],
    ),
    (
        "update",
        &[
            ("table", "tableName", true),
            ("values", "values", true),
            ("filter", "whereConditions", true),
        ],
    ),
    (
        "delete",
        &[
            ("table", "tableName", true),
            ("filter", "whereConditions", true),
        ],
    ),
    ("execute", &[("sql", "query", true)]),
    ("describe", &[("table", "tableName", false)]),
    (
        "upsert",
        &[
            ("table", "tableName", true),
            ("rows", "rows", true),
            ("conflict_columns", "conflictColumns", true),
        ],
    ),
    (
        "transaction",
        &[
            ("action", "action", true),
            ("time_limit", "timeLimit", false),
        ],
    ),
];

#[cfg(feature = "db-tool")]
/// The credential types `#[db_tool]` adds, optional: the tool uses whichever is set.
pub const DB_CREDENTIALS: &[&str] = &["postgres", "sqlite"];
