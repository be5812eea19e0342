//! Resources and resource templates: registration, listing, reading (SPEC-NOTES §11.3).
//!
//! A read goes to the resource registered under that exact URI, else to the first template
//! (in registration order) whose RFC 6570 pattern matches; otherwise -32002.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use switchboard_jsonrpc::BoxFuture;
use switchboard_types::ErrorObject;
use switchboard_types::resources::{ReadResourceResult, Resource, ResourceTemplate};

use crate::context::Context;
use crate::tool::RegistryError;
use crate::uri_template::{TemplateError, UriTemplate};

/// What a resource reader gets.
#[derive(Debug)]
#[non_exhaustive]
pub struct ResourceRead {
    /// The requested URI.
    pub uri: String,
    /// The template variables, for a templated resource (empty otherwise).
    pub vars: BTreeMap<String, String>,
    /// The request's context.
    pub cx: Context,
}

/// A boxed resource reader.
pub(crate) type ResourceReader =
    Arc<dyn Fn(ResourceRead) -> BoxFuture<Result<ReadResourceResult, ErrorObject>> + Send + Sync>;

fn boxed<F, Fut>(f: F) -> ResourceReader
where
    F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
{
    Arc::new(move |r| Box::pin(f(r)))
}

#[derive(Clone)]
struct TemplateEntry {
    template: ResourceTemplate,
    pattern: UriTemplate,
    reader: ResourceReader,
}

/// The resources and templates of a server.
#[derive(Clone, Default)]
pub(crate) struct ResourceRegistry {
    resources: Vec<Resource>,
    readers: HashMap<String, ResourceReader>,
    templates: Vec<TemplateEntry>,
}

impl fmt::Debug for ResourceRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceRegistry")
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .finish()
    }
}

/// A registration error for resources.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// A duplicate URI or template.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A template that does not parse.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

impl ResourceRegistry {
    /// Adds a resource, listed in registration order.
    ///
    /// # Errors
    /// A duplicate URI.
    pub(crate) fn insert<F, Fut>(
        &mut self,
        resource: Resource,
        reader: F,
    ) -> Result<(), ResourceError>
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        if self.readers.contains_key(&resource.uri) {
            return Err(RegistryError::Duplicate {
                kind: "resource",
                name: resource.uri,
            }
            .into());
        }
        self.readers.insert(resource.uri.clone(), boxed(reader));
        self.resources.push(resource);
        Ok(())
    }

    /// Removes a resource.
    ///
    /// # Errors
    /// No resource has this URI.
    pub(crate) fn remove(&mut self, uri: &str) -> Result<(), ResourceError> {
        if self.readers.remove(uri).is_none() {
            return Err(RegistryError::NotFound {
                kind: "resource",
                name: uri.to_owned(),
            }
            .into());
        }
        self.resources.retain(|r| r.uri != uri);
        Ok(())
    }

    /// Adds a resource template.
    ///
    /// # Errors
    /// A template that does not parse, or a duplicate.
    pub(crate) fn insert_template<F, Fut>(
        &mut self,
        template: ResourceTemplate,
        reader: F,
    ) -> Result<(), ResourceError>
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        if self
            .templates
            .iter()
            .any(|t| t.template.uri_template == template.uri_template)
        {
            return Err(RegistryError::Duplicate {
                kind: "resource template",
                name: template.uri_template,
            }
            .into());
        }
        let pattern = UriTemplate::parse(&template.uri_template)?;
        self.templates.push(TemplateEntry {
            template,
            pattern,
            reader: boxed(reader),
        });
        Ok(())
    }

    /// Removes a resource template.
    ///
    /// # Errors
    /// No template has this `uriTemplate`.
    pub(crate) fn remove_template(&mut self, uri_template: &str) -> Result<(), ResourceError> {
        let before = self.templates.len();
        self.templates
            .retain(|t| t.template.uri_template != uri_template);
        if self.templates.len() == before {
            return Err(RegistryError::NotFound {
                kind: "resource template",
                name: uri_template.to_owned(),
            }
            .into());
        }
        Ok(())
    }

    /// Whether anything is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    /// The resources, in registration order.
    pub(crate) fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The templates, in registration order.
    pub(crate) fn templates(&self) -> Vec<ResourceTemplate> {
        self.templates.iter().map(|t| t.template.clone()).collect()
    }

    /// Finds the reader for `uri` and the template variables.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(ResourceReader, BTreeMap<String, String>)> {
        if let Some(r) = self.readers.get(uri) {
            return Some((r.clone(), BTreeMap::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.pattern.matches(uri).map(|vars| (t.reader.clone(), vars)))
    }
}
