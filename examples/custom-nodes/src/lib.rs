//! Nodes of an imaginary `n8n-nodes-weather` package, written the way an
//! outside author writes them: only `nodekit` is needed.

use nodekit::prelude::*;
use serde::{Deserialize, Serialize};

/// Units for temperatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// Degrees Celsius.
    #[schemars(title = "Celsius")]
    Metric,
    /// Degrees Fahrenheit.
    #[schemars(title = "Fahrenheit")]
    Imperial,
}

/// Get the weather forecast for a city.
///
/// An agent calls this tool with the city and the number of days it wants.
#[ai_node(
    name = "weatherForecastTool",
    display_name = "Weather Forecast",
    output = tool,
    credentials = ["weatherApi"],
    package = "n8n-nodes-weather"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct WeatherForecastTool {
    /// The city to forecast, e.g. "Berlin".
    #[from_ai]
    pub city: String,
    /// How many days ahead, 1 to 7.
    #[from_ai(default = 3)]
    #[param(min = 1, max = 7)]
    pub days: u32,
    /// Units the temperatures are given in.
    #[param(default = Units::Metric)]
    pub units: Units,
}

/// Where the session id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum SessionSource {
    /// The `sessionId` field of the incoming item.
    #[serde(rename = "fromInput")]
    #[schemars(title = "Connected Chat Trigger Node")]
    FromInput,
    /// An expression or a fixed text given below.
    #[serde(rename = "customKey")]
    #[schemars(title = "Define below")]
    CustomKey,
}

/// Remember the conversation in a weather-station log.
#[ai_node(name = "memoryWeatherLog", display_name = "Weather Log Memory", output = memory, package = "n8n-nodes-weather")]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryWeatherLog {
    /// Where the key that separates conversations comes from.
    #[param(display_name = "Session ID", default = SessionSource::FromInput)]
    pub session_id_type: SessionSource,
    /// The key that separates conversations.
    #[param(
        name = "sessionKey",
        display_name = "Key",
        default = "={{ $json.sessionId }}",
        display_options(show(session_id_type = [SessionSource::CustomKey]))
    )]
    pub session_key: String,
    /// How many past messages the model receives.
    #[param(default = 10, min = 1)]
    pub context_window_length: u32,
}
