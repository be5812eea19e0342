//! What the attribute macros (`#[switchboard::tool]`, `#[switchboard::prompt]`,
//! `#[switchboard::resource]`, `#[switchboard::handlers]`) generate code against: the
//! [`Register`] trait behind [`ServerBuilder::register`], the [`Json`] and [`Args`] wrappers, and
//! the traits that turn a handler's return value into a result ([`IntoToolResult`],
//! [`IntoPromptResult`], [`IntoResourceResult`]).
//!
//! Everything here is plain Rust over the builder's public API: a macro-made tool is a typed
//! tool ([`crate::typed`]) whose argument type the macro writes from the function's parameters.
//!
//! | a handler returns | a tool answers | a prompt answers | a resource answers |
//! |---|---|---|---|
//! | `String`, `&'static str` | one text block | one user message | text contents (with the MIME type) |
//! | [`Json<T>`] | `structuredContent` + `outputSchema` from `T` | | |
//! | the result type itself | as is | as is | as is |
//! | content blocks / messages / contents | those | those | those |
//! | `Result<T, E>`, `E: Display` | `Err`: an `isError` result | `Err`: -32603 | `Err`: -32603 |
//!
//! An `Err` that is a [`ToolError`] keeps its meaning (a [`ToolError::Rpc`] stays a protocol
//! error), and an `Err` that is an [`ErrorObject`] is that JSON-RPC error (for a tool, a
//! deliberate one such as -32042; for a resource, [`crate::resource_not_found`]).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_types::content::{ContentBlock, ResourceContents, TextResourceContents};
use switchboard_types::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use switchboard_types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use switchboard_types::tools::{CallToolResult, Tool};
use switchboard_types::{ErrorCode, ErrorObject};

use crate::context::Context;
use crate::prompt::PromptGet;
use crate::resource::ResourceRead;
use crate::server::ServerBuilder;
use crate::tool::{RegisteredTool, RegistryError, ToolError};
use crate::typed::{parse_args, schema_of, structured};

/// Something that adds tools, prompts or resources to a server: what the attribute macros
/// generate (a `#[tool]` function, a `#[handlers]` impl block), registered with
/// [`ServerBuilder::register`].
pub trait Register {
    /// Adds what `self` defines to `builder`; a registration error fails
    /// [`ServerBuilder::build`], as with the builder's other methods.
    fn register(self, builder: ServerBuilder) -> ServerBuilder;
}

/// A value whose handlers share it behind an [`Arc`]: what `#[switchboard::handlers]` on an
/// impl block generates. `Arc<T>` is then [`Register`], so the caller can keep a handle to the
/// value the handlers use (`.register(notes.clone())`); `T` itself is too.
pub trait RegisterShared: Send + Sync + 'static {
    /// Adds the handlers of `self` to `builder`.
    fn register_shared(self: Arc<Self>, builder: ServerBuilder) -> ServerBuilder;
}

impl<T: RegisterShared> Register for Arc<T> {
    fn register(self, builder: ServerBuilder) -> ServerBuilder {
        self.register_shared(builder)
    }
}

impl ServerBuilder {
    /// Registers a macro-made handler: a `#[switchboard::tool]` (or `prompt`, `resource`)
    /// function, or a value whose impl block carries `#[switchboard::handlers]`.
    pub fn register(self, item: impl Register) -> Self {
        item.register(self)
    }
}

/// A tool's structured output: the result carries `structuredContent` (`T` must serialize to a
/// JSON object) and the same JSON as a text block, and the tool declares `outputSchema` from
/// `T`'s JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// A tool's arguments as one struct deriving `Deserialize` and `JsonSchema` (its fields are the
/// input schema's properties, its doc comments their descriptions), instead of one parameter
/// per property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Args<T>(pub T);

impl<T> std::ops::Deref for Args<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The failure `e` as a tool error: a [`ToolError`] as it is, an [`ErrorObject`] as a
/// deliberate protocol error, anything else as an `isError` result with its text.
fn tool_error<E: Display + 'static>(e: E) -> ToolError {
    let any: &dyn Any = &e;
    if let Some(t) = any.downcast_ref::<ToolError>() {
        return t.clone();
    }
    if let Some(o) = any.downcast_ref::<ErrorObject>() {
        return ToolError::Rpc(o.clone());
    }
    ToolError::Failed(e.to_string())
}

/// The failure `e` as a JSON-RPC error: an [`ErrorObject`] as it is, anything else -32603 with
/// its text.
fn rpc_error<E: Display + 'static>(e: E) -> ErrorObject {
    let any: &dyn Any = &e;
    if let Some(o) = any.downcast_ref::<ErrorObject>() {
        return o.clone();
    }
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

/// What a `#[tool]` function may return.
#[diagnostic::on_unimplemented(
    message = "a #[tool] cannot return `{Self}`",
    label = "this return type",
    note = "return String, CallToolResult, ContentBlock, Vec<ContentBlock>, Json<T> (T: Serialize + JsonSchema), or Result<one of those, E: Display>"
)]
pub trait IntoToolResult {
    /// The tool's `outputSchema`, if its results are structured.
    fn output_schema() -> Option<Value> {
        None
    }
    /// The result, or the tool's failure.
    ///
    /// # Errors
    /// The tool failed.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(self))
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Value> {
        Some(schema_of::<T>())
    }
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        structured(&self.0)
    }
}

impl<T: IntoToolResult, E: Display + 'static> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        self.map_err(tool_error)?.into_tool_result()
    }
}

/// What a `#[prompt]` function may return.
#[diagnostic::on_unimplemented(
    message = "a #[prompt] cannot return `{Self}`",
    label = "this return type",
    note = "return String (one user message), PromptMessage, Vec<PromptMessage>, GetPromptResult, or Result<one of those, E: Display>"
)]
pub trait IntoPromptResult {
    /// The prompt's messages, or the JSON-RPC error to answer.
    ///
    /// # Errors
    /// The prompt failed.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl<T: IntoPromptResult, E: Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.map_err(rpc_error)?.into_prompt_result()
    }
}

/// What a `#[resource]` function may return.
#[diagnostic::on_unimplemented(
    message = "a #[resource] cannot return `{Self}`",
    label = "this return type",
    note = "return String (text contents), ResourceContents, Vec<ResourceContents>, ReadResourceResult, or Result<one of those, E: Display>"
)]
pub trait IntoResourceResult {
    /// The contents read from `uri`, or the JSON-RPC error to answer; `mime_type` is the
    /// resource's declared one.
    ///
    /// # Errors
    /// The read failed.
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject>;
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoResourceResult for String {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let mut text = TextResourceContents::new(uri, self);
        text.mime_type = mime_type.map(str::to_owned);
        Ok(ReadResourceResult::new(vec![ResourceContents::Text(text)]))
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(self))
    }
}

impl<T: IntoResourceResult, E: Display + 'static> IntoResourceResult for Result<T, E> {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        self.map_err(rpc_error)?
            .into_resource_result(uri, mime_type)
    }
}

/// The code the macros generate calls these; they are not a stable API of their own.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use schemars;
    pub use serde;

    /// The input schema of a macro-made argument struct: its JSON Schema without the title
    /// (the struct's name is the macro's, not the user's).
    pub fn params_schema<A: JsonSchema>() -> Value {
        let mut schema = schema_of::<A>();
        if let Some(o) = schema.as_object_mut() {
            o.remove("title");
        }
        schema
    }

    /// A tool whose arguments parse into `A` (validated against `input_schema` first) and whose
    /// handler's output becomes its result.
    ///
    /// # Errors
    /// A schema that does not compile (not expected).
    pub fn tool<A, F, Fut>(
        name: &str,
        title: Option<&str>,
        description: Option<&str>,
        input_schema: Value,
        handler: F,
    ) -> Result<RegisteredTool, RegistryError>
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolResult,
    {
        let mut def = Tool::new(name, input_schema);
        if let Some(d) = description {
            def = def.with_description(d);
        }
        if let Some(t) = title {
            def = def.with_title(t);
        }
        if let Some(out) = <Fut::Output as IntoToolResult>::output_schema() {
            def = def.with_output_schema(out);
        }
        let handler = Arc::new(handler);
        RegisteredTool::new(def, move |call| {
            let handler = handler.clone();
            async move {
                let args = parse_args::<A>(call.arguments)?;
                handler(args, call.cx).await.into_tool_result()
            }
        })
    }

    /// One argument of a macro-made prompt: its name, description, and whether it is required.
    pub type PromptArg = (&'static str, Option<&'static str>, bool);

    /// Registers a prompt whose handler's output becomes its messages.
    pub fn prompt<F, Fut>(
        builder: ServerBuilder,
        name: &str,
        title: Option<&str>,
        description: Option<&str>,
        arguments: &[PromptArg],
        handler: F,
    ) -> ServerBuilder
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoPromptResult,
    {
        let mut prompt = Prompt::new(name);
        prompt.title = title.map(str::to_owned);
        prompt.description = description.map(str::to_owned);
        if !arguments.is_empty() {
            prompt.arguments = Some(
                arguments
                    .iter()
                    .map(|(name, description, required)| {
                        let mut a = PromptArgument::new(*name);
                        a.description = description.map(str::to_owned);
                        a.required = Some(*required);
                        a
                    })
                    .collect(),
            );
        }
        let handler = Arc::new(handler);
        builder.prompt(prompt, move |get| {
            let handler = handler.clone();
            async move { handler(get).await.into_prompt_result() }
        })
    }

    /// A prompt argument by name (empty when absent: required ones are checked before the
    /// handler runs).
    pub fn prompt_arg(args: &mut BTreeMap<String, String>, name: &str) -> String {
        args.remove(name).unwrap_or_default()
    }

    /// An optional prompt argument by name.
    pub fn prompt_arg_opt(args: &mut BTreeMap<String, String>, name: &str) -> Option<String> {
        args.remove(name)
    }

    /// Registers a resource (a URI without variables) or a resource template (a URI with
    /// `{variables}`) whose handler's output becomes its contents.
    #[allow(clippy::too_many_arguments)] // one call per generated registration
    pub fn resource<F, Fut>(
        builder: ServerBuilder,
        uri: &str,
        templated: bool,
        name: &str,
        title: Option<&str>,
        description: Option<&str>,
        mime_type: Option<&'static str>,
        handler: F,
    ) -> ServerBuilder
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceResult,
    {
        let handler = Arc::new(handler);
        let reader = move |read: ResourceRead| {
            let handler = handler.clone();
            async move {
                let uri = read.uri.clone();
                handler(read).await.into_resource_result(&uri, mime_type)
            }
        };
        if templated {
            let mut t = ResourceTemplate::new(uri, name);
            t.title = title.map(str::to_owned);
            t.description = description.map(str::to_owned);
            t.mime_type = mime_type.map(str::to_owned);
            builder.resource_template(t, reader)
        } else {
            let mut r = Resource::new(uri, name);
            r.title = title.map(str::to_owned);
            r.description = description.map(str::to_owned);
            r.mime_type = mime_type.map(str::to_owned);
            builder.resource(r, reader)
        }
    }

    /// A template variable by name (every variable of a matched template is present).
    pub fn template_var(vars: &mut BTreeMap<String, String>, name: &str) -> String {
        vars.remove(name).unwrap_or_default()
    }
}
