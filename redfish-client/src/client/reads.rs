//! Reads: `GET` decoded into a type (garbled answers read again), collections (pages and
//! `$expand`), and the typed resources rftune reads.

use super::Client;
use super::transport::RawResponse;
use crate::auth::Authorization;
use crate::error::{Result, decode_json};
use crate::odata::{Collection, Link, ODataId};
use crate::request;
use crate::resources::attribute_registry::AttributeRegistry;
use crate::resources::bios::{Bios, BiosSettings};
use crate::resources::computer_system::{ComputerSystem, Memory};
use crate::resources::power::{EnvironmentMetrics, Power};
use crate::resources::service_root::ServiceRoot;
use http::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Instant;
use url::Url;

/// A resource as read, with the headers it came with (never the credential headers): the
/// `ETag` a conditional write of it carries as `If-Match`, and any other a caller needs.
#[derive(Debug, Clone)]
pub struct Answer<T> {
    /// The resource.
    pub value: T,
    /// The response headers.
    pub headers: http::HeaderMap,
}

impl<T> Answer<T> {
    /// A header's value, when present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `ETag` (`W/"…"` or `"…"`) without the `-gzip` some BMCs add inside the quotes;
    /// `None` when the service sent none.
    pub fn etag(&self) -> Option<String> {
        self.header("ETag").map(super::transport::sanitize_etag)
    }
}

impl Client {
    /// `GET path`, decoded as `T`; decode errors name the JSON path. A body cut short on the
    /// way is read again within the retry policy; one that is not JSON at all (an HTML page)
    /// or JSON of the wrong shape is an error at once.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        self.get_answer(path).await.map(|a| a.value)
    }

    /// [`Client::get`], with the response headers (the `ETag` among them).
    pub async fn get_answer<T: DeserializeOwned>(&self, path: &str) -> Result<Answer<T>> {
        self.read_decoded(|| self.execute(Method::GET, path, None, None)).await
    }

    /// Reads with `read` and decodes the body as `T`, reading again within the retry policy
    /// while the answer comes cut short.
    async fn read_decoded<T, F, Fut>(&self, mut read: F) -> Result<Answer<T>>
    where
        T: DeserializeOwned,
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<(Url, RawResponse)>>,
    {
        let start = Instant::now();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let (url, raw) = read().await?;
            let decoded = decode_json("GET", url.as_str(), &raw.body);
            let wait = self.inner.retry.backoff(attempts - 1, None, fastrand::f64());
            match decoded {
                Err(e) if e.is_garbled() && self.inner.retry.allows(attempts, start.elapsed(), wait) => {
                    tracing::debug!(%url, attempt = attempts, error = %e, "garbled answer; reading again");
                    tokio::time::sleep(wait).await;
                }
                other => {
                    return other.map(|value| Answer {
                        value,
                        headers: raw.headers,
                    });
                }
            }
        }
    }

    /// `GET path` as raw JSON.
    pub async fn get_value(&self, path: &str) -> Result<Value> {
        self.get(path).await
    }

    /// `GET path`, the body as it came with its status: for documents that are not JSON (an
    /// iDRAC answers an XML configuration export at its task's URL). The caller judges the
    /// body: nothing here knows what a whole one looks like.
    pub async fn get_bytes(&self, path: &str) -> Result<(u16, Vec<u8>)> {
        let (_, raw) = self.execute(Method::GET, path, None, None).await?;
        Ok((raw.status, raw.body))
    }

    /// All members of a collection, following `Members@odata.nextLink` pages. `T` is [`Link`]
    /// for plain collections.
    pub async fn members<T: DeserializeOwned>(&self, collection: &str) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let mut next = Some(collection.to_owned());
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(self.protocol_error(
                    "GET",
                    collection,
                    "more than 1000 pages of Members@odata.nextLink; refusing to loop",
                ));
            }
            let c: Collection<T> = self.get(&page).await?;
            out.extend(c.members);
            next = c.next_link;
        }
        Ok(out)
    }

    /// All members of a collection as full resources, in one request per page when the
    /// service honours `$expand`; members it still returns as bare links are fetched one by one.
    pub async fn expanded_members<T: DeserializeOwned>(&self, collection: &str) -> Result<Vec<T>> {
        let values: Vec<Value> = self.members(&request::expand(collection, 1)).await?;
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            out.push(self.member(collection, v).await?);
        }
        Ok(out)
    }

    /// The first `n` members of a collection, in the service's order (newest first for a log),
    /// as full resources: one request when the service honours `$top` and serves members
    /// inline (iDRAC log entries do, 50 to a page), more pages only when `n` needs them. A
    /// service that rejects `$top` with 400 is read page by page without it, and the rest cut.
    pub async fn first_members<T: DeserializeOwned>(&self, collection: &str, n: usize) -> Result<Vec<T>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let first: Collection<Value> = match self.get(&request::top(collection, n)).await {
            Ok(page) => page,
            Err(e) if e.status() == Some(400) => self.get(collection).await?,
            Err(e) => return Err(e),
        };
        let mut values = first.members;
        let mut next = first.next_link;
        let mut pages = 1;
        while values.len() < n
            && let Some(page) = next.take()
        {
            pages += 1;
            if pages > 1000 {
                return Err(self.protocol_error(
                    "GET",
                    collection,
                    "more than 1000 pages of Members@odata.nextLink; refusing to loop",
                ));
            }
            let c: Collection<Value> = self.get(&page).await?;
            values.extend(c.members);
            next = c.next_link;
        }
        values.truncate(n);
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            out.push(self.member(collection, v).await?);
        }
        Ok(out)
    }

    /// A member as a collection served it: decoded when inline, read when a bare link.
    async fn member<T: DeserializeOwned>(&self, collection: &str, v: Value) -> Result<T> {
        let bare_link = v
            .as_object()
            .is_some_and(|o| o.len() == 1 && o.contains_key("@odata.id"));
        if bare_link {
            let link: Link = serde_json::from_value(v)
                .map_err(|e| self.protocol_error("GET", collection, format!("member link: {e}")))?;
            self.get(link.odata_id.path()).await
        } else {
            let url = self.url(collection)?;
            let bytes = serde_json::to_vec(&v).unwrap_or_default();
            decode_json("GET", url.as_str(), &bytes)
        }
    }

    /// The service root (`/redfish/v1`). Redfish serves it without authentication, so this
    /// neither logs in nor sends credentials.
    pub async fn service_root(&self) -> Result<ServiceRoot> {
        self.read_decoded(|| self.read_root_anonymously())
            .await
            .map(|a| a.value)
    }

    /// `GET /redfish/v1` without credentials (it needs none, and it makes the first handshake
    /// before any credential is sent).
    pub(super) async fn read_root_anonymously(&self) -> Result<(Url, RawResponse)> {
        self.send_with_retry(Method::GET, request::SERVICE_ROOT, None, &Authorization::None, None)
            .await
    }

    /// A computer system.
    pub async fn system(&self, system: &ODataId) -> Result<ComputerSystem> {
        self.get(system.path()).await
    }

    /// The links of every system in `/redfish/v1/Systems`.
    pub async fn systems(&self) -> Result<Vec<ODataId>> {
        let links: Vec<Link> = self.members("/redfish/v1/Systems").await?;
        Ok(links.into_iter().map(|l| l.odata_id).collect())
    }

    /// The DIMMs of a system (populated or not, as the service lists them).
    pub async fn memory(&self, system: &ComputerSystem) -> Result<Vec<Memory>> {
        let collection = system
            .memory
            .as_ref()
            .map(|l| l.odata_id.clone())
            .unwrap_or_else(|| system.odata_id.join("Memory"));
        self.expanded_members(collection.path()).await
    }

    /// Current BIOS values.
    pub async fn bios(&self, bios: &ODataId) -> Result<Bios> {
        self.get(bios.path()).await
    }

    /// Pending BIOS values (the settings object of `bios`).
    pub async fn pending_bios(&self, bios: &Bios) -> Result<BiosSettings> {
        self.get(bios.settings_object().path()).await
    }

    /// The attribute registry `bios` names, found through `/redfish/v1/Registries/<name>`
    /// (the DMTF way; iDRAC also serves it directly at `Bios/BiosRegistry`).
    pub async fn attribute_registry(&self, bios: &Bios) -> Result<AttributeRegistry> {
        let name = bios
            .attribute_registry
            .as_deref()
            .ok_or_else(|| self.protocol_error("GET", bios.odata_id.path(), "Bios has no AttributeRegistry"))?;
        let pointer_path = format!("/redfish/v1/Registries/{name}");
        let pointer: Value = self.get(&pointer_path).await?;
        let location = pointer["Location"]
            .as_array()
            .and_then(|locs| {
                locs.iter()
                    .find(|l| l["Language"].as_str().is_none_or(|lang| lang == "en"))
                    .or_else(|| locs.first())
            })
            .and_then(|l| l["Uri"].as_str())
            .ok_or_else(|| self.protocol_error("GET", &pointer_path, "registry pointer has no Location[].Uri"))?;
        self.get(ODataId::new(location).path()).await
    }

    /// The classic power resource of a chassis.
    pub async fn power(&self, chassis: &ODataId) -> Result<Power> {
        self.get(chassis.join("Power").path()).await
    }

    /// The environment metrics of a chassis (iDRAC 7.x and other newer services).
    pub async fn environment_metrics(&self, chassis: &ODataId) -> Result<EnvironmentMetrics> {
        self.get(chassis.join("EnvironmentMetrics").path()).await
    }
}
