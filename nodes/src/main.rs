//! The `nodekit` command: lists and inspects the nodes linked into it.
//!
//! JSON goes to standard output; errors go to standard error with a
//! non-zero exit status (1 for a failed command, 2 for wrong usage).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use nodekit::Catalog;
use nodekit::from_ai;
use nodekit::tool::NodeTool;
use serde_json::Value;

/// Inspect the n8n-style nodes registered in this program.
#[derive(Parser, Debug)]
#[command(name = "nodekit", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print every node description as n8n's `types/nodes.json` array, sorted by name.
    Catalog {
        /// Write the catalog to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print one node's description.
    Describe {
        /// Node name: `package.nodeName`, or `nodeName` when it is unambiguous.
        node: String,
    },
    /// Print the tool definition (OpenAI function form) a node gets with these parameters.
    ToolSchema {
        /// Node name: `package.nodeName`, or `nodeName` when it is unambiguous.
        node: String,
        /// The node's parameter values: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
        /// The node's name in the workflow, which becomes the tool name (default: the node type's default name).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// The node's `typeVersion` (default: the version a new node gets).
        #[arg(long, value_name = "VERSION")]
        node_version: Option<f64>,
    },
    /// Print the argument schema that the `$fromAI` calls inside any parameter JSON produce.
    FromAi {
        /// Parameter JSON: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long, value_name = "JSON")]
        params: String,
    },
}

fn main() -> ExitCode {
    nodekit_nodes::link();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(output) => {
            if let Some(text) = output {
                println!("{text}");
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("nodekit: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one command; `Some(text)` is printed on standard output.
fn run(command: Command) -> Result<Option<String>, String> {
    let catalog = Catalog::global();
    catalog.check_unique().map_err(|e| e.to_string())?;
    match command {
        Command::Catalog { out } => {
            let text = pretty(&catalog.to_nodes_json());
            match out {
                Some(path) => {
                    std::fs::write(&path, text + "\n")
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    Ok(None)
                }
                None => Ok(Some(text)),
            }
        }
        Command::Describe { node } => {
            let entry = catalog.find(&node).map_err(|e| e.to_string())?;
            Ok(Some(pretty(&entry.to_json())))
        }
        Command::ToolSchema {
            node,
            params,
            name,
            node_version,
        } => {
            let entry = catalog.find(&node).map_err(|e| e.to_string())?;
            let params = read_json(&params, "--params")?;
            let description = entry.description;
            let name = name.unwrap_or_else(|| description.defaults.name.clone());
            let version = node_version.unwrap_or_else(|| description.version_for_new_nodes());
            if !description.version.all().contains(&version) {
                let versions: Vec<String> = description
                    .version
                    .all()
                    .into_iter()
                    .map(|v| nodekit::description::number_to_json(v).to_string())
                    .collect();
                return Err(format!(
                    "node `{}` has no version {version}; its versions: {}",
                    entry.full_name(),
                    versions.join(", ")
                ));
            }
            let tool = NodeTool::with_version(description, &name, &params, version)
                .map_err(|e| e.to_string())?;
            Ok(Some(pretty(&tool.definition().to_openai())))
        }
        Command::FromAi { params } => {
            let params = read_json(&params, "--params")?;
            let calls = from_ai::collect_calls(&params).map_err(|e| e.to_string())?;
            Ok(Some(pretty(&from_ai::arguments_schema(&calls))))
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values always serialise")
}

/// Reads JSON given inline, as `@FILE`, or as `-` (standard input).
fn read_json(arg: &str, what: &str) -> Result<Value, String> {
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read {what} from standard input: {e}"))?;
        s
    } else if let Some(path) = arg.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} file {path}: {e}"))?
    } else {
        arg.to_owned()
    };
    serde_json::from_str(&text).map_err(|e| {
        nodekit::Error::Json {
            what: what.to_owned(),
            source: e,
        }
        .to_string()
    })
}
