//! TEMPORARY shim until the real module lands.
/// x
#[derive(Debug, thiserror::Error)]
#[error("fromai")]
pub struct FromAiError;
/// x
#[derive(Debug, thiserror::Error)]
#[error("args")]
pub struct ArgumentsError;
