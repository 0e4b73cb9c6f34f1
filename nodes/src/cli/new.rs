//! `nodekit new NAME`: a crate of one's own nodes that builds at once.
//!
//! The crate is the template in `nodes/template/`: one tool node, the
//! `main.rs` that gives it this command line, a test that calls the node
//! as an agent does, and the profile settings of a small first build.

use std::path::{Path, PathBuf};

use super::shown;

/// The template's files: where each goes in the new crate, and its text.
const FILES: [(&str, &str); 5] = [
    ("Cargo.toml", include_str!("../../template/Cargo.toml.in")),
    (".gitignore", include_str!("../../template/gitignore.in")),
    ("src/lib.rs", include_str!("../../template/src/lib.rs")),
    ("src/main.rs", include_str!("../../template/src/main.rs")),
    (
        "tests/nodes.rs",
        include_str!("../../template/tests/nodes.rs"),
    ),
];

/// Where the new crate takes nodekit from.
#[derive(clap::Args, Debug)]
pub(super) struct NewArgs {
    /// The crate's name: lower-case ASCII letters, digits, `-` and `_`, starting with a letter.
    name: String,
    /// The folder to make (default: NAME in the current folder). It must not exist, or be empty.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Depend on the nodekit checkout in this folder (default: the one this program was built from).
    #[arg(long, value_name = "DIR", conflicts_with = "git")]
    nodekit_path: Option<PathBuf>,
    /// Depend on nodekit from this git repository.
    #[arg(long, value_name = "URL")]
    git: Option<String>,
}

/// Makes the crate; returns what to do next.
pub(super) fn run(args: NewArgs) -> Result<Option<String>, String> {
    check_name(&args.name)?;
    let dir = args
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(format!(
            "{} exists and is not empty: give another NAME or --path",
            shown(&dir)
        ));
    }
    let (nodekit, nodes, lock) = source(&args)?;
    let crate_name = args.name.replace('-', "_");
    for (file, template) in FILES {
        let text = template
            .replace("{{nodekit-nodes}}", &nodes)
            .replace("{{nodekit}}", &nodekit)
            .replace("{{crate}}", &crate_name)
            .replace("{{name}}", &args.name);
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot make {}: {e}", shown(parent)))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", shown(&path)))?;
    }
    // The checkout's lock: the crate starts on the versions nodekit was
    // tested with (cargo drops what it does not use).
    if let Some(lock) = lock {
        let to = dir.join("Cargo.lock");
        std::fs::copy(&lock, &to).map_err(|e| format!("cannot write {}: {e}", shown(&to)))?;
    }
    say!("made {} in {}", args.name, shown(&dir));
    Ok(Some(format!(
        "cd {} && cargo test && cargo run -- tool-call wordCountTool --args '{{\"text\": \"a b a\"}}'",
        dir.display()
    )))
}

/// A name cargo takes for a package and Rust for its crate.
fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    if !starts
        || name.len() > 64
        || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(format!(
            "{:?} is not a crate name here: use lower-case ASCII letters, digits, `-` and `_`, starting with a letter (at most 64)",
            nodekit::error::shorten(name, nodekit::error::QUOTE_MAX)
        ));
    }
    Ok(())
}

/// The dependency lines' sources of `nodekit` and `nodekit-nodes`, and a
/// checkout's `Cargo.lock`.
fn source(args: &NewArgs) -> Result<(String, String, Option<PathBuf>), String> {
    if let Some(url) = &args.git {
        let url = toml_string(url);
        return Ok((format!("git = {url}"), format!("git = {url}"), None));
    }
    let root = match &args.nodekit_path {
        Some(dir) => dir.clone(),
        // This program's own sources, when they are still where it was built.
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    if !root.join("runtime/Cargo.toml").is_file() || !root.join("nodes/Cargo.toml").is_file() {
        return Err(format!(
            "{} holds no nodekit checkout (runtime/ and nodes/): give --nodekit-path DIR or --git URL",
            shown(&root)
        ));
    }
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", shown(&root)))?;
    let path = |dir: &str| format!("path = {}", toml_string(&root.join(dir).to_string_lossy()));
    let lock = Some(root.join("Cargo.lock")).filter(|lock| lock.is_file());
    Ok((path("runtime"), path("nodes"), lock))
}

/// `text` as a TOML basic string (a JSON string is one: the same quotes and
/// escapes).
fn toml_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}
