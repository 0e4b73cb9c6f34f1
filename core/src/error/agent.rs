//! Why an agent run did not finish: [`AgentError`].

/// The tools agent could not finish its run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Two of the agent's tools have the same name, so the model could not
    /// tell them apart.
    #[error("agent: two tools are both named `{name}`; rename one of the tool nodes")]
    DuplicateTool {
        /// The name, shortened.
        name: String,
    },
    /// The model's final answer still did not follow the output schema
    /// after it was asked to fix it.
    #[error("agent: the final answer does not follow the output schema: {problem}")]
    OutputSchema {
        /// What does not fit.
        problem: String,
    },
    /// The model was still calling tools after the last iteration allowed.
    #[error("agent: Agent stopped due to max iterations ({limit}); the model kept calling tools")]
    MaxIterations {
        /// The iteration limit of the run.
        limit: usize,
    },
    /// The run's cancellation token fired.
    #[error("agent: the run was cancelled")]
    Cancelled,
}
