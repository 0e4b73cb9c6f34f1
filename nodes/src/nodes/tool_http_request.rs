//! An HTTP request tool: the model fills the URL (and a body) through `$fromAI`.
//!
//! Like n8n's HTTP Request tool it reaches whatever address the model asks
//! for; give it a fixed base URL in the workflow when that matters.

use std::time::Duration;

use nodekit::prelude::*;
use serde::{Deserialize, Serialize};

/// The HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Method {
    /// Read.
    #[serde(rename = "GET")]
    Get,
    /// Send a JSON body.
    #[serde(rename = "POST")]
    Post,
}

/// Most bytes of a response body handed to the model.
const MAX_BODY_BYTES: usize = 256 * 1024;

/// Calls an HTTP endpoint and returns its response body to the agent.
#[ai_node(name = "toolHttpRequest", display_name = "HTTP Request Tool", output = tool, icon = "fa:globe")]
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHttpRequest {
    /// What the model is told the tool does.
    #[param(
        name = "toolDescription",
        default = "Fetches a URL and returns the response body.",
        rows = 2
    )]
    pub tool_description: String,
    /// The method.
    #[param(default = Method::Get)]
    pub method: Method,
    /// The URL to call.
    #[from_ai(description = "The URL to request.")]
    pub url: String,
    /// JSON body for POST.
    #[param(json, default = "{}", display_options(show(method = [Method::Post])))]
    pub body: Option<serde_json::Value>,
    /// Seconds to wait for the answer.
    #[param(default = 30, min = 1, max = 600)]
    pub timeout: u32,
}

impl ToolNode for ToolHttpRequest {
    async fn call(self, ctx: &SupplyContext) -> nodekit::Result<serde_json::Value> {
        let failed = |what: String| nodekit::Error::NodeFailed {
            node: ctx.node_name().to_owned(),
            message: format!("HTTP request failed: {what}"),
        };
        // One client for every call: its connections are kept between calls.
        let client = nodekit::model::shared_http_client(None).map_err(|e| failed(e.to_string()))?;
        let request = match self.method {
            Method::Get => client.get(&self.url),
            Method::Post => client.post(&self.url).json(&self.body.unwrap_or_default()),
        }
        .timeout(Duration::from_secs(self.timeout.into()));
        let mut response = request
            .send()
            .await
            .map_err(|e| failed(e.without_url().to_string()))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| failed(e.without_url().to_string()))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_BODY_BYTES {
                body.truncate(MAX_BODY_BYTES);
                body.extend_from_slice(b"\n[response truncated]");
                break;
            }
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        if !status.is_success() {
            return Err(failed(format!(
                "status {status}: {}",
                text.chars().take(500).collect::<String>()
            )));
        }
        Ok(serde_json::Value::String(text))
    }
}
