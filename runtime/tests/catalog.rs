//! The global catalog: registration through inventory, lookup and errors.

use nodekit::prelude::*;

/// First.
#[ai_node(name = "alpha", package = "pkg-a")]
struct Alpha;

/// Same name, other package.
#[ai_node(name = "alpha", package = "pkg-b")]
struct AlphaB;

/// Unique.
#[ai_node(name = "gammaRay", package = "pkg-a")]
struct Gamma;

#[test]
fn registered_nodes_are_listed_sorted() {
    let names: Vec<String> = Catalog::global()
        .entries()
        .iter()
        .map(|e| e.full_name())
        .collect();
    assert_eq!(names, ["pkg-a.alpha", "pkg-a.gammaRay", "pkg-b.alpha"]);
    Catalog::global().check_unique().unwrap();
    let _ = (Alpha, AlphaB, Gamma);
}

#[test]
fn lookup_by_full_or_bare_name() {
    let c = Catalog::global();
    assert_eq!(c.find("pkg-b.alpha").unwrap().package, "pkg-b");
    assert_eq!(c.find("gammaRay").unwrap().full_name(), "pkg-a.gammaRay");
    let e = c.find("alpha").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown node `alpha` (ambiguous: pkg-a.alpha, pkg-b.alpha; use the full name)"
    );
    let e = c.find("gamaRay").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown node `gamaRay` (did you mean `pkg-a.gammaRay`?)"
    );
    // As a workflow exported from n8n names them: by the npm package
    // they were installed as.
    assert_eq!(
        c.find("n8n-nodes-shop.gammaRay").unwrap().full_name(),
        "pkg-a.gammaRay"
    );
    assert_eq!(
        c.find("@acme/n8n-nodes-shop.gammaRay").unwrap().full_name(),
        "pkg-a.gammaRay"
    );
    assert!(c.find("n8n-nodes-shop.alpha").is_err());
    assert!(c.find("other-package.gammaRay").is_err());
    let e = c.find("zzz").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown node `zzz` (run `nodekit catalog` to list the nodes)"
    );
}

#[test]
fn nodes_json_uses_full_names() {
    let json = Catalog::global().to_nodes_json();
    assert_eq!(json[0]["name"], "pkg-a.alpha");
    assert_eq!(json[0]["displayName"], "Alpha");
}

#[test]
fn duplicates_are_reported() {
    let e = Catalog::global().entries()[0];
    let c = Catalog::from_entries(vec![e, e]);
    assert_eq!(
        c.check_unique().unwrap_err().to_string(),
        "two registered nodes are both named `pkg-a.alpha`; node names must be unique within a package"
    );
}
