//! The thread's plan: goal, current phase, iteration count and steps with
//! statuses. The agent writes it with the `updatePlan` tool (whole plan at
//! once); it is stored per thread, so it survives reconnects and restarts,
//! and it goes to the model with every request.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use nodekit_core::tool::ToolDefinition;

/// The name of the tool the agent calls.
pub const TOOL_NAME: &str = "updatePlan";
/// Most steps in a plan.
pub const MAX_STEPS: usize = 100;
/// Longest text of a goal, phase or step.
pub const MAX_TEXT: usize = 2000;

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
    /// Tried and failed.
    Failed,
    /// Not needed any more.
    Skipped,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// What the step does.
    pub title: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// A thread's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plan {
    /// What the plan achieves.
    pub goal: String,
    /// The phase the work is in.
    #[serde(default)]
    pub current_phase: String,
    /// How many times the loop has gone round.
    #[serde(default)]
    pub iteration: u32,
    /// The steps, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
}

impl Plan {
    /// Reads and checks a plan the agent sent; the error is written for the model.
    pub fn from_args(args: &Value) -> Result<Plan, String> {
        let plan: Plan = serde_json::from_value(args.clone()).map_err(|e| {
            format!("the plan does not fit the schema: {e}. Send goal, currentPhase, iteration and steps [{{title, status}}]")
        })?;
        if plan.goal.trim().is_empty() {
            return Err("the plan needs a goal".into());
        }
        if plan.steps.len() > MAX_STEPS {
            return Err(format!("a plan has at most {MAX_STEPS} steps"));
        }
        let long = std::iter::once(&plan.goal)
            .chain(std::iter::once(&plan.current_phase))
            .chain(plan.steps.iter().map(|s| &s.title))
            .any(|t| t.chars().count() > MAX_TEXT);
        if long {
            return Err(format!(
                "goal, phase and step titles have at most {MAX_TEXT} characters"
            ));
        }
        Ok(plan)
    }

    /// The plan as the model sees it.
    pub fn system_text(&self) -> String {
        let mut out = format!(
            "CURRENT PLAN (update it with {TOOL_NAME} as you progress)\nGoal: {}\nPhase: {}\nIteration: {}\n",
            self.goal, self.current_phase, self.iteration
        );
        for (i, step) in self.steps.iter().enumerate() {
            let status = serde_json::to_value(step.status).unwrap_or_default();
            out.push_str(&format!(
                "{}. [{}] {}\n",
                i + 1,
                status.as_str().unwrap_or(""),
                step.title
            ));
        }
        out
    }
}

/// The `updatePlan` tool of one thread: checks the plan, then stores it.
pub fn tool(
    store: super::Store,
    resource: impl Into<String>,
    thread: impl Into<String>,
) -> nodekit_core::tool::FnTool {
    let (resource, thread) = (resource.into(), thread.into());
    nodekit_core::tool::FnTool::new(tool_definition(), move |args: Value| {
        let (store, resource, thread) = (store.clone(), resource.clone(), thread.clone());
        async move {
            let plan = match Plan::from_args(&args) {
                Ok(plan) => plan,
                Err(why) => return Ok(json!({"success": false, "error": why})),
            };
            let value = serde_json::to_value(&plan).expect("a plan serialises");
            store.set_plan(&resource, &thread, value).await?;
            Ok(json!({"success": true}))
        }
    })
}

/// The definition of the `updatePlan` tool.
pub fn tool_definition() -> ToolDefinition {
    ToolDefinition {
        name: TOOL_NAME.into(),
        description: "Record or update the plan of the current task: the goal, the current \
            phase, the iteration count and every step with its status. Send the whole plan; \
            it replaces the previous one."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "goal": {"type": "string"},
                "currentPhase": {"type": "string"},
                "iteration": {"type": "integer", "minimum": 0},
                "steps": {
                    "type": "array",
                    "maxItems": MAX_STEPS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done", "failed", "skipped"]}
                        },
                        "required": ["title", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["goal", "steps"],
            "additionalProperties": false
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_checked_and_rendered() {
        let plan = Plan::from_args(&json!({
            "goal": "Ship wf-123", "currentPhase": "build", "iteration": 2,
            "steps": [{"title": "Create trigger", "status": "done"}, {"title": "Test", "status": "in_progress"}]
        }))
        .unwrap();
        assert_eq!(plan.steps[1].status, StepStatus::InProgress);
        let text = plan.system_text();
        assert!(
            text.contains("Goal: Ship wf-123") && text.contains("2. [in_progress] Test"),
            "{text}"
        );
        for bad in [
            json!({"goal": "", "steps": []}),
            json!({"goal": "g", "steps": [{"title": "t", "status": "maybe"}]}),
            json!({"goal": "g", "steps": [], "extra": 1}),
            json!({"goal": "x".repeat(MAX_TEXT + 1), "steps": []}),
        ] {
            assert!(Plan::from_args(&bad).is_err(), "{bad}");
        }
    }
}
