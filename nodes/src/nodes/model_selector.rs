//! n8n's Model Selector (`modelSelector`): supplies one of the chat models
//! connected to it, chosen by rules on the item.

use nodekit::prelude::*;
use nodekit::workflow::Filter;

/// One rule: its model, when its conditions hold.
#[derive(Debug, Clone, PartialEq, NodeParams)]
pub struct ModelRule {
    /// The model input the rule picks, from 1.
    #[param(display_name = "Model", default = 1, min = 1, required)]
    pub model_index: u32,
    /// When the rule applies (n8n's conditions; none always applies).
    #[param(kind = "filter", placeholder = "Add Condition")]
    pub conditions: Option<serde_json::Value>,
}

/// Chooses which connected chat model answers, by rules on the input.
#[ai_node(
    name = "modelSelector",
    display_name = "Model Selector",
    output = model_selector,
    icon = "fa:map-signs"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSelector {
    /// How many chat models are connected.
    #[param(
        display_name = "Number of Inputs",
        default = 2,
        min = 2,
        max = 10,
        no_data_expression
    )]
    pub number_inputs: u32,
    /// The rules, tried in order: the first whose conditions hold picks its model.
    #[param(fixed_collection = "rule", placeholder = "Add Rule")]
    pub rules: Vec<ModelRule>,
}

impl SupplyData for ModelSelector {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let failed = |message: String| nodekit::Error::NodeFailed {
            node: ctx.node_name().to_owned(),
            message,
        };
        let models = ctx.connected_chat_models();
        if models.is_empty() {
            return Err(nodekit::Error::MissingInput {
                node: ctx.node_name().to_owned(),
                input: "a chat model (ai_languageModel)".into(),
            });
        }
        if self.rules.is_empty() {
            return Err(failed("no rules are defined".into()));
        }
        for (i, rule) in self.rules.iter().enumerate() {
            let index = rule.model_index as usize;
            let Some(model) = index.checked_sub(1).and_then(|i| models.get(i)) else {
                return Err(failed(format!(
                    "rule {}: model {index} is not connected ({} are)",
                    i + 1,
                    models.len()
                )));
            };
            let filter: Filter = match &rule.conditions {
                Some(conditions) => serde_json::from_value(conditions.clone()).map_err(|e| {
                    failed(format!("rule {}: the conditions are not n8n's: {e}", i + 1))
                })?,
                None => Filter::default(),
            };
            if filter
                .matches()
                .map_err(|e| failed(format!("rule {}: {e}", i + 1)))?
            {
                return Ok(Supply::ChatModel(model.clone()));
            }
        }
        Err(failed("no rule matches".into()))
    }
}
