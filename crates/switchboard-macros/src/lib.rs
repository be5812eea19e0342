//! # switchboard-macros
//!
//! Attribute macros for Switchboard servers, re-exported by the facade crate (`switchboard`,
//! feature `macros`, on by default) as `switchboard::tool`, `switchboard::prompt`,
//! `switchboard::resource` and `switchboard::handlers`. The generated code uses the facade's
//! public API (`switchboard::server::register`), so a crate using these macros depends on
//! `switchboard`.
//!
//! * `#[tool]`, `#[prompt]`, `#[resource("scheme://{var}")]` go on a function (async or not), or
//!   on the `&self` methods of an impl block marked `#[handlers]`.
//! * The doc comment is the description (a parameter's doc comment, that of its property or
//!   argument); the function's name is the tool's, prompt's or
//!   resource's name (`name = "..."` overrides it; `title`, `description` and, for resources,
//!   `mime_type` are the other options).
//! * A tool renders its results in an MCP App view with `app = "ui://server/view"` (its
//!   `_meta.ui.resourceUri`; the view is registered with `ServerBuilder::app`), and is called
//!   only from that view with `visibility = "app"` as well (`"model"`, `"model, app"`: the
//!   other choices).
//! * Tool parameters are the properties of the input schema (`Option<T>`: not required), or
//!   one `Args<T>` parameter whose struct derives `Deserialize` and `JsonSchema`. Prompt
//!   parameters are its arguments (`String`, or `Option<String>` when optional). A resource's
//!   URI template variables are its parameters (`String`), one for one; a URI without
//!   variables is one resource.
//! * A parameter of type `Context` or `&Context` receives the request's context.
//! * The return type maps to the answer (`switchboard::server::register` has the table): a
//!   `String`, content blocks, `Json<T>` for structured content with an output schema, the
//!   result type itself, or `Result<_, E>` whose `Err` is a tool's `isError` result.
//!
//! A `#[tool]` function becomes a unit struct of the same name (the function itself stays
//! callable as `name::call`), registered with `ServerBuilder::register(name)`; a `#[handlers]`
//! impl block registers every marked method with `ServerBuilder::register(value)` (or an
//! `Arc` of it, to keep a handle).
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use switchboard::server::{Json, Server};
//! use switchboard::types::lifecycle::Implementation;
//!
//! /// Add two integers.
//! #[switchboard::tool]
//! async fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! #[derive(Default)]
//! struct Counter(AtomicU64);
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Count {
//!     value: u64,
//! }
//!
//! #[switchboard::handlers]
//! impl Counter {
//!     /// Adds `by` (default 1) and returns the new value.
//!     #[tool]
//!     async fn bump(&self, by: Option<u64>) -> Json<Count> {
//!         let by = by.unwrap_or(1);
//!         Json(Count { value: self.0.fetch_add(by, Ordering::SeqCst) + by })
//!     }
//!
//!     /// The counter's value.
//!     #[resource("counter://value", mime_type = "text/plain")]
//!     async fn value(&self) -> String {
//!         self.0.load(Ordering::SeqCst).to_string()
//!     }
//! }
//!
//! let server = Server::builder(Implementation::new("calc", "1.0"))
//!     .register(add)
//!     .register(Counter::default())
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().tools.is_some());
//! ```

use proc_macro::TokenStream;

mod analyse;
mod expand;
mod options;

use options::Kind;

/// A tool: the function's parameters are its input schema, its doc comment its description,
/// its return value its result (an `Err` is an `isError` result). Options: `name`, `title`,
/// `description`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Tool, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A prompt: the function's parameters are its arguments (`String`, or `Option<String>` when
/// optional), its doc comment its description, its return value its messages. Options: `name`,
/// `title`, `description`.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Prompt, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A resource, or a resource template when its URI has `{variables}` (RFC 6570): each variable
/// is a `String` parameter of the function, and the return value is the contents. The URI comes
/// first; options: `name`, `title`, `description`, `mime_type`.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Resource, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// On an impl block: its methods marked `#[tool]`, `#[prompt]` or `#[resource(...)]` (each
/// taking `&self`) are registered together by `ServerBuilder::register(value)`, sharing the
/// value behind an `Arc`.
#[proc_macro_attribute]
pub fn handlers(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::handlers(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
