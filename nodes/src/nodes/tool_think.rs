//! n8n's Think tool: a place for the model to reason; it returns the thought unchanged.

use nodekit::prelude::*;

/// Lets the agent think out loud between other tool calls.
#[ai_node(name = "toolThink", display_name = "Think Tool", output = tool, icon = "fa:brain")]
#[derive(Debug, Clone, PartialEq)]
pub struct ToolThink {
    /// What the model is told the tool is for.
    #[param(
        display_name = "Think Tool Description",
        name = "description",
        default = "Use the tool to think about something. It will not obtain new information or change the database, but just append the thought to the log. Use it when complex reasoning or some cache memory is needed.",
        rows = 3
    )]
    pub tool_description: String,
    /// The thought.
    #[from_ai(description = "A thought to think about.")]
    pub thought: String,
}

impl ToolNode for ToolThink {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<serde_json::Value> {
        Ok(serde_json::Value::String(self.thought))
    }
}
