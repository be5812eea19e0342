//! # switchboard-auth
//!
//! Authorization for MCP over Streamable HTTP (SPEC-NOTES §7, `[AU-*]`): what both sides of
//! OAuth 2.1 share. The resource server (our MCP server) publishes metadata and answers with
//! Bearer challenges; the client reads them to find the authorization server.
//!
//! | module | role |
//! |---|---|
//! | `metadata` | the documents: protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414 and OpenID discovery), client metadata (RFC 7591 and client ID metadata documents), and their well-known URLs ([`protected_resource_metadata_path`]) |
//! | `challenge` | `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3), written and parsed: [`BearerChallenge`], [`parse_challenges`] |
//! | `scope` | scope sets (RFC 6749 §3.3): parsed, compared, joined: [`ScopeSet`] |
//! | `dpop` (features `client`, `resource`) | DPoP (RFC 9449) shared by both sides: JWK thumbprints, a proof's form and signature checked |
//! | `client` (feature `client`) | the OAuth 2.1 client: discovery, registration, PKCE, tokens, step-up |
//! | [`resource`] | the resource server: [`resource::TokenValidator`], [`resource::AuthInfo`], [`resource::ScopePolicy`]; with feature `resource`, the JWT (RFC 9068, JWKS) and introspection (RFC 7662) validators |

mod challenge;
#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "client", feature = "resource"))]
pub mod dpop;
mod metadata;
pub mod resource;
mod scope;
mod secret_file;

pub use challenge::{BearerChallenge, Challenge, ChallengeError, parse_challenges};
pub use metadata::{
    AuthorizationServerMetadata, ClientMetadata, ProtectedResourceMetadata,
    protected_resource_metadata_path,
};
pub use scope::ScopeSet;
pub use secret_file::read_secret_file;
