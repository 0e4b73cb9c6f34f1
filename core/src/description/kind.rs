//! What kind of node a description is for, and the assembly of a
//! description from a node's facts: [`NodeKind`], [`NodeSpec`].

use serde_json::Value;

use super::{
    Codex, CodexResources, ConnectionType, Connections, CredentialDescription, DocumentationLink,
    NodeDefaults, NodeDescription, NodeProperty, NodeVersion, Number, PropertyType,
};

/// What kind of node a description is for (`#[ai_node(output = ...)]`):
/// a root node, an agent, or the sub-node that supplies a model, memory, a
/// tool and so on. It decides the node's inputs and outputs (n8n's
/// connection types, or n8n's expressions over the node's parameters for
/// the kinds whose connections depend on them) and its place in n8n's node
/// panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A root node with main input and output.
    Main,
    /// A root agent node: main in and out, plus model, memory and tool inputs.
    Agent,
    /// Supplies a chat model.
    ChatModel,
    /// Supplies conversation memory.
    Memory,
    /// Supplies a tool.
    Tool,
    /// Supplies an embeddings model.
    Embeddings,
    /// A vector store with n8n's operation modes (its `mode` parameter
    /// picks the connections): insert and get many are root nodes, the two
    /// retrieve modes supply a vector store or a tool.
    VectorStore,
    /// Supplies documents (n8n's document loaders).
    DocumentLoader,
    /// Supplies a text splitter.
    TextSplitter,
    /// Supplies one of the chat models connected to it, chosen by its
    /// rules (n8n's Model Selector): its `numberInputs` parameter gives the
    /// number of model inputs.
    ModelSelector,
}

/// The inputs of an agent: main, the chat model, a second one when its
/// `needsFallback` parameter is on (n8n's), memory and tools.
const AGENT_INPUTS: &str = "={{ ((parameters) => { \
const model = (displayName) => ({ displayName, type: 'ai_languageModel', required: true, maxConnections: 1 }); \
const inputs = ['main', model('Chat Model')]; \
if (parameters?.needsFallback === true) { inputs.push(model('Fallback Model')); } \
return [...inputs, { displayName: 'Memory', type: 'ai_memory', maxConnections: 1 }, { displayName: 'Tool', type: 'ai_tool' }]; \
})($parameter) }}";

/// The inputs of a model selector: `numberInputs` chat models (n8n's).
const MODEL_SELECTOR_INPUTS: &str = "={{ ((parameters) => Array.from({ length: parameters?.numberInputs || 2 }, \
(_, i) => ({ displayName: `Model ${i + 1}`, type: 'ai_languageModel', required: true, maxConnections: 1 })))($parameter) }}";

/// The inputs of a vector store node with n8n's modes (n8n's, without the reranker).
const VECTOR_STORE_INPUTS: &str = "={{ ((parameters) => { const mode = parameters?.mode; \
const inputs = [{ displayName: \"Embedding\", type: \"ai_embedding\", required: true, maxConnections: 1 }]; \
if (mode === 'retrieve-as-tool') { return inputs; } \
if (['insert', 'load', 'update'].includes(mode)) { inputs.push({ displayName: \"\", type: \"main\" }); } \
if (mode === 'insert') { inputs.push({ displayName: \"Document\", type: \"ai_document\", required: true, maxConnections: 1 }); } \
return inputs; })($parameter) }}";

/// The outputs of a vector store node with n8n's modes.
const VECTOR_STORE_OUTPUTS: &str = "={{ ((parameters) => { const mode = parameters?.mode ?? 'retrieve'; \
if (mode === 'retrieve-as-tool') { return [{ displayName: \"Tool\", type: \"ai_tool\" }]; } \
if (mode === 'retrieve') { return [{ displayName: \"Vector Store\", type: \"ai_vectorStore\" }]; } \
return [{ displayName: \"\", type: \"main\" }]; })($parameter) }}";

/// The inputs of a document loader: a text splitter unless its
/// `textSplittingMode` is `simple` (n8n's Default Data Loader).
const DOCUMENT_LOADER_INPUTS: &str = "={{ ((parameters) => { const mode = parameters?.textSplittingMode; \
return !mode || mode === 'custom' ? [{ displayName: 'Text Splitter', maxConnections: 1, type: 'ai_textSplitter', required: true }] : []; \
})($parameter) }}";

impl NodeKind {
    /// The inputs, the outputs and the output's label (empty for a root
    /// node's main output).
    pub fn connections(self) -> (Connections, Connections, &'static str) {
        use ConnectionType as C;
        let by = |expression: &str, possible: Vec<C>| Connections::ByParameters {
            expression: expression.to_owned(),
            possible,
        };
        match self {
            NodeKind::VectorStore => (
                by(
                    VECTOR_STORE_INPUTS,
                    vec![C::Embedding, C::Main, C::Document],
                ),
                by(VECTOR_STORE_OUTPUTS, vec![C::VectorStore, C::Tool, C::Main]),
                "",
            ),
            NodeKind::DocumentLoader => (
                by(DOCUMENT_LOADER_INPUTS, vec![C::TextSplitter]),
                vec![C::Document].into(),
                "Document",
            ),
            NodeKind::TextSplitter => {
                (vec![].into(), vec![C::TextSplitter].into(), "Text Splitter")
            }
            NodeKind::Agent => (
                by(
                    AGENT_INPUTS,
                    vec![C::Main, C::LanguageModel, C::Memory, C::Tool],
                ),
                vec![C::Main].into(),
                "",
            ),
            NodeKind::ModelSelector => (
                by(MODEL_SELECTOR_INPUTS, vec![C::LanguageModel]),
                vec![C::LanguageModel].into(),
                "Model",
            ),
            fixed => {
                let (inputs, outputs, name) = fixed.fixed_connections();
                (inputs.into(), outputs.into(), name)
            }
        }
    }

    fn fixed_connections(self) -> (Vec<ConnectionType>, Vec<ConnectionType>, &'static str) {
        use ConnectionType as C;
        match self {
            NodeKind::Main => (vec![C::Main], vec![C::Main], ""),
            NodeKind::ChatModel => (vec![], vec![C::LanguageModel], "Model"),
            NodeKind::Memory => (vec![], vec![C::Memory], "Memory"),
            NodeKind::Tool => (vec![], vec![C::Tool], "Tool"),
            NodeKind::Embeddings => (vec![], vec![C::Embedding], "Embeddings"),
            NodeKind::Agent
            | NodeKind::ModelSelector
            | NodeKind::VectorStore
            | NodeKind::DocumentLoader
            | NodeKind::TextSplitter => {
                unreachable!("connections() handles the parameter-dependent kinds")
            }
        }
    }

    /// n8n's node-panel placement for this kind of node: codex
    /// subcategories, e.g. `("AI", ["Memory"])`.
    pub fn subcategories(self) -> Vec<(&'static str, Vec<&'static str>)> {
        match self {
            NodeKind::Main => vec![],
            NodeKind::Agent => vec![("AI", vec!["Agents", "Root Nodes"])],
            NodeKind::ChatModel => vec![
                ("AI", vec!["Language Models", "Root Nodes"]),
                ("Language Models", vec!["Chat Models (Recommended)"]),
            ],
            NodeKind::Memory => vec![("AI", vec!["Memory"]), ("Memory", vec!["Other memories"])],
            NodeKind::Tool => vec![("AI", vec!["Tools"]), ("Tools", vec!["Other Tools"])],
            NodeKind::Embeddings => vec![("AI", vec!["Embeddings"])],
            NodeKind::VectorStore => vec![
                ("AI", vec!["Vector Stores", "Tools", "Root Nodes"]),
                ("Vector Stores", vec!["Other Vector Stores"]),
                ("Tools", vec!["Other Tools"]),
            ],
            NodeKind::DocumentLoader => vec![("AI", vec!["Document Loaders"])],
            NodeKind::TextSplitter => vec![("AI", vec!["Text Splitters"])],
            NodeKind::ModelSelector => vec![("AI", vec!["Language Models"])],
        }
    }
}

/// The node-level facts of a description, as `#[ai_node]` collects them;
/// [`NodeSpec::describe`] assembles the description.
#[derive(Debug)]
pub struct NodeSpec {
    /// Internal name.
    pub name: &'static str,
    /// Label.
    pub display_name: &'static str,
    /// What the node does.
    pub description: &'static str,
    /// Kind of node.
    pub kind: NodeKind,
    /// Versions served.
    pub versions: &'static [f64],
    /// Version new nodes get.
    pub default_version: Option<f64>,
    /// Required credential types.
    pub credentials: &'static [&'static str],
    /// Credential types the node can use but does not need (`"required": false`).
    pub optional_credentials: &'static [&'static str],
    /// A tool node that also takes a main input (optional context).
    pub main_input: bool,
    /// Icon reference.
    pub icon: Option<&'static str>,
    /// Editor groups.
    pub group: &'static [&'static str],
    /// Canvas subtitle.
    pub subtitle: Option<&'static str>,
    /// n8n may wrap the node as a tool.
    pub usable_as_tool: bool,
    /// Documentation page.
    pub documentation_url: Option<&'static str>,
    /// Notice shown above the parameters.
    pub notice: Option<&'static str>,
}

impl NodeSpec {
    /// The node's description with `properties` (a notice, if any, goes
    /// first).
    pub fn describe(&self, mut properties: Vec<NodeProperty>) -> NodeDescription {
        let spec = self;
        let (mut inputs, outputs, output_name) = spec.kind.connections();
        if spec.main_input
            && let Connections::Fixed(list) = &mut inputs
            && !list.contains(&ConnectionType::Main)
        {
            list.insert(0, ConnectionType::Main);
        }
        let subcategories = spec.kind.subcategories();
        let resources = spec.documentation_url.map(|url| CodexResources {
            primary_documentation: vec![DocumentationLink {
                url: url.to_owned(),
            }],
        });
        let codex = (!subcategories.is_empty() || resources.is_some()).then(|| Codex {
            categories: if subcategories.is_empty() {
                vec![]
            } else {
                vec!["AI".into()]
            },
            subcategories: subcategories
                .into_iter()
                .map(|(k, vs)| (k.to_owned(), vs.into_iter().map(str::to_owned).collect()))
                .collect(),
            resources,
        });
        if let Some(text) = spec.notice {
            properties.insert(
                0,
                NodeProperty {
                    display_name: text.to_owned(),
                    name: "notice".into(),
                    kind: PropertyType::Notice,
                    type_options: None,
                    default: Value::from(""),
                    required: false,
                    description: None,
                    hint: None,
                    placeholder: None,
                    no_data_expression: false,
                    display_options: None,
                    options: None,
                    implicit_default: false,
                    argument_bounds: None,
                },
            );
        }
        let version = match spec.versions {
            [one] => NodeVersion::One(Number(*one)),
            many => NodeVersion::Many(many.iter().copied().map(Number).collect()),
        };
        NodeDescription {
            display_name: spec.display_name.to_owned(),
            name: spec.name.to_owned(),
            icon: spec.icon.map(str::to_owned),
            group: spec.group.iter().map(|g| (*g).to_owned()).collect(),
            version,
            default_version: spec.default_version.map(Number),
            description: spec.description.to_owned(),
            subtitle: spec.subtitle.map(str::to_owned),
            defaults: NodeDefaults {
                name: spec.display_name.to_owned(),
            },
            codex,
            inputs,
            outputs,
            output_names: if output_name.is_empty() {
                vec![]
            } else {
                vec![output_name.to_owned()]
            },
            credentials: spec
                .credentials
                .iter()
                .map(|c| (c, true))
                .chain(spec.optional_credentials.iter().map(|c| (c, false)))
                .map(|(c, required)| CredentialDescription {
                    name: (*c).to_owned(),
                    required,
                    display_options: None,
                })
                .collect(),
            usable_as_tool: spec.usable_as_tool.then_some(true),
            properties,
        }
    }
}
