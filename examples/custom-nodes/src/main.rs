//! Prints this crate's catalog, then the tool an LLM sees for the weather
//! node and the parameters its arguments produce.
//!
//! Run with `cargo run -p custom-nodes`.

use custom_nodes::WeatherForecastTool;
use nodekit::prelude::*;
use nodekit::serde_json::{self, json};
use nodekit::tool::NodeTool;

fn main() -> Result<(), nodekit::Error> {
    // The catalog holds exactly the nodes linked into this binary: this
    // crate's two nodes (registered through `inventory` by `#[ai_node]`).
    let catalog = Catalog::global();
    println!(
        "{}",
        serde_json::to_string_pretty(&catalog.to_nodes_json()).unwrap_or_default()
    );

    let entry = catalog.find("n8n-nodes-weather.weatherForecastTool")?;
    let tool = NodeTool::new(
        entry.description,
        "Weather Forecast",
        &json!({"units": "imperial"}),
    )?;
    println!(
        "{}",
        serde_json::to_string_pretty(&tool.definition().to_openai()).unwrap_or_default()
    );

    let node: WeatherForecastTool = tool.instantiate(&json!({"city": "Berlin"}))?;
    println!("{node:?}");
    Ok(())
}
