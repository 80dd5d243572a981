//! A resource without what defines it is an error naming the URL and the missing field; every
//! other property stays optional (firmware omits things freely).

use super::client;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::bios::{Bios, BiosSettings};
use redfish_client::{AuthMethod, Error};
use rftune_tests::MockBmc;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

async fn serve(bmc: &MockBmc, at: &str, doc: serde_json::Value) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_json(doc))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
}

/// The decode error names the URL and the missing field.
fn assert_missing(err: &Error, url: &str, field: &str) {
    let Error::Decode { url: at, source, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(at, url);
    assert!(
        source.to_string().contains(&format!("missing field `{field}`")),
        "{source}"
    );
}

#[tokio::test]
async fn bios_and_its_settings_without_attributes_are_errors() {
    let bmc = MockBmc::start("r7625").await;
    serve(&bmc, dell::BIOS, json!({"@odata.id": dell::BIOS, "Id": "Bios"})).await;
    serve(&bmc, dell::BIOS_SETTINGS, json!({"@odata.id": dell::BIOS_SETTINGS})).await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.get::<Bios>(dell::BIOS).await.unwrap_err();
    assert_missing(&err, &format!("{}{}", bmc.url(), dell::BIOS), "Attributes");
    let err = c.get::<BiosSettings>(dell::BIOS_SETTINGS).await.unwrap_err();
    assert_missing(&err, &format!("{}{}", bmc.url(), dell::BIOS_SETTINGS), "Attributes");
}

#[tokio::test]
async fn a_job_queue_without_members_is_an_error_not_an_empty_queue() {
    let bmc = MockBmc::start("r7625").await;
    serve(
        &bmc,
        dell::OEM_JOBS,
        json!({"@odata.id": dell::OEM_JOBS, "Name": "JobQueue"}),
    )
    .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.dell().jobs().await.unwrap_err();
    let Error::Decode { url, source, .. } = &err else {
        panic!("{err}")
    };
    assert!(url.starts_with(&format!("{}{}", bmc.url(), dell::OEM_JOBS)), "{url}");
    assert!(source.to_string().contains("missing field `Members`"), "{source}");
}

#[tokio::test]
async fn dell_attributes_without_attributes_are_an_error() {
    let bmc = MockBmc::start("r7625").await;
    let group = AttributeGroup::System;
    serve(
        &bmc,
        &group.path(),
        json!({"@odata.id": group.path(), "Id": "System.Embedded.1"}),
    )
    .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.dell().attributes(group).await.unwrap_err();
    assert_missing(&err, &format!("{}{}", bmc.url(), group.path()), "Attributes");
}

#[tokio::test]
async fn everything_else_may_be_missing() {
    let bmc = MockBmc::start("r7625").await;
    serve(&bmc, dell::BIOS, json!({"@odata.id": dell::BIOS, "Attributes": {}})).await;
    serve(&bmc, dell::JOBS, json!({"Members": []})).await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let bios = c.get::<Bios>(dell::BIOS).await.unwrap();
    assert!(bios.attributes.is_empty() && bios.settings.is_none() && bios.attribute_registry.is_none());
    assert_eq!(c.dell().jobs().await.unwrap(), Vec::new());
}
