//! An MCP server of one's own tools, in a few lines: a tool node declared
//! with `#[ai_node]`, served to MCP clients (Claude Desktop, Cursor, n8n's
//! MCP Client Tool) over standard input and output, or over Streamable
//! HTTP with `--http ADDR`.
//!
//! ```text
//! cargo run -p mcp-server                        # stdio
//! cargo run -p mcp-server -- --http 127.0.0.1:8808  # http://127.0.0.1:8808/mcp
//! ```

use std::process::ExitCode;

use nodekit::mcp::{HttpOptions, McpServer};
use nodekit::prelude::*;
use nodekit::serde_json::{Value, json};

/// Converts a temperature between degrees Celsius and Fahrenheit.
#[ai_node(name = "temperatureTool", display_name = "Convert Temperature", output = tool, package = "mcp-example")]
pub struct Temperature {
    /// The temperature to convert.
    #[from_ai]
    #[param(min = -459.67, max = 10000)]
    pub value: f64,
    /// The unit of `value`: "C" or "F".
    #[from_ai]
    pub unit: String,
}

impl ToolNode for Temperature {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<Value> {
        let (value, unit) = match self.unit.trim() {
            "C" | "c" => (self.value * 9.0 / 5.0 + 32.0, "F"),
            "F" | "f" => ((self.value - 32.0) * 5.0 / 9.0, "C"),
            other => {
                // A refusal the client sees as a tool error (`success: false`).
                return Ok(
                    json!({"success": false, "error": format!("unknown unit {other:?}: use \"C\" or \"F\"")}),
                );
            }
        };
        Ok(json!({"value": (value * 100.0).round() / 100.0, "unit": unit}))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> nodekit::Result<()> {
    // The node as a workflow would configure it: no fixed parameters.
    let tools = Catalog::global()
        .find("mcp-example.temperatureTool")?
        .tools("convert_temperature", &json!({}), None, Default::default())
        .await?;
    let server = McpServer::new(tools)?.with_name("mcp-example", env!("CARGO_PKG_VERSION"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await,
        [flag, addr] if flag == "--http" => {
            let listener = nodekit::mcp::bind(addr).await?;
            if let Ok(local) = listener.local_addr() {
                eprintln!("mcp-server: serving at http://{local}/mcp");
            }
            nodekit::mcp::serve_http(server, listener, HttpOptions::default()).await
        }
        _ => Err(nodekit::Error::InvalidSetting {
            name: "arguments".into(),
            value: args.join(" "),
            expected: "nothing (stdio), or `--http ADDR`".into(),
        }),
    }
}
