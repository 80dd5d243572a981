//! Errors sent without their text (HPE's iLO sends MessageIds and arguments only): the client
//! fills them in from the message registries the service lists, each read once per client, and
//! leaves the error as sent when that fails; errors with their text cost no request.

use super::client;
use redfish_client::{AuthMethod, Client};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TARGET: &str = "/redfish/v1/systems/1/bios/Actions/Bios.ChangePasswords";

/// iLO's envelope around `messages`.
fn ilo_error(messages: Value) -> Value {
    json!({"error": {
        "code": "iLO.0.10.ExtendedInfo",
        "message": "See @Message.ExtendedInfo for more information.",
        "@Message.ExtendedInfo": messages,
    }})
}

fn base_registry() -> Value {
    json!({
        "@odata.type": "#MessageRegistry.v1_0_0.MessageRegistry",
        "Id": "Base.1.4.0", "RegistryPrefix": "Base", "RegistryVersion": "1.4.0", "Language": "en",
        "Messages": {
            "PropertyValueNotInList": {"Message": "%2 does not take %1.", "NumberOfArgs": 2,
                "ParamTypes": ["string", "string"], "Resolution": "Send a value %2 lists.", "Severity": "Warning"},
            "Success": {"Message": "Done.", "NumberOfArgs": 0, "Resolution": "None.", "Severity": "OK"}
        }
    })
}

fn ilo_registry() -> Value {
    json!({
        "Id": "iLO.2.16.0", "RegistryPrefix": "iLO", "RegistryVersion": "2.16.0",
        "Messages": {
            "BiosPasswordMismatch": {"Message": "The old BIOS password is not the one set.", "NumberOfArgs": 0,
                "Resolution": "Send the password the BIOS has now.", "Severity": "Critical"}
        }
    })
}

fn member(id: &str, registry: &str, uri: &str) -> Value {
    json!({
        "@odata.id": format!("/redfish/v1/Registries/{id}"), "Id": id, "Registry": registry,
        "Languages": ["en"], "Location": [{"Language": "en", "Uri": uri}],
    })
}

const BASE_FILE: &str = "/redfish/v1/RegistryStore/registries/en/Base.json";
const ILO_FILE: &str = "/redfish/v1/RegistryStore/registries/en/iLO.json";

/// A gzip-encoded answer, as an iLO sends its registry files.
fn gzipped(doc: &Value) -> ResponseTemplate {
    use std::io::Write as _;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&serde_json::to_vec(doc).unwrap()).unwrap();
    ResponseTemplate::new(200)
        .insert_header("Content-Type", "application/json")
        .insert_header("Content-Encoding", "gzip")
        .set_body_bytes(enc.finish().unwrap())
}

async fn mount(server: &MockServer, at: &str, answer: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(answer)
        .mount(server)
        .await;
}

/// A refused action: 400 with `messages` in iLO's envelope.
async fn refuse(server: &MockServer, messages: Value) {
    Mock::given(method("POST"))
        .and(path(TARGET))
        .respond_with(ResponseTemplate::new(400).set_body_json(ilo_error(messages)))
        .mount(server)
        .await;
}

/// Requests the server saw, as `METHOD path?query`.
async fn seen(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| match r.url.query() {
            Some(q) => format!("{} {}?{q}", r.method, r.url.path()),
            None => format!("{} {}", r.method, r.url.path()),
        })
        .collect()
}

async fn post_error(c: &Client) -> redfish_client::Error {
    c.post(TARGET, &json!({"PasswordName": "Administrator"}))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn an_ilo_error_takes_text_and_resolution_from_the_registries_read_once_per_client() {
    let server = MockServer::start().await;
    refuse(
        &server,
        json!([
            {"MessageId": "iLO.2.15.BiosPasswordMismatch"},
            {"MessageId": "Base.1.4.PropertyValueNotInList", "MessageArgs": ["Sometimes", "ProcSMT"]},
            {"MessageId": "Base.1.4.NoSuchKey"}
        ]),
    )
    .await;
    mount(
        &server,
        "/redfish/v1/Registries",
        ResponseTemplate::new(200).set_body_json(json!({
            "@odata.id": "/redfish/v1/Registries",
            "Members": [
                member("Base", "Base.1.4.0", BASE_FILE),
                // 2.16 where the id says 2.15: the same major version's highest minor serves.
                member("iLO", "iLO.2.16", ILO_FILE),
                member("Other", "Other.1.0", "/redfish/v1/RegistryStore/registries/en/Other.json"),
            ],
            "Members@odata.count": 3,
        })),
    )
    .await;
    mount(&server, BASE_FILE, gzipped(&base_registry())).await;
    mount(
        &server,
        ILO_FILE,
        ResponseTemplate::new(200).set_body_json(ilo_registry()),
    )
    .await;
    let c = client(&server.uri(), AuthMethod::Basic);
    let err = post_error(&c).await;
    assert_eq!(
        err.to_string(),
        format!(
            "POST {}{TARGET}: HTTP 400: [BiosPasswordMismatch] The old BIOS password is not the one set. Resolution: Send the password the BIOS has now.; [PropertyValueNotInList] ProcSMT does not take Sometimes. Resolution: Send a value ProcSMT lists.; [NoSuchKey]",
            server.uri()
        ),
        "text and resolution with their arguments, a key the registry lacks as sent"
    );
    assert!(err.has_code("BiosPasswordMismatch") && err.status() == Some(400));
    assert_eq!(
        err.redfish().unwrap().extended_info[0].message_severity.as_deref(),
        Some("Critical")
    );
    assert_eq!(
        seen(&server).await,
        [
            format!("POST {TARGET}"),
            "GET /redfish/v1/Registries?$expand=.($levels=1)".to_owned(),
            format!("GET {ILO_FILE}"),
            format!("GET {BASE_FILE}"),
        ],
        "the collection once with its members inline, each file once"
    );
    // The next failure costs only itself, and so does a client's clone.
    let again = post_error(&c.clone()).await;
    assert_eq!(again.to_string(), err.to_string());
    assert_eq!(seen(&server).await.len(), 5, "{:?}", seen(&server).await);
    // Another client pays again, once.
    post_error(&client(&server.uri(), AuthMethod::Basic)).await;
    assert_eq!(seen(&server).await.len(), 9);
}

#[tokio::test]
async fn members_given_as_links_are_read_one_at_a_time_the_prefix_named_first() {
    let server = MockServer::start().await;
    refuse(&server, json!([{"MessageId": "iLO.2.15.BiosPasswordMismatch"}])).await;
    // A service that leaves `$expand` aside: members as links.
    mount(
        &server,
        "/redfish/v1/Registries",
        ResponseTemplate::new(200).set_body_json(json!({
            "Members": [
                {"@odata.id": "/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60"},
                {"@odata.id": "/redfish/v1/Registries/Base/"},
                {"@odata.id": "/redfish/v1/Registries/iLO/"},
            ],
        })),
    )
    .await;
    mount(
        &server,
        "/redfish/v1/Registries/iLO/",
        ResponseTemplate::new(200).set_body_json(member("iLO", "iLO.2.15.0", ILO_FILE)),
    )
    .await;
    mount(&server, ILO_FILE, gzipped(&ilo_registry())).await;
    let c = client(&server.uri(), AuthMethod::Basic);
    let err = post_error(&c).await;
    assert!(
        err.to_string()
            .ends_with("[BiosPasswordMismatch] The old BIOS password is not the one set. Resolution: Send the password the BIOS has now."),
        "{err}"
    );
    assert_eq!(
        seen(&server).await[1..],
        [
            "GET /redfish/v1/Registries?$expand=.($levels=1)".to_owned(),
            "GET /redfish/v1/Registries/iLO/".to_owned(),
            format!("GET {ILO_FILE}"),
        ],
        "only the member its name points to"
    );
}

#[tokio::test]
async fn a_failed_lookup_leaves_the_error_as_sent_and_is_not_tried_again() {
    let server = MockServer::start().await;
    refuse(&server, json!([{"MessageId": "iLO.2.15.BiosPasswordMismatch"}])).await;
    mount(&server, "/redfish/v1/Registries", ResponseTemplate::new(500)).await;
    let c = client(&server.uri(), AuthMethod::Basic);
    let err = post_error(&c).await;
    assert_eq!(
        err.to_string(),
        format!("POST {}{TARGET}: HTTP 400: [BiosPasswordMismatch]", server.uri())
    );
    assert_eq!(err.status(), Some(400), "the original error, not the lookup's");
    assert_eq!(seen(&server).await.len(), 2, "the action, then the collection once");
    post_error(&c).await;
    assert_eq!(seen(&server).await.len(), 3, "not asked again");
}

#[tokio::test]
async fn a_registry_file_off_the_bmc_is_never_fetched() {
    let server = MockServer::start().await;
    refuse(&server, json!([{"MessageId": "iLO.2.15.BiosPasswordMismatch"}])).await;
    mount(
        &server,
        "/redfish/v1/Registries",
        ResponseTemplate::new(200).set_body_json(json!({"Members": [
            member("iLO", "iLO.2.15", "https://registries.example.invalid/iLO.json")
        ]})),
    )
    .await;
    let c = client(&server.uri(), AuthMethod::Basic);
    let err = post_error(&c).await;
    assert!(err.to_string().ends_with("HTTP 400: [BiosPasswordMismatch]"), "{err}");
    assert_eq!(seen(&server).await.len(), 2, "the action and the collection only");
}

#[tokio::test]
async fn errors_with_their_text_and_answers_that_say_it_all_cost_no_lookup() {
    let server = MockServer::start().await;
    // An iDRAC's error carries its text.
    Mock::given(method("PATCH"))
        .and(path("/redfish/v1/Systems/System.Embedded.1/Bios/Settings"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "@Message.ExtendedInfo": [{"MessageId": "IDRAC.2.9.SYS011",
                "Message": "Pending configuration values are already committed.",
                "Resolution": "Delete the job or wait for it."}]
        }})))
        .mount(&server)
        .await;
    // A missing resource, without text: the status and the URL say it.
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Systems/System.Embedded.1"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(ilo_error(json!([{"MessageId": "Base.1.4.ResourceMissingAtURI"}]))),
        )
        .mount(&server)
        .await;
    let c = client(&server.uri(), AuthMethod::Basic);
    let idrac = c
        .patch(
            "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            &json!({"Attributes": {}}),
        )
        .await
        .unwrap_err();
    assert!(
        idrac.to_string().contains("[SYS011] Pending configuration values"),
        "{idrac}"
    );
    let missing = c.get_value("/redfish/v1/Systems/System.Embedded.1").await.unwrap_err();
    assert_eq!(missing.status(), Some(404));
    assert!(
        !seen(&server).await.iter().any(|r| r.contains("Registries")),
        "{:?}",
        seen(&server).await
    );
}
