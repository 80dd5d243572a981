//! What DSP0266 and Dell's API guide ask of every answer, as generic Redfish clients and DMTF's
//! validators probe it: HEAD, `Allow`, `Cache-Control`, `WWW-Authenticate`, `Link`,
//! `OData-Version`, and the query options a real iDRAC advertises in `ProtocolFeaturesSupported`.

use super::{config, get, raw, start};
use redfish_client::oem::dell;
use serde_json::{Value, json};

/// `method` on `path` with Basic credentials, `headers`, and `body` as JSON.
pub(super) async fn send(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = raw()
        .request(method, format!("{url}{path}"))
        .basic_auth("root", Some("calvin"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers().get(name).map(|v| v.to_str().unwrap().to_owned())
}

fn message_ids(body: &Value) -> Vec<String> {
    body["error"]["@Message.ExtendedInfo"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["MessageId"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_version_document_points_at_v1_without_credentials() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let r = raw().get(format!("{url}/redfish")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"v1": "/redfish/v1/"}));
    let slash = raw().get(format!("{url}/redfish/v1/")).send().await.unwrap();
    assert_eq!(slash.status(), 200, "/redfish/v1/ is the service root too");
}

#[tokio::test]
async fn head_answers_every_url_with_the_headers_of_get_and_no_body() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    for path in [
        "/redfish/v1",
        dell::SYSTEM,
        dell::BIOS,
        "/redfish/v1/SessionService/Sessions",
    ] {
        let g = send(url, "GET", path, &[], None).await;
        let h = send(url, "HEAD", path, &[], None).await;
        assert_eq!(h.status(), 200, "{path}");
        for name in ["Allow", "Cache-Control", "ETag", "Link", "OData-Version"] {
            assert_eq!(header(&h, name), header(&g, name), "{path}: {name}");
        }
        assert!(h.bytes().await.unwrap().is_empty(), "{path}: HEAD has no body");
    }
}

#[tokio::test]
async fn every_answer_says_how_to_cache_it_and_which_odata_version_it_speaks() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let ok = send(url, "GET", dell::SYSTEM, &[], None).await;
    assert_eq!(header(&ok, "Cache-Control").as_deref(), Some("no-cache"));
    assert_eq!(header(&ok, "OData-Version").as_deref(), Some("4.0"));
    let missing = send(url, "GET", "/redfish/v1/Nowhere", &[], None).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(header(&missing, "Cache-Control").as_deref(), Some("no-cache"));
}

#[tokio::test]
async fn allow_lists_the_methods_on_reads_and_on_405() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let cases = [
        ("/redfish/v1", "GET, HEAD"),
        (dell::SYSTEM, "GET, HEAD, PATCH"),
        (dell::BIOS_SETTINGS, "GET, HEAD, PATCH"),
        ("/redfish/v1/SessionService/Sessions", "GET, HEAD, POST"),
        (dell::JOBS, "GET, HEAD, POST"),
    ];
    for (path, allow) in cases {
        let r = send(url, "GET", path, &[], None).await;
        assert_eq!(header(&r, "Allow").as_deref(), Some(allow), "{path}");
    }
    let put = send(url, "PUT", dell::SYSTEM, &[], Some(json!({}))).await;
    assert_eq!(put.status(), 405);
    assert_eq!(header(&put, "Allow").as_deref(), Some("GET, HEAD, PATCH"));
    let patch_root = send(url, "PATCH", "/redfish/v1", &[], Some(json!({}))).await;
    assert_eq!(patch_root.status(), 405);
    assert_eq!(header(&patch_root, "Allow").as_deref(), Some("GET, HEAD"));
    let action = format!("{}/Actions/ComputerSystem.Reset", dell::SYSTEM);
    let get_action = send(url, "GET", &action, &[], None).await;
    assert_eq!(get_action.status(), 405);
    assert_eq!(header(&get_action, "Allow").as_deref(), Some("POST"));
}

#[tokio::test]
async fn a_401_carries_a_basic_challenge() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let none = raw().get(format!("{url}{}", dell::SYSTEM)).send().await.unwrap();
    assert_eq!(none.status(), 401);
    assert!(header(&none, "WWW-Authenticate").unwrap().starts_with("Basic realm="));
    let bad = raw()
        .get(format!("{url}{}", dell::SYSTEM))
        .basic_auth("root", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert!(header(&bad, "WWW-Authenticate").is_some());
}

#[tokio::test]
async fn reads_link_the_schema_of_their_own_type_version() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let r = send(url, "GET", dell::SYSTEM, &[], None).await;
    let link = header(&r, "Link").unwrap();
    let body: Value = r.json().await.unwrap();
    let version = body["@odata.type"]
        .as_str()
        .unwrap()
        .trim_start_matches('#')
        .rsplit_once('.')
        .unwrap()
        .0
        .to_owned();
    assert_eq!(link, format!("</redfish/v1/JsonSchemas/{version}>; rel=describedby"));
    assert!(version.starts_with("ComputerSystem.v1_"), "{version}");
}

#[tokio::test]
async fn odata_version_4_0_is_served_and_any_other_is_refused_with_412() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    assert_eq!(
        send(url, "GET", dell::SYSTEM, &[("OData-Version", "4.0")], None)
            .await
            .status(),
        200
    );
    let r = send(url, "GET", dell::SYSTEM, &[("OData-Version", "4.1")], None).await;
    assert_eq!(r.status(), 412);
    assert!(
        r.json::<Value>().await.unwrap()["error"]["@Message.ExtendedInfo"][0]["Message"]
            .as_str()
            .unwrap()
            .contains("4.1")
    );
}

#[tokio::test]
async fn unknown_dollar_options_get_501_and_values_on_only_get_400() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, body) = get(url, "/redfish/v1/?$rpvunknown").await;
    assert_eq!(status, 501);
    assert_eq!(message_ids(&body), ["Base.1.12.QueryNotSupported"]);
    let (status, body) = get(url, "/redfish/v1/SessionService/Sessions?only=foo").await;
    assert_eq!(status, 400);
    assert_eq!(message_ids(&body), ["Base.1.12.QueryParameterValueFormatError"]);
    let (status, body) = get(url, &format!("{}?only", dell::SYSTEM)).await;
    assert_eq!(status, 400, "only on a resource that is no collection");
    assert_eq!(message_ids(&body), ["Base.1.12.QueryNotSupportedOnResource"]);
    // Parameters without `$` that the service does not know are ignored (DSP0266).
    assert_eq!(get(url, &format!("{}?foo=bar", dell::SYSTEM)).await.0, 200);
}

#[tokio::test]
async fn select_returns_only_the_named_properties_with_the_odata_annotations() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let path = format!(
        "{}?$select=Attributes/Lockdown.1.SystemLockdown",
        dell::AttributeGroup::Idrac.path()
    );
    let (status, body) = get(url, &path).await;
    assert_eq!(status, 200);
    assert_eq!(body["Attributes"], json!({"Lockdown.1.SystemLockdown": "Disabled"}));
    assert!(body["@odata.id"].is_string() && body["@odata.type"].is_string());
    assert!(body.get("Id").is_none());
    let (_, system) = get(url, &format!("{}?$select=PowerState,Model", dell::SYSTEM)).await;
    let mut keys: Vec<&str> = system
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| !k.starts_with('@'))
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["Model", "PowerState"]);
}

#[tokio::test]
async fn a_select_read_carries_the_etag_that_guards_writes_to_the_whole_resource() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let path = dell::AttributeGroup::Idrac.path();
    let whole = send(url, "GET", &path, &[], None).await;
    let part = send(
        url,
        "GET",
        &format!("{path}?$select=Attributes/Info.1.HWModel"),
        &[],
        None,
    )
    .await;
    assert_eq!(header(&whole, "ETag"), header(&part, "ETag"));
}

#[tokio::test]
async fn filter_only_and_paging_shape_collections() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let memory = "/redfish/v1/Systems/System.Embedded.1/Memory";
    let (_, all) = get(url, memory).await;
    let total = all["Members@odata.count"].as_u64().unwrap();
    assert!(total > 2);
    let (status, some) = get(url, &format!("{memory}?$filter=Id eq 'DIMM.Socket.A1'")).await;
    assert_eq!(status, 200);
    assert_eq!(some["Members@odata.count"], 1);
    assert_eq!(some["Members"][0]["@odata.id"], format!("{memory}/DIMM.Socket.A1"));
    let (_, page) = get(url, &format!("{memory}?$skip=1&$top=2")).await;
    assert_eq!(page["Members"].as_array().unwrap().len(), 2);
    assert_eq!(page["Members@odata.count"], total, "the count is of every member");
    let (_, managers) = get(url, "/redfish/v1/Managers?only").await;
    assert_eq!(
        managers["Id"], "iDRAC.Embedded.1",
        "the only member, not the collection"
    );
}

#[tokio::test]
async fn expand_inlines_references_outside_links_inside_links_or_both() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, chassis) = get(url, &format!("{}?$expand=~($levels=1)", dell::CHASSIS)).await;
    let managed_by = &chassis["Links"]["ManagedBy"][0];
    assert_eq!(managed_by["Id"], "iDRAC.Embedded.1", "{chassis}");
    let (_, no_links) = get(url, &format!("{}?$expand=.", dell::CHASSIS)).await;
    assert!(no_links["Links"]["ManagedBy"][0].get("Id").is_none());
    assert!(
        no_links["Power"]["PowerControl"].is_array(),
        "Power inlined: {no_links}"
    );
    let (status, _) = get(url, &format!("{}?$expand=*($levels=2)", dell::CHASSIS)).await;
    assert_eq!(status, 400, "MaxLevels is 1");
}

#[tokio::test]
async fn if_none_match_with_the_current_tag_gets_304_without_a_body() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let first = send(url, "GET", dell::SYSTEM, &[], None).await;
    let tag = header(&first, "ETag").unwrap();
    let again = send(url, "GET", dell::SYSTEM, &[("If-None-Match", tag.as_str())], None).await;
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
    let other = send(url, "GET", dell::SYSTEM, &[("If-None-Match", "W/\"0000\"")], None).await;
    assert_eq!(other.status(), 200);
}

#[tokio::test]
async fn a_post_to_a_collections_members_creates_as_a_post_to_the_collection() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let r = raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions/Members"))
        .json(&json!({"UserName": "root", "Password": "calvin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert!(header(&r, "X-Auth-Token").is_some());
}

#[tokio::test]
async fn the_chassis_identify_led_is_written_as_dells_script_writes_it_and_nothing_else_is() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let r = send(url, "GET", dell::CHASSIS, &[], None).await;
    assert_eq!(header(&r, "Allow").as_deref(), Some("GET, HEAD, PATCH"));
    let before: Value = r.json().await.unwrap();
    assert_eq!(before["LocationIndicatorActive"], false, "as the real R750 on 7.10");
    assert_eq!(before["IndicatorLED"], "Lit");
    // SetChassisIndicatorLedREDFISH.py: PATCH {"LocationIndicatorActive": true}, expects 200.
    let on = send(
        url,
        "PATCH",
        dell::CHASSIS,
        &[],
        Some(json!({"LocationIndicatorActive": true})),
    )
    .await;
    assert_eq!(on.status(), 200);
    let (_, after) = get(url, dell::CHASSIS).await;
    assert_eq!(after["LocationIndicatorActive"], true);
    assert_eq!(after["IndicatorLED"], "Lit", "the two are kept apart");
    for (body, code) in [
        (json!({"LocationIndicatorActive": "yes"}), "PropertyValueFormatError"),
        (json!({"IndicatorLED": "Purple"}), "PropertyValueFormatError"),
        (json!({"Model": "R1"}), "PropertyNotWritable"),
        (json!({"Nonsense": 1}), "PropertyUnknown"),
    ] {
        let r = send(url, "PATCH", dell::CHASSIS, &[], Some(body.clone())).await;
        assert_eq!(r.status(), 400, "{body}");
        let ids = message_ids(&r.json().await.unwrap());
        assert!(ids.iter().any(|id| id.ends_with(code)), "{body}: {ids:?}");
    }
    let (_, still) = get(url, dell::CHASSIS).await;
    assert_eq!(
        still["LocationIndicatorActive"], true,
        "a refused PATCH changes nothing"
    );
    let (_, log) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries").await;
    assert!(
        log["Members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["MessageId"].as_str().unwrap().ends_with("RAC1195")
                && e["MessageArgs"][2] == "System.Embedded.1#LocationIndicatorActive"),
        "the change is in the Lifecycle log"
    );
}

#[tokio::test]
async fn repeated_slashes_name_the_same_resource_as_dells_file_import_script_polls_it() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    // ImportSystemConfigurationLocalFilenameREDFISH.py polls `TaskService/Tasks//JID_...`.
    let (status, one) = get(url, "/redfish/v1/TaskService/Tasks").await;
    assert_eq!(status, 200);
    let (status, two) = get(url, "/redfish//v1//TaskService//Tasks/").await;
    assert_eq!(status, 200, "{two}");
    assert_eq!(one["@odata.id"], two["@odata.id"]);
    let (status, _) = get(url, "/redfish/v1/TaskService/Tasks//JID_000000000000").await;
    assert_eq!(status, 404, "a task that does not exist is still missing");
}
