//! Catalog generation for 200 registered nodes: describing every node
//! (schemas included) and writing n8n's `types/nodes.json`.
//!
//! `cargo bench -p nodekit --bench catalog`

use nodekit::prelude::*;

fn main() {
    divan::main();
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Safe,
}

macro_rules! nodes {
    ($($name:ident),* $(,)?) => {
        $(
            /// A generated node for the catalog benchmark.
            #[ai_node(output = tool)]
            #[allow(dead_code)]
            struct $name {
                /// The query.
                #[from_ai]
                query: String,
                /// How many.
                #[param(default = 10, min = 1, max = 100)]
                limit: u32,
                /// Mode.
                #[param(default = Mode::Fast)]
                mode: Mode,
                /// Only when safe.
                #[param(default = false, display_options(show(mode = [Mode::Safe])))]
                strict: bool,
                /// Labels.
                labels: Vec<String>,
            }
        )*
        /// Builds every description from scratch (nothing cached).
        fn describe_all() -> Vec<Vec<nodekit::description::NodeProperty>> {
            vec![$(<$name as Params>::properties()),*]
        }
    };
}
nodes!(
    Node000, Node001, Node002, Node003, Node004, Node005, Node006, Node007, Node008, Node009,
    Node010, Node011, Node012, Node013, Node014, Node015, Node016, Node017, Node018, Node019,
    Node020, Node021, Node022, Node023, Node024, Node025, Node026, Node027, Node028, Node029,
    Node030, Node031, Node032, Node033, Node034, Node035, Node036, Node037, Node038, Node039,
    Node040, Node041, Node042, Node043, Node044, Node045, Node046, Node047, Node048, Node049,
    Node050, Node051, Node052, Node053, Node054, Node055, Node056, Node057, Node058, Node059,
    Node060, Node061, Node062, Node063, Node064, Node065, Node066, Node067, Node068, Node069,
    Node070, Node071, Node072, Node073, Node074, Node075, Node076, Node077, Node078, Node079,
    Node080, Node081, Node082, Node083, Node084, Node085, Node086, Node087, Node088, Node089,
    Node090, Node091, Node092, Node093, Node094, Node095, Node096, Node097, Node098, Node099,
    Node100, Node101, Node102, Node103, Node104, Node105, Node106, Node107, Node108, Node109,
    Node110, Node111, Node112, Node113, Node114, Node115, Node116, Node117, Node118, Node119,
    Node120, Node121, Node122, Node123, Node124, Node125, Node126, Node127, Node128, Node129,
    Node130, Node131, Node132, Node133, Node134, Node135, Node136, Node137, Node138, Node139,
    Node140, Node141, Node142, Node143, Node144, Node145, Node146, Node147, Node148, Node149,
    Node150, Node151, Node152, Node153, Node154, Node155, Node156, Node157, Node158, Node159,
    Node160, Node161, Node162, Node163, Node164, Node165, Node166, Node167, Node168, Node169,
    Node170, Node171, Node172, Node173, Node174, Node175, Node176, Node177, Node178, Node179,
    Node180, Node181, Node182, Node183, Node184, Node185, Node186, Node187, Node188, Node189,
    Node190, Node191, Node192, Node193, Node194, Node195, Node196, Node197, Node198, Node199
);

/// Building the properties of all 200 nodes (the schemars part), uncached.
#[divan::bench]
fn build_200_properties() -> usize {
    describe_all().len()
}

/// `nodekit catalog`: the registry walk, sorting and the JSON text, descriptions cached.
#[divan::bench]
fn nodes_json_200() -> String {
    let catalog = Catalog::global();
    assert_eq!(catalog.entries().len(), 200);
    serde_json::to_string(&catalog.to_nodes_json()).unwrap()
}

/// A fresh catalog from the registry, sorted by name.
#[divan::bench]
fn collect_and_sort_200() -> usize {
    let entries = Catalog::global().entries().to_vec();
    Catalog::from_entries(entries).entries().len()
}
