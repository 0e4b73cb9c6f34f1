use nodekit::prelude::*;

/// Forecasts.
#[ai_node(output = tool)]
pub struct Forecast {
    /// A default above `max`.
    #[param(default = 7, max = 6)]
    days: u32,
    /// A default below `min`.
    #[param(default = -0.5, min = 0.0, max = 1.0)]
    ratio: f64,
    /// The LLM's default above the parameter's `max`.
    #[from_ai(default = 10)]
    #[param(min = 1, max = 7)]
    ahead: u32,
    /// The LLM's default below the parameter's `min`.
    #[from_ai(default = 0)]
    #[param(min = 1)]
    count: i32,
    /// Defaults on the bounds are fine.
    #[param(default = 6, min = 1, max = 6)]
    edge: u32,
    /// So is one the LLM leaves in range.
    #[from_ai(default = 1)]
    #[param(min = 1, max = 7)]
    first: u32,
}

fn main() {}
