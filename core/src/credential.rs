//! Credential types: what a node's `credentials = ["..."]` names.
//!
//! A node only names the credential types it uses; n8n needs each type's
//! definition (its fields) to show a form and store the secret. Types n8n
//! ships itself (`openAiApi`, `postgres`, `redis`, ...) are registered with
//! [`n8n_credentials!`](crate::n8n_credentials) and used as they are; a
//! type of this program's own is declared with
//! [`credential_type!`](crate::credential_type) over a
//! [`NodeParams`](crate::NodeParams) struct whose fields are its form.
//! `nodekit package` writes a `*.credentials.js` file for each declared type
//! a packaged node uses, and refuses a node whose type is registered neither
//! way.

use serde::Serialize;

use crate::description::NodeProperty;

/// A credential type, as n8n's `ICredentialType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialType {
    /// The type name nodes refer to, e.g. `sqlite`.
    pub name: &'static str,
    /// What n8n shows, e.g. `SQLite`.
    pub display_name: &'static str,
    /// Where its documentation is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<&'static str>,
    /// The form's fields.
    pub properties: Vec<NodeProperty>,
}

/// One registered credential type name.
#[derive(Debug)]
pub struct CredentialRegistration {
    name: &'static str,
    define: Option<fn() -> CredentialType>,
}

impl CredentialRegistration {
    /// A type n8n already has: packages use n8n's definition.
    pub const fn n8n(name: &'static str) -> Self {
        CredentialRegistration { name, define: None }
    }

    /// A type this program defines.
    pub const fn defined(name: &'static str, define: fn() -> CredentialType) -> Self {
        CredentialRegistration {
            name,
            define: Some(define),
        }
    }

    /// The type's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its definition, or `None` for a type n8n has.
    pub fn definition(&self) -> Option<CredentialType> {
        self.define.map(|f| f())
    }
}

inventory::collect!(CredentialRegistration);

/// The registration of credential type `name`, if any.
pub fn find(name: &str) -> Option<&'static CredentialRegistration> {
    inventory::iter::<CredentialRegistration>
        .into_iter()
        .find(|r| r.name == name)
}

/// Declares a credential type whose form is a [`NodeParams`](crate::NodeParams) struct.
///
/// ```
/// use nodekit::prelude::*;
///
/// /// The form of the `weatherApi` credential.
/// #[derive(NodeParams)]
/// pub struct WeatherApi {
///     /// The API key.
///     #[param(display_name = "API Key", password)]
///     pub api_key: String,
/// }
///
/// nodekit::credential_type!(WeatherApi, name = "weatherApi", display_name = "Weather API");
///
/// let def = nodekit::credential::find("weatherApi").unwrap().definition().unwrap();
/// assert_eq!(def.properties[0].name, "apiKey");
/// ```
#[macro_export]
macro_rules! credential_type {
    ($form:ty, name = $name:literal, display_name = $display:literal $(, documentation_url = $url:literal)? $(,)?) => {
        const _: () = {
            fn define() -> $crate::credential::CredentialType {
                $crate::credential::CredentialType {
                    name: $name,
                    display_name: $display,
                    documentation_url: None $(.or(Some($url)))?,
                    properties: <$form as $crate::Params>::properties(),
                }
            }
            $crate::__private::inventory::submit! {
                $crate::credential::CredentialRegistration::defined($name, define)
            }
        };
    };
}

/// Registers credential types that n8n ships (`openAiApi`, `postgres`, ...),
/// so packaged nodes use n8n's own definitions.
#[macro_export]
macro_rules! n8n_credentials {
    ($($name:literal),+ $(,)?) => {
        $(
            $crate::__private::inventory::submit! {
                $crate::credential::CredentialRegistration::n8n($name)
            }
        )+
    };
}

// The credential types nodekit's own code reads.
crate::n8n_credentials!("openAiApi", "postgres", "redis");
