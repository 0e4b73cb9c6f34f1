//! Writes an n8n community node package for a catalog's nodes.
//!
//! The package:
//!
//! ```text
//! package.json                      n8n section: n8nNodesApiVersion, nodes, credentials
//! nodes/<Class>/<Class>.node.js     one shim per node; exports class <Class>
//! nodes/<Class>/<Class>.node.json   its codex (categories), where n8n reads it
//! nodes/<Class>/<icon>.svg          a badge for a `file:` icon (the catalog has no image)
//! credentials/<Class>.credentials.js  one per credential type this program defines
//! lib/nodekit-shim.js               what the shims do, per kind of node
//! lib/nodekit-bridge.js             the client of the bridge process
//! bin/<os>-<arch>/<program>          the program for each platform, run as `<program> bridge`
//! ```
//!
//! The platforms are Node.js's names (`linux-x64`, `linux-arm64`,
//! `darwin-arm64`, …), read from each program file; the shims run the one
//! for the n8n host's `process.platform` and `process.arch`, and a host
//! without one gets an error naming its platform and the ones the package
//! has. The package holds the program that wrote it and any built
//! elsewhere ([`PackageOptions::binaries`]). A Linux program linked
//! statically (see [`platform::ProgramFile::dynamic`]) starts on any Linux
//! of its processor, n8n's Alpine image included; a dynamically linked one
//! only where the C library is as new as where it was built, which the
//! report warns of.
//!
//! Each shim holds its node's description exactly as the catalog has it.
//! n8n names the node `CUSTOM.<name>` when it loads the package from
//! `N8N_CUSTOM_EXTENSIONS`, or `<package>.<name>` when it is installed as a
//! community package. From a custom folder, n8n ignores a description's
//! `codex` and reads the sibling `<Class>.node.json` instead (only when it
//! has `resources`), so that file carries the categories.
//!
//! nodekit's built-in nodes ([`BUILTIN_PACKAGE`]) are packaged only when
//! asked for ([`PackageOptions::builtins`], or by name): every nodekit
//! program has them, and two packages in one n8n defining the same node
//! would have n8n list it once and run it through either program. For the
//! same reason a package is refused when a package beside it (in the same
//! folder, as n8n's custom folder holds them) already has one of its nodes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::PackageError;
use super::platform;
use nodekit_core::credential;
use nodekit_core::description::ConnectionType;
use nodekit_core::error::{Error, Result, quoted};
use nodekit_core::registry::{Catalog, CatalogEntry};

/// The shims' shared code.
const SHIM_JS: &str = include_str!("js/nodekit-shim.js");
/// The bridge client.
const BRIDGE_JS: &str = include_str!("js/nodekit-bridge.js");

/// The crate of nodekit's built-in nodes, which every nodekit program links.
pub const BUILTIN_PACKAGE: &str = "nodekit-nodes";

/// What to package, and where.
#[derive(Debug, Clone)]
pub struct PackageOptions {
    /// The folder to write (created; files of an earlier package are replaced).
    pub out: PathBuf,
    /// The npm package name, e.g. `n8n-nodes-weather`.
    pub name: String,
    /// The package version.
    pub version: String,
    /// The program the shims run as `<program> bridge`; it is copied into
    /// `bin/<its platform>/`.
    pub program: PathBuf,
    /// The same program built for other platforms (each read to learn its
    /// platform); one for `program`'s own platform takes its place.
    pub binaries: Vec<PathBuf>,
    /// Only these nodes (catalog or bare names); all the runnable ones when empty.
    pub nodes: Vec<String>,
    /// With `nodes` empty: whether nodekit's built-in nodes
    /// ([`BUILTIN_PACKAGE`]) are packaged too (default: only the program's
    /// own).
    pub builtins: bool,
}

/// How a shim runs its node in n8n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ShimKind {
    /// `ai_tool`: `supplyData` describes the tool, `execute` runs a call.
    Tool,
    /// `ai_memory`: `supplyData` returns a LangChain memory.
    Memory,
    /// `ai_languageModel`: `supplyData` returns a LangChain chat model.
    Model,
    /// `ai_embedding`: `supplyData` returns LangChain embeddings.
    Embedding,
    /// `ai_document`: `supplyData` returns a reference to the loader, for
    /// nodekit nodes.
    Document,
    /// `ai_textSplitter`: `supplyData` returns a reference to the
    /// splitter, for nodekit nodes.
    TextSplitter,
    /// n8n's vector store node: by its `mode`, `supplyData` returns a
    /// LangChain vector store or a tool, and `execute` inserts, searches
    /// or runs a tool call.
    VectorStore,
    /// `main` in and out: `execute` runs the node per item.
    Main,
}

/// One node written into the package.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackagedNode {
    /// The catalog name.
    pub node: String,
    /// The exported class (and file) name.
    pub class: String,
    /// The shim's path inside the package.
    pub file: String,
    /// How the shim runs it.
    pub kind: ShimKind,
}

/// One program written into the package.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackagedProgram {
    /// Node.js's name of its platform, e.g. `linux-x64`.
    pub platform: String,
    /// Its path inside the package.
    pub file: String,
    /// Whether it needs the host's C library (see
    /// [`platform::ProgramFile::dynamic`]).
    pub dynamic: bool,
}

/// What [`write()`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackageReport {
    /// The package folder.
    pub out: PathBuf,
    /// The nodes written.
    pub nodes: Vec<PackagedNode>,
    /// Credential type files written.
    pub credentials: Vec<String>,
    /// The programs written, one per platform.
    pub programs: Vec<PackagedProgram>,
    /// What may keep the package from running somewhere, e.g. a
    /// dynamically linked Linux program.
    pub warnings: Vec<String>,
    /// Nodes left out, with the reason.
    pub skipped: Vec<(String, String)>,
}

/// How `entry` can run inside n8n, or why it cannot. A node's AI inputs
/// must be nodekit nodes of the package when it runs (the bridge makes
/// them; an object n8n made is refused with an error that names it).
pub fn shim_kind(entry: &CatalogEntry) -> std::result::Result<ShimKind, String> {
    let outputs = entry.description.outputs.types();
    let supplies = entry.runtime.supply.is_some();
    let executes = entry.runtime.execute.is_some();
    match outputs {
        [ConnectionType::Tool] if supplies => Ok(ShimKind::Tool),
        [ConnectionType::Memory] if supplies => Ok(ShimKind::Memory),
        [ConnectionType::LanguageModel] if supplies => Ok(ShimKind::Model),
        [ConnectionType::Embedding] if supplies => Ok(ShimKind::Embedding),
        [ConnectionType::Document] if supplies => Ok(ShimKind::Document),
        [ConnectionType::TextSplitter] if supplies => Ok(ShimKind::TextSplitter),
        _ if supplies && executes && outputs.contains(&ConnectionType::VectorStore) => {
            Ok(ShimKind::VectorStore)
        }
        [ConnectionType::Main, ..] if executes => Ok(ShimKind::Main),
        _ if !supplies && !executes => {
            Err("it has no run-time code (no SupplyData, ToolNode, DbTool or Execute)".into())
        }
        _ => Err(format!(
            "n8n cannot use what it outputs ({})",
            serde_json::to_string(&outputs).unwrap_or_default()
        )),
    }
}

/// The class name n8n requires for node `name`: the name with its first
/// letter capitalised and anything that is not a letter, digit or `_` left out.
pub fn class_name(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .enumerate()
    {
        if i == 0 {
            if c.is_ascii_digit() {
                out.push('N');
            }
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { "Node".into() } else { out }
}

/// Writes the package for `catalog`'s nodes.
pub fn write(catalog: &Catalog, options: &PackageOptions) -> Result<PackageReport> {
    check_package_name(&options.name)?;
    let (chosen, mut skipped) = choose(catalog, &options.nodes, options.builtins)?;
    if chosen.is_empty() {
        return Err(package_error(
            "no node can be packaged for n8n; see `nodekit catalog` for the nodes and their outputs \
             (nodekit's built-in nodes are packaged only with `--builtins` or `--node NAME`)",
        ));
    }
    // Everything is checked before anything is written.
    let mut classes = std::collections::HashSet::new();
    let mut planned = Vec::new();
    for (entry, kind) in chosen {
        let class = class_name(&entry.description.name);
        if classes.insert(class.clone()) {
            planned.push((entry, kind, class));
        } else {
            skipped.push((
                entry.full_name(),
                format!("another node of the package already has class name `{class}`"),
            ));
        }
    }
    let credential_types = credential_types(planned.iter().map(|(entry, ..)| *entry))?;
    let programs = programs(options)?;
    let out = &options.out;
    check_out(out)?;
    check_siblings(
        out,
        planned
            .iter()
            .map(|(entry, _, class)| (*entry, class.as_str())),
    )?;
    for dir in ["nodes", "credentials", "lib", "bin"] {
        let path = out.join(dir);
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| io(&path, e))?;
        }
        std::fs::create_dir_all(&path).map_err(|e| io(&path, e))?;
    }

    let mut nodes = Vec::new();
    for (entry, kind, class) in planned {
        let file = format!("nodes/{class}/{class}.node.js");
        let path = out.join(&file);
        std::fs::create_dir_all(path.parent().expect("a node file has a folder"))
            .map_err(|e| io(&path, e))?;
        std::fs::write(&path, node_js(entry, &class, kind)).map_err(|e| io(&path, e))?;
        if let Some(codex) = &entry.description.codex {
            let path = out.join(format!("nodes/{class}/{class}.node.json"));
            std::fs::write(&path, codex_json(&options.name, entry, codex) + "\n")
                .map_err(|e| io(&path, e))?;
        }
        if let Some(icon) = icon_file(entry) {
            // n8n serves `file:` icons from beside the node file.
            let path = out.join(format!("nodes/{class}/{icon}"));
            std::fs::write(&path, badge_svg(&entry.description.display_name))
                .map_err(|e| io(&path, e))?;
        }
        nodes.push(PackagedNode {
            node: entry.full_name(),
            class,
            file,
            kind,
        });
    }

    let mut credentials = Vec::new();
    for def in &credential_types {
        let class = class_name(def.name);
        let file = format!("credentials/{class}.credentials.js");
        let path = out.join(&file);
        std::fs::write(&path, credential_js(def, &class)).map_err(|e| io(&path, e))?;
        credentials.push(file);
    }

    let mut packaged = Vec::new();
    let mut warnings = Vec::new();
    for (source, program) in &programs {
        let name = source.file_name().expect("a program file has a name");
        let file = format!("bin/{}/{}", program.platform, name.to_string_lossy());
        let target = out.join(&file);
        std::fs::create_dir_all(target.parent().expect("a program has a folder"))
            .map_err(|e| io(&target, e))?;
        std::fs::copy(source, &target).map_err(|e| io(&target, e))?;
        make_executable(&target)?;
        if program.dynamic && program.platform.starts_with("linux-") {
            warnings.push(format!(
                "{file} is linked dynamically: it starts only on hosts whose C library is as new \
                 as this build's (not in n8n's Alpine Docker image, nor on older distributions); \
                 for a program that starts on any Linux, build it statically: \
                 RUSTFLAGS='-C target-feature=+crt-static --cfg getrandom_backend=\"linux_getrandom\"' \
                 cargo build --release --target <arch>-unknown-linux-gnu"
            ));
        }
        packaged.push(PackagedProgram {
            platform: program.platform.clone(),
            file,
            dynamic: program.dynamic,
        });
    }

    for (file, text) in [
        ("lib/nodekit-shim.js", SHIM_JS),
        ("lib/nodekit-bridge.js", BRIDGE_JS),
    ] {
        let path = out.join(file);
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    let manifest = json!({
        "name": options.name,
        "version": options.version,
        "description": "n8n nodes written in Rust with nodekit",
        "keywords": ["n8n-community-node-package"],
        "license": "MIT",
        "files": ["nodes", "credentials", "lib", "bin"],
        "n8n": {
            "n8nNodesApiVersion": 1,
            "nodes": nodes.iter().map(|n| n.file.clone()).collect::<Vec<_>>(),
            "credentials": credentials,
        },
        "nodekit": {
            "version": env!("CARGO_PKG_VERSION"),
            "bridges": packaged.iter().map(|p| (p.platform.clone(), Value::String(p.file.clone()))).collect::<serde_json::Map<_, _>>(),
            "nodes": nodes.iter().map(|n| (n.class.clone(), Value::String(n.node.clone()))).collect::<serde_json::Map<_, _>>(),
        },
    });
    let path = out.join("package.json");
    std::fs::write(&path, pretty(&manifest) + "\n").map_err(|e| io(&path, e))?;
    Ok(PackageReport {
        out: out.clone(),
        nodes,
        credentials,
        programs: packaged,
        warnings,
        skipped,
    })
}

/// The program files to package, by platform: `options.program` and the
/// binaries built elsewhere, one per platform.
fn programs(options: &PackageOptions) -> Result<Vec<(PathBuf, platform::ProgramFile)>> {
    let mut programs: Vec<(PathBuf, platform::ProgramFile)> = Vec::new();
    for path in &options.binaries {
        let program = platform::read(path)?;
        if let Some((other, _)) = programs
            .iter()
            .find(|(_, p)| p.platform == program.platform)
        {
            return Err(package_error(format!(
                "two programs for {}: {} and {}; give one per platform",
                program.platform,
                quoted(&other.display().to_string()),
                quoted(&path.display().to_string())
            )));
        }
        programs.push((path.clone(), program));
    }
    let own = platform::read(&options.program)?;
    if !programs.iter().any(|(_, p)| p.platform == own.platform) {
        programs.insert(0, (options.program.clone(), own));
    }
    Ok(programs)
}

/// Sets a copied program's mode to `rwxr-xr-x`, so that it runs whatever
/// mode its source had (a download often has no executable bit); npm keeps
/// the bit through `npm pack` and `npm install`.
fn make_executable(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io(path, e))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The credential types the nodes use that the package must define; an
/// error names a type registered neither as n8n's nor as this program's.
fn credential_types<'a>(
    entries: impl Iterator<Item = &'a CatalogEntry>,
) -> Result<Vec<credential::CredentialType>> {
    let mut types: Vec<credential::CredentialType> = Vec::new();
    for entry in entries {
        for c in &entry.description.credentials {
            let registration = credential::find(&c.name).ok_or_else(|| {
                package_error(format!(
                    "node `{}` uses credential type `{}`, which this program does not register: \
                     declare it with `nodekit::credential_type!`, or with \
                     `nodekit::n8n_credentials!(\"{}\")` if n8n ships it",
                    entry.full_name(),
                    c.name,
                    c.name
                ))
            })?;
            if let Some(def) = registration.definition()
                && !types.iter().any(|d| d.name == def.name)
            {
                types.push(def);
            }
        }
    }
    Ok(types)
}

type Chosen<'a> = (Vec<(&'a CatalogEntry, ShimKind)>, Vec<(String, String)>);

/// The nodes to package, and those left out with why.
fn choose<'a>(catalog: &'a Catalog, wanted: &[String], builtins: bool) -> Result<Chosen<'a>> {
    let mut chosen = Vec::new();
    let mut skipped = Vec::new();
    if wanted.is_empty() {
        for entry in catalog.entries() {
            if entry.package == BUILTIN_PACKAGE && !builtins {
                skipped.push((
                    entry.full_name(),
                    "it is a nodekit built-in node (packaged with `--builtins`)".into(),
                ));
                continue;
            }
            match shim_kind(entry) {
                Ok(kind) => chosen.push((entry, kind)),
                Err(why) => skipped.push((entry.full_name(), why)),
            }
        }
    } else {
        for name in wanted {
            let entry = catalog.find(name)?;
            let kind = shim_kind(entry).map_err(|why| {
                package_error(format!(
                    "node `{}` cannot run inside n8n: {why}",
                    entry.full_name()
                ))
            })?;
            if !chosen.iter().any(|(e, _)| std::ptr::eq(*e, entry)) {
                chosen.push((entry, kind));
            }
        }
    }
    Ok((chosen, skipped))
}

/// `out` must be new, empty, or an earlier package: its folders are replaced.
fn check_out(out: &Path) -> Result<()> {
    let mut entries = match std::fs::read_dir(out) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(out, e)),
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let earlier = std::fs::read_to_string(out.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|manifest| manifest.get("nodekit").is_some());
    if earlier {
        Ok(())
    } else {
        Err(package_error(format!(
            "{} is not empty and holds no earlier nodekit package; give a new or empty folder",
            quoted(&out.display().to_string())
        )))
    }
}

/// Refuses nodes a package beside `out` already has: n8n keys the nodes of
/// all its custom packages by name alone (`CUSTOM.<name>`), so it would
/// list one of the two and run it through either program. A nodekit
/// package names its nodes in `package.json`; for any other package the
/// shims' class names are compared.
fn check_siblings<'a>(
    out: &Path,
    planned: impl Iterator<Item = (&'a CatalogEntry, &'a str)>,
) -> Result<()> {
    let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let Ok(siblings) = std::fs::read_dir(parent) else {
        return Ok(());
    };
    let planned: Vec<(&str, &str)> = planned
        .map(|(entry, class)| (entry.description.name.as_str(), class))
        .collect();
    for sibling in siblings.flatten() {
        let dir = sibling.path();
        if dir.file_name() == out.file_name() || !dir.is_dir() {
            continue;
        }
        let Some(manifest) = std::fs::read_to_string(dir.join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        else {
            continue;
        };
        let names = |pointer: &str| -> Vec<String> {
            match manifest.pointer(pointer) {
                Some(Value::Object(m)) => m
                    .values()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
                _ => Vec::new(),
            }
        };
        // nodekit's: catalog names; any other: shim files, by class name.
        let theirs_nodes: Vec<String> = names("/nodekit/nodes")
            .iter()
            .map(|full| full.rsplit('.').next().unwrap_or(full).to_owned())
            .collect();
        let theirs_classes: Vec<String> = names("/n8n/nodes")
            .iter()
            .filter_map(|file| {
                Path::new(file)
                    .file_name()?
                    .to_str()?
                    .split('.')
                    .next()
                    .map(String::from)
            })
            .collect();
        let clash: Vec<&str> = planned
            .iter()
            .filter(|(name, class)| {
                theirs_nodes.iter().any(|n| n == name)
                    || (theirs_nodes.is_empty() && theirs_classes.iter().any(|c| c == class))
            })
            .map(|(name, _)| *name)
            .collect();
        if !clash.is_empty() {
            return Err(package_error(format!(
                "the package beside this one, {}, already has node(s) {}: n8n would list each \
                 once and run it through either program. Leave them out of one of the two \
                 (package only some nodes with `--node`; built-in nodes only with `--builtins`)",
                dir.display(),
                clash
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// A node's codex as n8n reads it from `<Class>.node.json`: `categories`,
/// `subcategories` and a `resources` object (which n8n requires).
fn codex_json(
    package: &str,
    entry: &CatalogEntry,
    codex: &nodekit_core::description::Codex,
) -> String {
    let mut v = json!({
        "node": format!("{package}.{}", entry.description.name),
        "nodeVersion": "1.0",
        "codexVersion": "1.0",
        "categories": codex.categories,
    });
    if !codex.subcategories.is_empty() {
        v["subcategories"] = json!(codex.subcategories);
    }
    v["resources"] = match &codex.resources {
        Some(r) => serde_json::to_value(r).expect("codex resources serialise"),
        None => json!({}),
    };
    pretty(&v)
}

/// The rules a package name must meet for npm to publish it and n8n to
/// install and load it (n8n's community package service refuses any other
/// name, and loads only `n8n-nodes-*` and `@scope/n8n-nodes-*`); an error
/// names the rule that fails.
fn check_package_name(name: &str) -> Result<()> {
    let refuse = |rule: &str| {
        Err(package_error(format!(
            "n8n would not install the package name `{}`: {rule}, e.g. `n8n-nodes-weather` \
             or `@acme/n8n-nodes-weather`",
            quoted(name)
        )))
    };
    let (scope, bare) = match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, bare)) => (Some(scope), bare),
            None => return refuse("a scoped name is `@scope/name`"),
        },
        None => (None, name),
    };
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "-._@/".contains(*c)))
    {
        return refuse(&format!(
            "it holds `{bad}`; use only lowercase letters, digits and `-._`"
        ));
    }
    if scope.is_some_and(|s| s.is_empty() || s.starts_with('.') || s.contains(['@', '/']))
        || bare.contains(['@', '/'])
    {
        return refuse("`@` and `/` belong only in a scope, `@scope/name`");
    }
    if name.len() > 214 {
        return refuse("it is longer than npm's 214 characters");
    }
    if !bare.starts_with("n8n-nodes-") || bare.len() == "n8n-nodes-".len() {
        return refuse("the name (after any scope) must start with `n8n-nodes-` and go on");
    }
    Ok(())
}

fn node_js(entry: &CatalogEntry, class: &str, kind: ShimKind) -> String {
    let description =
        pretty(&serde_json::to_value(entry.description).expect("descriptions serialise"));
    let kind = serde_json::to_string(&kind).expect("kinds serialise");
    let node = serde_json::to_string(&entry.full_name()).expect("names serialise");
    let ai_inputs: Vec<&ConnectionType> = entry
        .description
        .inputs
        .types()
        .iter()
        .filter(|t| **t != ConnectionType::Main)
        .collect();
    let ai_inputs = serde_json::to_string(&ai_inputs).expect("connection types serialise");
    let mut js = String::new();
    let _ = write!(
        js,
        "'use strict';\n\
         // Generated by `nodekit package` from node {node}; do not edit.\n\
         const shim = require('../../lib/nodekit-shim');\n\
         \n\
         const description = {description};\n\
         \n\
         class {class} {{\n  constructor() {{\n    this.description = description;\n  }}\n}}\n\
         shim.install({class}, {node}, {kind}, {ai_inputs});\n\
         \n\
         module.exports = {{ {class} }};\n"
    );
    js
}

/// The file a `file:NAME.svg` icon names, when it is a plain file name.
fn icon_file(entry: &CatalogEntry) -> Option<&str> {
    let name = entry.description.icon.as_deref()?.strip_prefix("file:")?;
    let plain = name.ends_with(".svg") && !name.contains(['/', '\\']) && !name.starts_with('.');
    plain.then_some(name)
}

/// An icon for a node whose program ships none: its initials on a badge.
fn badge_svg(display_name: &str) -> String {
    let initials: String = display_name
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .filter(char::is_ascii_alphanumeric)
        .take(2)
        .collect();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\">\
         <rect width=\"64\" height=\"64\" rx=\"12\" fill=\"#6b4fbb\"/>\
         <text x=\"32\" y=\"41\" font-family=\"sans-serif\" font-size=\"24\" \
         text-anchor=\"middle\" fill=\"#fff\">{initials}</text></svg>\n"
    )
}

fn credential_js(def: &credential::CredentialType, class: &str) -> String {
    let body = pretty(&serde_json::to_value(def).expect("credential types serialise"));
    format!(
        "'use strict';\n\
         // Generated by `nodekit package` from credential type `{}`; do not edit.\n\
         \n\
         class {class} {{\n  constructor() {{\n    Object.assign(this, {body});\n  }}\n}}\n\
         \n\
         module.exports = {{ {class} }};\n",
        def.name
    )
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values serialise")
}

fn package_error(what: impl Into<String>) -> Error {
    PackageError::new(what).into()
}

fn io(path: &Path, e: std::io::Error) -> Error {
    let what = format!("cannot write {}: {e}", quoted(&path.display().to_string()));
    PackageError::io(what, e).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nodekit_core::node::{NodeRuntime, Supply};

    fn refuse(
        _: Value,
        _: nodekit_core::node::SupplyContext,
    ) -> futures::future::BoxFuture<'static, Result<Supply>> {
        Box::pin(async { Err(Error::from(nodekit_core::error::AgentError::Cancelled)) })
    }

    fn tool(name: &str, credential: &str) -> CatalogEntry {
        let description: nodekit_core::description::NodeDescription = serde_json::from_value(json!({
            "displayName": name, "name": name, "group": ["transform"], "version": 1,
            "description": "A tool.", "defaults": {"name": name}, "inputs": [], "outputs": ["ai_tool"],
            "credentials": [{"name": credential, "required": true}], "properties": [],
        }))
        .unwrap();
        CatalogEntry {
            package: "n8n-nodes-test",
            description: Box::leak(Box::new(description)),
            runtime: NodeRuntime {
                supply: Some(refuse),
                execute: None,
            },
        }
    }

    fn options(out: &Path) -> PackageOptions {
        PackageOptions {
            out: out.to_path_buf(),
            name: "n8n-nodes-test".into(),
            version: "1.0.0".into(),
            program: std::env::current_exe().unwrap(),
            binaries: Vec::new(),
            nodes: Vec::new(),
            builtins: false,
        }
    }

    #[test]
    fn an_unregistered_credential_type_is_refused_before_anything_is_written() {
        let out = nodekit_test_support::scratch_dir()
            .join(format!("nodekit-package-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let catalog = Catalog::from_entries(vec![tool("weatherTool", "weatherApi")]);
        let e = write(&catalog, &options(&out)).unwrap_err().to_string();
        assert!(
            e.contains("`weatherApi`") && e.contains("nodekit::credential_type!"),
            "{e}"
        );
        assert!(!out.exists());
    }

    #[test]
    fn class_names_are_javascript_identifiers() {
        assert_eq!(class_name("selectQueryTool"), "SelectQueryTool");
        assert_eq!(class_name("2fa-tool"), "N2fatool");
        assert_eq!(class_name("--"), "Node");
    }

    #[test]
    fn package_names_follow_n8n_and_npm() {
        for good in [
            "n8n-nodes-weather",
            "@acme/n8n-nodes-weather",
            "n8n-nodes-a.b_c-2",
        ] {
            assert!(check_package_name(good).is_ok(), "{good}");
        }
        for (bad, rule) in [
            ("weather-nodes", "must start with `n8n-nodes-`"),
            ("@acme/weather", "must start with `n8n-nodes-`"),
            ("n8n-nodes-", "must start with `n8n-nodes-` and go on"),
            ("N8n-nodes-weather", "it holds `N`"),
            ("n8n-nodes-wea ther", "it holds ` `"),
            ("n8n-nodes-~x", "it holds `~`"),
            ("@acme", "a scoped name is `@scope/name`"),
            ("@/n8n-nodes-x", "belong only in a scope"),
            ("acme/n8n-nodes-x", "belong only in a scope"),
            ("n8n-nodes-x@1.0.0", "belong only in a scope"),
        ] {
            let e = check_package_name(bad).unwrap_err().to_string();
            assert!(
                e.contains(rule) && e.contains("would not install"),
                "{bad}: {e}"
            );
        }
        let long = format!("n8n-nodes-{}", "x".repeat(210));
        let e = check_package_name(&long).unwrap_err().to_string();
        assert!(e.contains("214"), "{e}");
    }
}
