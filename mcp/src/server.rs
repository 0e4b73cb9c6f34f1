//! Tools served to MCP clients: [`McpServer`], rmcp's server handler over
//! any set of [`Tool`]s.

use std::borrow::Cow;
use std::sync::Arc;

use indexmap::IndexMap;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio_util::task::TaskTracker;

use crate::McpError;
use nodekit_core::error::{Result, shorten};
use nodekit_core::tool::Tool;

/// Tools served over the Model Context Protocol.
///
/// Each tool is listed with the name, description and argument schema an
/// agent sends to a model, and called as an agent calls it: the same
/// argument check, the same answer. What a tool refuses reaches the client
/// as a tool result marked `isError`, not as a protocol error: an error
/// the tool returns, arguments that fail its schema, and an answer with
/// `"success": false` (the SQL tools' `errorType`, `reason` and
/// `suggestion`). A `notifications/cancelled` from the client, or the
/// client going away, cancels the running call: its future is dropped, so a
/// transaction it holds is rolled back.
///
/// Serve it with [`serve_stdio`](super::serve_stdio) or
/// [`serve_http`](super::serve_http).
#[derive(Clone, Debug)]
pub struct McpServer {
    inner: Arc<Inner>,
    info: Implementation,
}

#[derive(Debug)]
struct Inner {
    tools: IndexMap<String, (Arc<dyn Tool>, rmcp::model::Tool)>,
    /// The calls running, so that a session's end can wait for them to stop.
    calls: TaskTracker,
}

impl McpServer {
    /// Serves `tools`; their names must be unique, and there must be at least one.
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Result<McpServer> {
        let mut by_name = IndexMap::new();
        for tool in tools {
            let name = tool.definition().name.clone();
            if by_name.contains_key(&name) {
                return Err(McpError::DuplicateTool { name }.into());
            }
            let listed = listed(tool.as_ref());
            by_name.insert(name, (tool, listed));
        }
        if by_name.is_empty() {
            return Err(McpError::NoTools {
                hint: String::new(),
            }
            .into());
        }
        Ok(McpServer {
            inner: Arc::new(Inner {
                tools: by_name,
                calls: TaskTracker::new(),
            }),
            info: Implementation::new("nodekit", env!("CARGO_PKG_VERSION")),
        })
    }

    /// The same server, introducing itself to clients as `name` `version`
    /// (nodekit and its version by default).
    pub fn with_name(mut self, name: &str, version: &str) -> McpServer {
        self.info = Implementation::new(name, version);
        self
    }

    /// Waits, up to `within`, for the calls still running to end: those
    /// of a finished session are cancelled, and end at their next step.
    pub(super) async fn calls_ended(&self, within: std::time::Duration) {
        let calls = &self.inner.calls;
        calls.close();
        let _ = tokio::time::timeout(within, calls.wait()).await;
        calls.reopen();
    }

    /// The tools as clients list them.
    pub fn tools(&self) -> impl Iterator<Item = &rmcp::model::Tool> {
        self.inner.tools.values().map(|(_, listed)| listed)
    }
}

/// A tool as `tools/list` shows it. Every object schema in it, nested ones
/// too, has `properties`, and every array schema `items`: n8n's MCP client
/// (through Zod) reads one without them as "any value".
fn listed(tool: &dyn Tool) -> rmcp::model::Tool {
    let definition = tool.definition();
    let mut schema = match &definition.parameters {
        Value::Object(schema) => schema.clone(),
        _ => Map::new(),
    };
    schema
        .entry("type")
        .or_insert_with(|| Value::from("object"));
    complete(&mut schema);
    rmcp::model::Tool::new_with_raw(
        definition.name.clone(),
        Some(Cow::Owned(definition.description.clone())),
        Arc::new(schema),
    )
}

/// Gives `schema` and the schemas inside it what Zod's conversion needs
/// to read them as what they are: an object's `properties` (an object of
/// any keys is `{"properties": {}, "additionalProperties": true}`), an
/// array's `items`.
fn complete(schema: &mut Map<String, Value>) {
    let is = |schema: &Map<String, Value>, kind: &str| match schema.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => false,
    };
    if is(schema, "object") && !schema.contains_key("properties") {
        schema.insert("properties".into(), Value::Object(Map::new()));
        schema
            .entry("additionalProperties")
            .or_insert(Value::Bool(true));
    }
    if is(schema, "array") && !schema.contains_key("items") {
        schema.insert("items".into(), Value::Object(Map::new()));
    }
    for (key, value) in schema.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(children)) => {
                children.values_mut().for_each(complete_value);
            }
            ("items" | "additionalProperties" | "not", child) => complete_value(child),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(complete_value);
            }
            _ => {}
        }
    }
}

fn complete_value(value: &mut Value) {
    if let Value::Object(schema) = value {
        complete(schema);
    }
}

/// A tool's outcome as a `tools/call` result, with the text an agent
/// would send to its model.
fn call_result(outcome: Result<Value>) -> CallToolResult {
    match outcome {
        Ok(Value::String(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Ok(value) => {
            let refused = value.get("success") == Some(&Value::Bool(false));
            // Straight into bytes: `to_string` goes through `fmt::Display`, a
            // third slower on a thousand rows.
            let text = serde_json::to_string(&value).unwrap_or_default();
            let content = vec![ContentBlock::text(text)];
            if refused {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            }
        }
        Err(e) => {
            // The whole text for the server's log; the client's leaves a
            // model provider's message out (`Error::client_text`).
            tracing::warn!(error = %e, "mcp: a tool call failed");
            CallToolResult::error(vec![ContentBlock::text(format!(
                "Error: {}",
                e.client_text()
            ))])
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.info.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools().cloned().collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.inner.tools.get(name).map(|(_, listed)| listed.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let Some((tool, _)) = self.inner.tools.get(request.name.as_ref()) else {
            let names: Vec<&str> = self.inner.tools.keys().map(String::as_str).collect();
            // The protocol's answer to an unknown tool: invalid params.
            return Err(ErrorData::invalid_params(
                format!(
                    "there is no tool named `{}`; the tools are: {}",
                    shorten(&request.name, 200),
                    names.join(", ")
                ),
                None,
            ));
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let call = async {
            tokio::select! {
                biased;
                // Dropping the call cancels it; the client no longer waits for an answer.
                _ = context.ct.cancelled() => Err(ErrorData::internal_error("the call was cancelled", None)),
                outcome = tool.call(args) => Ok(call_result(outcome).into()),
            }
        };
        self.inner.calls.track_future(call).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_objects_get_properties_and_arrays_items() {
        let mut schema = json!({"type": "object", "properties": {
            "rows": {"anyOf": [{"type": "object"}, {"type": "array"}]},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
        }});
        complete_value(&mut schema);
        assert_eq!(
            schema["properties"]["rows"]["anyOf"],
            json!([
                {"type": "object", "properties": {}, "additionalProperties": true},
                {"type": "array", "items": {}},
            ])
        );
        assert_eq!(
            schema["properties"]["tags"]["items"]["properties"],
            json!({"a": {"type": "string"}}),
            "what is there stays"
        );
    }
}
