//! Prints the public API that a rustdoc JSON file describes, one item a
//! line, sorted: `api-listing target/doc/nodekit.json`. Auto-trait and
//! blanket impls are left out (they follow from the items), so each line
//! is something a change to the crate's code changes.
//!
//! `scripts/public-api.sh` makes the JSON and compares the listing with
//! the checked-in one.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: api-listing RUSTDOC_JSON");
        return ExitCode::from(2);
    };
    let api = public_api::Builder::from_rustdoc_json(&path)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .omit_auto_derived_impls(true)
        .build();
    match api {
        Ok(api) => {
            for item in api.items() {
                println!("{item}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("api-listing: cannot read {}: {e}", path.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}
