//! `#[chat_history(namespace = [...])]` and `#[vector_store(namespace =
//! [...])]`: a store type registered under a namespace. Parse, validate and
//! expand; the two differ only in the trait and registry they name.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

use crate::ctxt::Ctxt;
use nodekit_rules::closest;

/// Field names whose values are treated as secrets in the generated `Debug`.
const SECRET_WORDS: &[&str] = &[
    "password",
    "secret",
    "token",
    "api_key",
    "apikey",
    "credential",
    "auth",
];

/// Which attribute: what it is called and which nodekit items it names.
pub struct Kind {
    /// The attribute, e.g. `chat_history`.
    pub attr: &'static str,
    /// What the struct is, for errors: `chat history`.
    pub what: &'static str,
    /// A namespace to show in errors.
    pub example: &'static str,
    /// The nodekit module holding the items below.
    pub module: &'static str,
    /// The trait the struct must implement.
    pub trait_name: &'static str,
    /// The trait carrying the namespace.
    pub namespace_trait: &'static str,
    /// The registration type submitted to `inventory`.
    pub registration: &'static str,
}

/// `#[chat_history]`.
pub const CHAT_HISTORY: Kind = Kind {
    attr: "chat_history",
    what: "chat history",
    example: "[\"my_package\", \"memory\", \"store\"]",
    module: "history",
    trait_name: "ChatHistory",
    namespace_trait: "HistoryNamespace",
    registration: "HistoryRegistration",
};

/// `#[vector_store]`.
pub const VECTOR_STORE: Kind = Kind {
    attr: "vector_store",
    what: "vector store",
    example: "[\"my_package\", \"vectors\", \"store\"]",
    module: "vector_store",
    trait_name: "VectorStore",
    namespace_trait: "VectorStoreNamespace",
    registration: "VectorStoreRegistration",
};

/// Parsed arguments.
struct Args {
    namespace: Option<(proc_macro2::Span, Vec<LitStr>)>,
}

fn parse_args(cx: &Ctxt, kind: &Kind, args: TokenStream) -> Args {
    let mut out = Args { namespace: None };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("namespace") {
            if out.namespace.is_some() {
                cx.error_spanned_by(
                    &meta.path,
                    format!("duplicate key `namespace` in `#[{}]`", kind.attr),
                );
            }
            let value = meta.value()?;
            let content;
            syn::bracketed!(content in value);
            let parts = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
            out.namespace = Some((
                meta.path
                    .get_ident()
                    .map_or_else(proc_macro2::Span::call_site, |i| i.span()),
                parts.into_iter().collect(),
            ));
            Ok(())
        } else {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let hint = closest(&key, &["namespace"])
                .map_or(String::new(), |b| format!("; did you mean `{b}`?"));
            cx.error_spanned_by(
                &meta.path,
                format!("unknown key `{key}` in `#[{}]`{hint}", kind.attr),
            );
            // Consume the value so that parsing goes on with one error, not two.
            if meta.input.peek(Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        }
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    out
}

/// `#[chat_history(...)]` or `#[vector_store(...)]` on a struct.
pub fn store_type(kind: &Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: syn::ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let error = syn::Error::new(e.span(), format!("#[{}] goes on a struct", kind.attr))
                .to_compile_error();
            return quote!(#item #error);
        }
    };
    let cx = Ctxt::default();
    let args = parse_args(&cx, kind, args);
    let namespace = match &args.namespace {
        None => {
            cx.error_spanned_by(
                &item.ident,
                format!(
                    "a {} needs a namespace: `#[{}(namespace = {})]`",
                    kind.what, kind.attr, kind.example
                ),
            );
            Vec::new()
        }
        Some((span, parts)) => {
            if parts.is_empty() {
                cx.syn_error(syn::Error::new(*span, "the namespace is empty: give at least one part, e.g. `[\"my_package\", \"memory\"]`"));
            }
            for p in parts {
                let v = p.value();
                if v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    cx.error_spanned_by(
                        p,
                        format!("invalid namespace part {v:?}: use letters, digits, `_` and `-`"),
                    );
                }
            }
            parts.iter().map(LitStr::value).collect()
        }
    };
    // Which fields the generated Debug hides, before the `#[secret]` markers are removed.
    let fields: Vec<(syn::Member, String, bool)> = item
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let member = f
                .ident
                .clone()
                .map_or(syn::Member::Unnamed(i.into()), syn::Member::Named);
            let name = f.ident.as_ref().map_or(i.to_string(), ToString::to_string);
            let marked = f.attrs.iter().any(|a| a.path().is_ident("secret"));
            let lower = name.to_ascii_lowercase();
            (
                member,
                name,
                marked || SECRET_WORDS.iter().any(|w| lower.contains(w)),
            )
        })
        .collect();
    for f in item.fields.iter_mut() {
        f.attrs.retain(|a| !a.path().is_ident("secret"));
    }
    let errors = cx.check().err().map(|e| e.to_compile_error());
    let ident = &item.ident;
    if errors.is_some() {
        return quote!(#item #errors);
    }
    let name = ident.to_string();
    let debug_fields = fields.iter().map(|(member, name, secret)| {
        if *secret {
            quote!(.field(#name, &"***"))
        } else {
            quote!(.field(#name, &::nodekit::__private::DebugField(&self.#member).shown()))
        }
    });
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let module = format_ident!("{}", kind.module);
    let store_trait = format_ident!("{}", kind.trait_name);
    let namespace_trait = format_ident!("{}", kind.namespace_trait);
    let registration = format_ident!("{}", kind.registration);
    let check = format_ident!("implements_{}", kind.attr);
    let generic = !item.generics.params.is_empty();
    // Registration needs a concrete type; generic histories are not registered.
    let register = (!generic).then(|| {
        quote! {
            ::nodekit::__private::inventory::submit! {
                ::nodekit::#module::#registration { namespace: &[#(#namespace),*], type_name: #name }
            }
            // Fails to compile, with a clear note, if the struct does not implement the trait.
            const _: fn() = || {
                fn #check<T: ::nodekit::#module::#store_trait>() {}
                #check::<#ident>();
            };
        }
    });
    quote! {
        #item

        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::nodekit::#module::#namespace_trait for #ident #ty_generics #where_clause {
                const NAMESPACE: &'static [&'static str] = &[#(#namespace),*];
            }

            /// Shows the namespace and the fields; secrets are `***`.
            #[automatically_derived]
            impl #impl_generics ::core::fmt::Debug for #ident #ty_generics #where_clause {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #[allow(unused_imports)]
                    use ::nodekit::__private::DebugFieldFallback as _;
                    f.debug_struct(#name)
                        .field("namespace", &<Self as ::nodekit::#module::#namespace_trait>::NAMESPACE)
                        #(#debug_fields)*
                        .finish()
                }
            }

            #register
        };
    }
}
