//! nodekit's built-in nodes. Linking this crate registers them in the
//! program's [`nodekit::Catalog`].

pub mod cli;
pub mod credentials;
pub mod nodes;

/// Forces the linker to keep this crate's node registrations; call it (or
/// name any item of this crate) from a binary that should list them.
pub fn link() {}

/// The README's Rust blocks, compiled and run as doc tests of this crate
/// (which has every feature), so the tour cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
