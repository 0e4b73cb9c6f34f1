//! n8n's AI Agent: a tools agent over the connected chat model, memory and tools.

use std::sync::Arc;

use nodekit::agent::{Agent as ToolsAgent, AgentOptions as LoopOptions};
use nodekit::model::FallbackModel;
use nodekit::prelude::*;
use serde_json::json;

/// Agent settings, n8n's "Options" collection.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct AgentOptions {
    /// Instructions the model gets before the conversation.
    #[param(default = "You are a helpful assistant", rows = 6)]
    pub system_message: String,
    /// The most model calls for one answer.
    #[param(default = 10, min = 1)]
    pub max_iterations: u32,
    /// Include every tool call in the output.
    #[param(default = false)]
    pub return_intermediate_steps: bool,
    /// A JSON Schema the answer must follow (structured output); empty for text.
    #[param(json, default = "")]
    pub output_schema: Option<serde_json::Value>,
}

/// Answers with a chat model that can call tools and remember the conversation.
#[ai_node(
    name = "agent",
    display_name = "AI Agent",
    output = agent,
    icon = "fa:robot",
    version = [1],
    subtitle = "Tools Agent"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The user's message.
    #[param(
        display_name = "Prompt (User Message)",
        default = "={{ $json.chatInput }}",
        required,
        rows = 2
    )]
    pub text: String,
    /// Use a second chat model, connected to the "Fallback Model" input,
    /// when the first fails after its retries.
    #[param(
        display_name = "Enable Fallback Model",
        default = false,
        no_data_expression
    )]
    pub needs_fallback: bool,
    /// Additional settings.
    #[param(collection, placeholder = "Add Option")]
    pub options: AgentOptions,
}

impl Execute for Agent {
    async fn execute(self, ctx: &ExecuteContext) -> nodekit::Result<Vec<serde_json::Value>> {
        let options = LoopOptions {
            system_message: self.options.system_message.clone(),
            max_iterations: self.options.max_iterations as usize,
            output_schema: self.options.output_schema.clone().filter(|s| !s.is_null()),
            cancel: None,
        };
        let mut models = ctx.connected_chat_models().into_iter();
        let model = models.next().ok_or_else(|| nodekit::Error::MissingInput {
            node: ctx.node_name().to_owned(),
            input: "a chat model (ai_languageModel)".into(),
        })?;
        let model = if self.needs_fallback {
            let fallback = models.next().ok_or_else(|| nodekit::Error::MissingInput {
                node: ctx.node_name().to_owned(),
                input:
                    "a fallback model (a second ai_languageModel), or \"Enable Fallback Model\" off"
                        .into(),
            })?;
            Arc::new(FallbackModel::new(model, vec![fallback]))
        } else {
            model
        };
        let mut agent = ToolsAgent::new(model, ctx.connected_tools(), options)?;
        if let Some(memory) = ctx.connected_memory() {
            agent = agent.with_memory(memory);
        }
        let result = agent.run(&self.text, ctx.events()).await?;
        for warning in &result.warnings {
            ctx.log().warn(ctx.node_name(), warning);
        }
        let mut item = json!({"output": result.output});
        if self.options.return_intermediate_steps {
            item["intermediateSteps"] =
                serde_json::to_value(&result.intermediate_steps).unwrap_or_default();
        }
        Ok(vec![item])
    }
}
