//! nodekit: declare n8n-style AI workflow nodes in Rust.
//!
//! Annotate a struct with [`ai_node`] and its fields become the node's
//! parameters: nodekit generates the n8n node description, the JSON schema
//! of the arguments an LLM fills through `$fromAI`, a typed constructor from
//! the node's parameter JSON, and the node's entry in the global [`Catalog`].
//!
//! The contract (the node traits and contexts, descriptions, parameters,
//! messages, the traits of models, memory, tools and stores, the run log
//! and the errors) is the crate `nodekit-core`, which a provider's or a
//! store's crate can build on alone; this crate re-exports it under the
//! same paths and adds the clients, stores and hosts.
//!
//! # Modules
//!
//! | module | what it holds | feature |
//! | --- | --- | --- |
//! | [`prelude`] | everything a node author needs, in one import | |
//! | [`guide`] | the guides: authoring nodes, models and agents, conversation memory, SQL tools, agent memory, vector stores, deploying to n8n, MCP, a chat service | |
//! | [`description`] | n8n's node description (`INodeTypeDescription`) and its JSON | |
//! | [`params`] | the [`Params`] trait, the Rust → n8n type mapping, defaults applied at a node's version | |
//! | [`from_ai`] | `$fromAI(...)` parsing, argument schemas, substitution | |
//! | [`registry`] | the global [`Catalog`] of registered nodes | |
//! | [`node`] | the [`Node`] trait, what nodes do at run time (`SupplyData`, `ToolNode`, `Execute`) and both contexts with their logging factories | |
//! | [`run_log`] | the run log of a workflow run and the decorators that write it | |
//! | [`tool`] | the [`Tool`](tool::Tool) trait and [`NodeTool`](tool::NodeTool) (a node as an LLM tool) | |
//! | [`message`] | chat messages in LangChain's and nodekit's forms | |
//! | [`model`] | the [`ChatModel`](model::ChatModel) trait, custom models; the OpenAI-compatible client | `openai` |
//! | [`embed`] | the [`Embedder`](embed::Embedder) trait; the OpenAI-compatible embeddings client | `openai` |
//! | [`document`] | [`Document`](document::Document): a text and its metadata | |
//! | [`text_splitter`] | LangChain's recursive and character text splitters, chunk for chunk | |
//! | [`vector_store`](mod@vector_store) | the [`VectorStore`](vector_store::VectorStore) trait, metadata filters, documents in and out through an embedder, the in-process store; SQLite (sqlite-vec) and PGVector stores | stores: `vector-store` |
//! | [`memory`] | conversation memory: the [`Memory`](memory::Memory) trait and LangChain's buffer, window and token-buffer memories | exact token counts: `tiktoken` |
//! | `postgres` | PostgreSQL reached one way by every store: [`PostgresConfig`](postgres::PostgresConfig) and the [`Postgres`](postgres::Postgres) pool | `postgres` |
//! | [`history`] | where messages are stored: [`ChatHistory`](history::ChatHistory), the in-process history; stores on SQLite, PostgreSQL and Redis | stores: `sqlite`, `postgres`, `redis` |
//! | [`event`] | progress of a run (streamed text, tool calls) | |
//! | [`expression`] | the `$json` expressions nodekit evaluates | |
//! | [`credential`] | credential types nodes name | |
//! | `agent`, `workflow` | the tools-agent loop; workflows in n8n's export format | `agent` |
//! | `sql` | the SQL tool nodes' engine and `#[db_tool]` | `sql-tools-sqlite`, `sql-tools-postgres` |
//! | `agent_memory` | agent memory tiers: storage, working memory, observations, recall, plans | `agent-memory-sqlite`, `agent-memory-postgres` |
//! | `n8n` | `nodekit package` and the bridge that runs nodes inside n8n | `n8n` |
//! | `mcp` | tools over the Model Context Protocol: serving them, and using an MCP server's | `mcp` |
//! | `serve` | a workflow's agent as a chat service: n8n's chat protocol, an OpenAI-compatible endpoint | `serve` |
//!
//! # Features
//!
//! The default feature `full` turns everything on. A crate that only
//! declares nodes needs none of it:
//!
//! ```toml
//! nodekit = { version = "0.1", default-features = false }
//! ```
//!
//! builds [`ai_node`], [`NodeParams`], descriptions, `$fromAI`, the
//! catalog, tools, custom chat models and the in-process memories, without
//! an HTTP client, a database driver or a tokenizer.
//!
//! | feature | adds | main dependencies |
//! | --- | --- | --- |
//! | `openai` | the OpenAI-compatible chat-model and embeddings client | reqwest (rustls) |
//! | `agent` | the tools-agent loop and the workflow runner; the structured output parser checks answers against their JSON Schema | jsonschema |
//! | `tiktoken` | exact `cl100k_base` / `o200k_base` token counts (otherwise LangChain's length estimate) | tiktoken-rs |
//! | `sqlite` | the SQLite chat history | sqlx |
//! | `postgres` | the PostgreSQL chat history | sqlx, rustls |
//! | `redis` | the Redis chat history | redis |
//! | `sql-tools` | the SQL tool nodes' engine and `#[db_tool]` on SQLite and PostgreSQL: `sql-tools-sqlite` (turns on `sqlite`) and `sql-tools-postgres` (turns on `postgres`) | sqlx, sqlparser |
//! | `agent-memory` | agent memory tiers (turns on `tiktoken`): `agent-memory-sqlite` (turns on `sqlite`) and `agent-memory-postgres` (turns on `postgres`) | sqlx, sqlite-vec |
//! | `vector-store` | the SQLite (sqlite-vec) and PostgreSQL (pgvector, n8n's table layout) vector stores: `vector-store-sqlite` (turns on `sqlite`) and `vector-store-postgres` (turns on `postgres`) | sqlx, sqlite-vec |
//! | `ann` | HNSW graphs for searches of many vectors (agent-memory recall in long threads, large vector stores); without it they are scanned exactly | usearch |
//! | `n8n` | the n8n community package writer and bridge | |
//! | `mcp` | tools over the Model Context Protocol (stdio, Streamable HTTP), served (`mcp-server`) and used (`mcp-client`) | rmcp, hyper (server), reqwest (client) |
//! | `serve` | a workflow's agent over HTTP: n8n's Chat Trigger protocol and page, an OpenAI-compatible endpoint (turns on `agent`) | hyper |
//! | `full` | all of the above (default) | |
//!
//! Each database feature alone builds only its driver: a SQLite-only build
//! (`sql-tools-sqlite`, `agent-memory-sqlite`, `vector-store-sqlite`) has no
//! PostgreSQL driver and no TLS.
//!
//! # A node
//!
//! ```
//! use nodekit::prelude::*;
//!
//! /// Store chat history in Redis.
//! #[ai_node(name = "memoryRedis", display_name = "Redis Memory", output = memory, credentials = ["redis"])]
//! pub struct MemoryRedis {
//!     /// Key that separates one conversation from another.
//!     #[param(display_name = "Session ID", default = "={{ $json.sessionId }}")]
//!     session_id: String,
//!     /// How many past messages the model receives.
//!     #[param(default = 10, min = 1)]
//!     context_window: u32,
//! }
//!
//! let d = MemoryRedis::description();
//! assert_eq!(d.properties[1].name, "contextWindow");
//! let node = MemoryRedis::from_params(&serde_json::json!({"sessionId": "abc"}), "Redis Memory").unwrap();
//! assert_eq!(node.context_window, 10);
//! ```
//!
//! # `#[ai_node(...)]` options
//!
//! | key | type | usage |
//! | --- | --- | --- |
//! | `name` | string | internal name; default: the struct name in lowerCamelCase |
//! | `display_name` | string | label; default: the struct name in Title Case |
//! | `description` | string | default: the doc comment (one of the two is required) |
//! | `output` | `main`, `agent`, `chat_model`, `memory`, `tool`, `embeddings`, `vector_store`, `document_loader`, `text_splitter`, `model_selector` | the kind of node: sets inputs, outputs, output names and codex; default `main`. `vector_store` is n8n's vector store node: its `mode` parameter (`load`, `insert`, `retrieve`, `retrieve-as-tool`; see `vector_store::node`) picks its connections; `document_loader`'s text-splitter input depends on its `textSplittingMode` parameter, as n8n's Default Data Loader's; `model_selector` supplies one of the chat models connected to it (n8n's Model Selector), its `numberInputs` parameter giving the inputs |
//! | `version` | number or `[numbers]` | default `1` |
//! | `default_version` | number | one of `version` |
//! | `credentials` | `["type", ...]` | required credential types |
//! | `optional_credentials` | `["type", ...]` | credential types the node can use but does not need (`"required": false`); listed after the required ones |
//! | `main_input` | flag | `output = tool` only: the tool also takes a main input (optional context), so its inputs are `["main"]` |
//! | `icon`, `subtitle`, `documentation_url`, `notice` | string | as in n8n |
//! | `group` | `["transform"]` | default `["transform"]` |
//! | `usable_as_tool` | flag | main nodes only |
//! | `package` | string | catalog package; default: the crate's package name |
//!
//! # `#[param(...)]` options
//!
//! | key | type | usage |
//! | --- | --- | --- |
//! | `name` | string | parameter name; default: the field name in lowerCamelCase |
//! | `display_name` | string | default: the field name in Title Case |
//! | `description` | string | default: the doc comment |
//! | `default` | value of the field's type, or an expression string `"=..."` | without it a non-`Option` field is required; an absent `Option` field is `None` whatever its default (the default is what the editor shows and what a workflow fills in) |
//! | `required` | flag | marks the parameter required in the editor |
//! | `min`, `max`, `precision` | number | number parameters |
//! | `options` | `["a", "b"]` | inline choices of a string parameter |
//! | `display_options` | `(show(param = [values], "@version" = [1]), hide(...))` | when the parameter is shown; a hidden parameter has no value, so the field must be an `Option` or have a plain default |
//! | `placeholder`, `hint`, `load_options_method` | string | as in n8n |
//! | `password`, `rows` | flag, integer | string parameters |
//! | `no_data_expression` | flag | disallow expressions |
//! | `collection` | flag | the field's type is a `#[derive(NodeParams)]` struct |
//! | `fixed_collection` | flag, or the group's name | the field is a `Vec` of such a struct; its entries are kept under the group's name (default `values`, e.g. `fixed_collection = "metadataValues"`) |
//! | `kind` | `"dateTime"`, `"color"`, `"hidden"`, `"json"`, `"filter"`, ... | overrides the property type (`filter`: n8n's conditions, on a `serde_json::Value` field; `nodekit::workflow::Filter` evaluates them) |
//! | `json` | flag | the value is JSON text to parse (automatic for `serde_json::Value`) |
//! | `skip` | flag | not a parameter; the field takes `Default::default()` |
//! | `flatten` | flag | the field's type is a `#[derive(NodeParams)]` struct whose parameters become this node's own, in place (as serde's `flatten`): groups shared by several nodes are written once. Takes no other key; `display_options` may name the group's parameters; a name given twice across groups panics when the properties are first built |
//!
//! # `#[from_ai(...)]`
//!
//! Makes the parameter's default `={{ $fromAI('key', 'description', 'type') }}`,
//! so an LLM fills it when the node runs as a tool. Keys: `key` (default: the
//! parameter name), `description` (default: the doc comment), `type`
//! (`string`, `number`, `boolean`, `json`; default: from the field type),
//! `default` (used when the LLM leaves the argument out; checked against
//! the parameter's `min` and `max` at compile time). Bounds and choices
//! are the parameter's (`#[param(min, max, options)]`, or the field's type),
//! and the tool's argument schema carries them: `minimum` and `maximum`,
//! `enum` for an options field, an array of `enum` items for a multiOptions
//! one.

//! # `#[db_tool(...)]`
//!
//! With the `sql-tools` feature. A SQL tool node: `#[ai_node(output = tool, main_input,
//! optional_credentials = ["postgres", "sqlite"])]` (so fields are
//! parameters as above, `#[param]` and `#[from_ai]` included) plus an
//! implementation of [`sql::DbTool`] whose `request()` is built from the
//! fields. Exactly one of `query` and `operation` is given.
//!
//! ```
//! # #[cfg(feature = "_sql-tools")] mod m {
//! use nodekit::prelude::*;
//!
//! /// Finds a user by e-mail address.
//! #[db_tool(query = "SELECT id, name FROM users WHERE email = $1 AND status = $2")]
//! pub struct FindUser {
//!     /// The user's e-mail address.
//!     #[from_ai]
//!     email: String,
//!     /// Only users with this status.
//!     #[param(default = "active")]
//!     status: String,
//!     /// The workflow author's settings (allowed tables, row limit, timeout).
//!     options: ToolOptions,
//! }
//! # }
//! ```
//!
//! | key | type | usage |
//! | --- | --- | --- |
//! | `query` | string | a fixed SQL template (PostgreSQL syntax) with placeholders `$1`..`$n`, bound in declaration order from every field except `#[param(skip)]` ones and `options`. Checked at compile time: exactly one statement, `$`-numbered placeholders without gaps, as many as bound fields, bindable field types (integers, floats, `bool`, `String`, `Vec<u8>`, `serde_json::Value`, `Option` of them). A plain query (no data-modifying `WITH`, `SELECT INTO` or `FOR UPDATE`) runs read-only |
//! | `operation` | `select`, `insert`, `update`, `delete`, `execute`, `describe`, `upsert`, `transaction` | one of the eight tools. Each request argument is read from the field whose n8n parameter name is the argument's (n8n's SQL tools' names; a field's parameter name is `#[param(name)]`, else the field name in lowerCamelCase, so `table_name` is `tableName`); other fields are an error unless `#[param(skip)]`: select → `tableName` (required), `columns`, `whereConditions`, `orderBy`, `limit`, `offset`; insert → `tableName`, `rows`; update → `tableName`, `values`, `whereConditions`; delete → `tableName`, `whereConditions`; execute → `query` (all required); describe → `tableName` (optional: empty lists the tables); upsert → `tableName`, `rows`, `conflictColumns` (all required); transaction → `action` (required: begin, commit or rollback), `timeLimit` (seconds). One doc comment describes the parameter and its `$fromAI` argument. A `#[param(flatten)]` field is a group of parameters several tools share; its type implements [`sql::RequestArgs`] to fill the arguments it holds (the compile-time check of required arguments is then skipped: an empty table or filter is refused when the tool runs) |
//! | `name`, `display_name`, `description`, `version`, `default_version`, `credentials`, `icon`, `group`, `subtitle`, `documentation_url`, `notice`, `package` | as for `#[ai_node]` | passed to `#[ai_node]`; `output`, `main_input`, `optional_credentials` and `usable_as_tool` are set by the macro, and `postgres`/`sqlite` may not be listed in `credentials` |
//!
//! Field types of the operation form: `tableName`, `columns`,
//! `whereConditions`, `orderBy`, `query`: `String` (or `Option<String>`,
//! absent = empty); `limit`, `offset`: an integer or an `Option` of one
//! (`Option<i64>` in the request); `rows`, `values`: `serde_json::Value` (or
//! an `Option` of it, absent = `null`). A field named `options` must be a
//! [`sql::ToolOptions`]: it is the tool's settings, a collection parameter
//! (the `#[param(collection)]` is implied) returned by `DbTool::options`.

// On docs.rs (`--cfg docsrs`), every feature-gated item is badged with the
// features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lets the crate use its own macros, whose expansions name `::nodekit`.
extern crate self as nodekit;

#[cfg(feature = "_agent-memory")]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "agent-memory-sqlite", feature = "agent-memory-postgres")))
)]
pub use nodekit_agent_memory as agent_memory;
#[cfg(feature = "agent")]
#[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
pub use nodekit_workflow::agent;
pub mod embed;
pub mod history;
#[cfg(any(feature = "mcp-server", feature = "mcp-client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "mcp-server", feature = "mcp-client"))))]
pub use nodekit_mcp as mcp;
pub mod model;
#[cfg(feature = "postgres")]
pub use nodekit_db::postgres;
#[cfg(feature = "n8n")]
pub use nodekit_n8n as n8n;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use nodekit_serve as serve;
#[cfg(feature = "_sql-tools")]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "sql-tools-sqlite", feature = "sql-tools-postgres")))
)]
pub use nodekit_sql as sql;
pub mod vector_store;
#[cfg(feature = "agent")]
#[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
pub use nodekit_workflow as workflow;

pub use nodekit_core::{
    credential, credential_type, description, document, error, event, expression, from_ai, host,
    memory, message, n8n_credentials, node, params, process_local, registry, run_log, run_scope,
    text_splitter, tool,
};

/// What the macros' expansions name (not public API).
#[doc(hidden)]
pub mod __private {
    pub use nodekit_core::__private::*;
    pub use nodekit_macros::ai_node;
    #[cfg(feature = "_sql-tools")]
    pub use nodekit_sql as sql;
}

/// Internals that nodekit's own benchmarks measure. Not public API: names
/// here may change in any release.
#[doc(hidden)]
pub mod __bench {
    /// Agent memory's nearest-message search, without the neighbours.
    #[cfg(feature = "_agent-memory")]
    pub use nodekit_agent_memory::recall::bench as recall;
    /// The OpenAI client's server-sent-events parser.
    #[cfg(feature = "openai")]
    pub use nodekit_http::sse::{SseEvent, SseParser};
    /// The SQL tools' engine.
    #[cfg(feature = "_sql-tools")]
    pub use nodekit_sql::bench as sql;
}

pub use error::{Error, Result};
// What authors name in their own derives, e.g. `#[schemars(crate = "nodekit::schemars")]`
// on an enum parameter, so a crate that declares nodes needs only `nodekit`.
pub use node::Node;
#[cfg(feature = "_sql-tools")]
pub use nodekit_macros::db_tool;
pub use nodekit_macros::{NodeParams, ai_node, chat_history, vector_store};
pub use params::Params;
pub use registry::Catalog;
pub use schemars;
pub use serde;
pub use serde_json;

/// Everything a node author needs, in one import.
pub mod prelude {
    #[cfg(feature = "_sql-tools")]
    pub use crate::db_tool;
    pub use crate::description::NodeDescription;
    pub use crate::history::ChatHistory;
    pub use crate::memory::Memory;
    pub use crate::node::{Execute, ExecuteContext, Supply, SupplyContext, SupplyData, ToolNode};
    #[cfg(feature = "_sql-tools")]
    pub use crate::sql::{DbTool, ToolOptions};
    pub use crate::vector_store::{DocumentStore, Filter, VectorStore, VectorStoreOptions};
    pub use crate::{Catalog, Node, NodeParams, Params, ai_node, chat_history, vector_store};
}

/// The guides: how to use each part of nodekit, with examples.
///
/// Each page is a Markdown file under `runtime/docs/`. Their code needs the
/// built-in nodes of `nodekit-nodes`, which depends on this crate, so it is
/// compiled and run as doc tests of that crate.
pub mod guide {
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/authoring.md")]
    pub mod authoring {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/models.md")]
    pub mod models {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/memory.md")]
    pub mod memory {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/sql_tools.md")]
    pub mod sql_tools {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/agent_memory.md")]
    pub mod agent_memory {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/vector_stores.md")]
    pub mod vector_stores {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/n8n.md")]
    pub mod n8n {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/mcp.md")]
    pub mod mcp {}
    #[cfg(not(doctest))]
    #[doc = include_str!("../docs/serve.md")]
    pub mod serve {}
}
