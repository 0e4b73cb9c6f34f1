//! The global node registry (through `inventory`) and the catalog built from it.
//!
//! `#[ai_node]` submits a registration for each node. Registrations are
//! collected at link time: a crate's nodes exist in a program only if its
//! final binary links that crate. A library that is a dependency but whose
//! items are never used may be dropped by the linker; call one of its
//! functions or use one of its types from the binary to keep its nodes (the
//! `nodekit` binary calls `nodekit_nodes::link()` for this).

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::description::NodeDescription;
use crate::error::{CatalogError, Error, Result};
use crate::node::{Credentials, NodeRuntime, SupplyContext};
use crate::run_log::RunLog;
use crate::tool::Tool;

/// What generated code submits: reached through `nodekit::__private` only.
pub(crate) mod registration {
    use crate::description::NodeDescription;
    use crate::node::NodeRuntime;

    /// One registered node type.
    #[derive(Debug)]
    pub struct Registration {
        pub(crate) package: &'static str,
        pub(crate) describe: fn() -> &'static NodeDescription,
        pub(crate) runtime: fn() -> NodeRuntime,
    }

    impl Registration {
        /// Registers a node of `package` (n8n package name) described by `describe`.
        pub const fn new(
            package: &'static str,
            describe: fn() -> &'static NodeDescription,
        ) -> Self {
            Registration {
                package,
                describe,
                runtime: NodeRuntime::default_fn,
            }
        }

        /// The same registration with run-time entry points.
        pub const fn with_runtime(mut self, runtime: fn() -> NodeRuntime) -> Self {
            self.runtime = runtime;
            self
        }
    }
}

use registration::Registration;

inventory::collect!(Registration);

/// A node of the catalog.
#[derive(Debug, Clone, Copy)]
pub struct CatalogEntry {
    /// The n8n package the node belongs to.
    pub package: &'static str,
    /// Its description (with the bare node name).
    pub description: &'static NodeDescription,
    /// What it can do at run time.
    pub runtime: NodeRuntime,
}

impl CatalogEntry {
    /// The catalog name, `<package>.<nodeName>`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.package, self.description.name)
    }

    /// The node's parameters as its run-time entry points receive them: the
    /// workflow's `values` with the declared defaults filled in and the
    /// parameters that `displayOptions` hide dropped, at `version` (the
    /// node's `typeVersion`; `None`: the version a new node gets). Returns
    /// them with the version used. Every runner (workflows, `tool-call`,
    /// the n8n bridge) prepares parameters here, once.
    pub fn parameters_at(
        &self,
        node_name: &str,
        values: &Value,
        version: Option<f64>,
    ) -> Result<(Value, f64)> {
        let version = version.unwrap_or_else(|| self.description.version_for_new_nodes());
        let values = crate::params::parameter_object(values, node_name)?;
        let filled = crate::params::with_defaults(&self.description.properties, &values, version);
        Ok((Value::Object(filled), version))
    }

    /// The tools of this tool node (one, or an MCP client's several),
    /// supplied outside a workflow, as node `node_name` with
    /// the workflow's parameter `values` (defaults filled in at `version`,
    /// as [`CatalogEntry::parameters_at`]) and `credentials` by type: what
    /// an agent, the `tool-call` command or an MCP server calls. Its calls
    /// log nowhere.
    ///
    /// ```
    /// use nodekit::prelude::*;
    /// use nodekit::serde_json::json;
    ///
    /// /// Says hello to someone.
    /// #[ai_node(name = "helloTool", output = tool, package = "docs")]
    /// pub struct Hello {
    ///     /// Who to greet.
    ///     #[from_ai]
    ///     pub who: String,
    /// }
    ///
    /// impl ToolNode for Hello {
    ///     async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<nodekit::serde_json::Value> {
    ///         Ok(json!(format!("Hello, {}!", self.who)))
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> nodekit::Result<()> {
    /// let entry = Catalog::global().find("docs.helloTool")?;
    /// let tools = entry.tools("Greeter", &json!({}), None, Default::default()).await?;
    /// let [tool] = tools.as_slice() else { unreachable!("one node, one tool") };
    /// assert_eq!(tool.definition().name, "Greeter");
    /// assert_eq!(tool.call(json!({"who": "Ada"})).await?, json!("Hello, Ada!"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn tools(
        &self,
        node_name: &str,
        values: &Value,
        version: Option<f64>,
        credentials: Credentials,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        let supply = self.runtime.supply.ok_or_else(|| Error::NotATool {
            node: node_name.to_owned(),
            supplies: "nothing".into(),
        })?;
        let (params, version) = self.parameters_at(node_name, values, version)?;
        let ctx = SupplyContext::new(
            node_name,
            Arc::new(credentials),
            Value::Null,
            RunLog::per_call(),
        )
        .with_type_version(version);
        ctx.supply(supply, params).await?.into_tools(node_name)
    }

    /// The description as n8n lists it in `types/nodes.json`: with the full name.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self.description).unwrap_or(Value::Null);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("name".into(), Value::String(self.full_name()));
        }
        v
    }
}

/// Every node registered in this program, sorted by catalog name.
///
/// ```
/// use nodekit::prelude::*;
///
/// /// Looks a word up.
/// #[ai_node(name = "lookupTool", output = tool, package = "docs")]
/// pub struct Lookup {
///     /// The word.
///     #[from_ai]
///     pub word: String,
/// }
///
/// let catalog = Catalog::global();
/// let entry = catalog.find("lookupTool")?;                 // or "docs.lookupTool"
/// assert_eq!(entry.full_name(), "docs.lookupTool");
/// assert_eq!(entry.description.display_name, "Lookup");
/// let nodes_json = catalog.to_nodes_json();               // n8n's types/nodes.json
/// assert!(nodes_json.as_array().is_some_and(|nodes| !nodes.is_empty()));
/// # Ok::<(), nodekit::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Catalog {
    entries: Vec<CatalogEntry>,
}

impl Catalog {
    /// The catalog of this program's registered nodes (built once).
    pub fn global() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            Catalog::from_entries(
                inventory::iter::<Registration>
                    .into_iter()
                    .map(|r| CatalogEntry {
                        package: r.package,
                        description: (r.describe)(),
                        runtime: (r.runtime)(),
                    })
                    .collect(),
            )
        })
    }

    /// A catalog of the given entries, sorted by catalog name.
    pub fn from_entries(mut entries: Vec<CatalogEntry>) -> Self {
        entries.sort_by_cached_key(CatalogEntry::full_name);
        Catalog { entries }
    }

    /// The entries, sorted by catalog name.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }

    /// Fails when two nodes share a catalog name.
    pub fn check_unique(&self) -> Result<()> {
        for pair in self.entries.windows(2) {
            if pair[0].full_name() == pair[1].full_name() {
                return Err(CatalogError::DuplicateNode {
                    name: pair[0].full_name(),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Finds a node by catalog name (`pkg.nodeName`) or, when unambiguous, by bare name.
    pub fn find(&self, name: &str) -> Result<&CatalogEntry> {
        // `package.nodeName`, compared without building each full name.
        if let Some((package, node)) = name.rsplit_once('.')
            && let Some(e) = self
                .entries
                .iter()
                .find(|e| e.package == package && e.description.name == node)
        {
            return Ok(e);
        }
        // A workflow exported from n8n names a packaged node by the npm
        // package it was installed as (`n8n-nodes-shop.selectQueryTool`):
        // such a name is looked up by its node name alone.
        let bare_name = match name.rsplit_once('.') {
            Some((package, node))
                if package
                    .rsplit('/')
                    .next()
                    .is_some_and(|p| p.starts_with("n8n-nodes-")) =>
            {
                node
            }
            _ => name,
        };
        let bare: Vec<&CatalogEntry> = self
            .entries
            .iter()
            .filter(|e| e.description.name == bare_name)
            .collect();
        match bare.as_slice() {
            [one] => Ok(one),
            [] => {
                // Typos are judged on the node name, whatever package was typed.
                let typed = name.rsplit('.').next().unwrap_or(name);
                let best = nodekit_rules::closest(
                    typed,
                    self.entries.iter().map(|e| e.description.name.as_str()),
                )
                .and_then(|bare| self.entries.iter().find(|e| e.description.name == bare));
                let hint = match best {
                    Some(best) => format!(" (did you mean `{}`?)", best.full_name()),
                    None if self.entries.is_empty() => {
                        " (no node is registered in this program)".into()
                    }
                    None => " (run `nodekit catalog` to list the nodes)".into(),
                };
                Err(CatalogError::UnknownNode {
                    name: name.to_owned(),
                    hint,
                }
                .into())
            }
            many => Err(CatalogError::UnknownNode {
                name: name.to_owned(),
                hint: format!(
                    " (ambiguous: {}; use the full name)",
                    many.iter()
                        .map(|e| e.full_name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
            .into()),
        }
    }

    /// All descriptions as n8n's `types/nodes.json` array.
    pub fn to_nodes_json(&self) -> Value {
        Value::Array(self.entries.iter().map(CatalogEntry::to_json).collect())
    }
}
