//! A typed async Redfish client, with the iDRAC specifics under [`oem::dell`].
//!
//! The resource models ([`resources`]), the OData plumbing ([`odata`]), request builders
//! ([`request`]) and the attribute-registry [`dependencies`] evaluator do no IO and build
//! without default features, so the profile logic and the emulator can share them. The HTTP
//! [`Client`] (hyper + rustls + tokio) sits behind the default `client` feature; Dell's
//! OEM layer behind the default `dell` feature.
//!
//! ```no_run
//! # async fn run() -> redfish_client::Result<()> {
//! use redfish_client::{Client, Credentials, ODataId, TlsVerification};
//!
//! let client = Client::builder("https://192.0.2.10")
//!     .credentials(Credentials::new("root", "from-a-secret-store"))
//!     .tls(TlsVerification::Pinned("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".parse().unwrap()))
//!     .build()?;
//! let system = client.system(&ODataId::new("/redfish/v1/Systems/System.Embedded.1")).await?;
//! let bios = client.bios(&system.bios_link()).await?;
//! println!("{:?} runs BIOS {:?}, SysProfile = {:?}", system.model, system.bios_version, bios.attributes.get("SysProfile"));
//! client.logout().await?;
//! # Ok(()) }
//! ```

pub mod auth;
pub mod dependencies;
pub mod error;
pub mod fingerprint;
pub mod odata;
pub mod oem;
pub mod request;
pub mod resources;

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
pub mod retry;
#[cfg(feature = "client")]
pub mod tls;

pub use auth::{AuthMethod, Credentials, Password};
#[cfg(feature = "client")]
pub use client::{Client, ClientBuilder, DEFAULT_MAX_BODY, Staged, Tagged, Written};
pub use error::{Error, Result};
pub use fingerprint::Fingerprint;
pub use odata::ODataId;
#[cfg(feature = "client")]
pub use retry::RetryPolicy;
#[cfg(feature = "client")]
pub use tls::TlsVerification;
