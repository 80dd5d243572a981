//! The certificate service: the web server certificate it describes is the one the emulator
//! serves, in the shapes of the R750 captures (7.10 on the r7625 tree, 6.00 on the r7525), and
//! GenerateCSR answers as Dell's GenerateCsrREDFISH.py reads it.

use super::{config, start};
use base64::Engine;
use idrac_sim::{ModelSource, SimConfig};
use serde_json::{Value, json};

/// HTTPS to the emulator's self-signed certificate (loopback only), Basic auth.
async fn https(url: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut req = client
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("{url}{path}"),
        )
        .basic_auth("root", Some("calvin"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The DER bytes of the first PEM block of `pem`.
fn der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD.decode(body).unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn tls(model: &str) -> SimConfig {
    SimConfig {
        tls: true,
        model: ModelSource::Builtin(model.to_owned()),
        ..config()
    }
}

#[tokio::test]
async fn the_web_certificate_described_is_the_one_served_as_on_a_real_7x_idrac() {
    let fleet = start(tls("r7625")).await;
    let url = &fleet.hosts()[0].url;
    let (_, root) = https(url, "GET", "/redfish/v1", None).await;
    assert_eq!(
        root["CertificateService"]["@odata.id"],
        "/redfish/v1/CertificateService"
    );
    let (status, service) = https(url, "GET", "/redfish/v1/CertificateService", None).await;
    assert_eq!(status, 200);
    assert_eq!(service["@odata.type"], "#CertificateService.v1_0_4.CertificateService");
    assert!(service["Actions"]["#CertificateService.GenerateCSR"]["target"].is_string());
    assert!(service["Actions"]["Oem"]["#DellCertificateService.GetLastGeneratedCSR"].is_object());
    // NetworkProtocol → HTTPS.Certificates → the certificate, also listed by the locations.
    let (_, protocol) = https(
        url,
        "GET",
        "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol",
        None,
    )
    .await;
    let collection = protocol["HTTPS"]["Certificates"]["@odata.id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, members) = https(url, "GET", &collection, None).await;
    let path = members["Members"][0]["@odata.id"].as_str().unwrap().to_owned();
    assert!(path.ends_with("/SecurityCertificate.1"), "{path}");
    let (_, locations) = https(url, "GET", "/redfish/v1/CertificateService/CertificateLocations", None).await;
    assert_eq!(locations["Links"]["Certificates"], json!([{"@odata.id": path}]));
    let (status, cert) = https(url, "GET", &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(cert["@odata.type"], "#Certificate.v1_7_0.Certificate");
    assert_eq!(cert["CertificateUsageTypes"], json!(["Web"]));
    assert_eq!(cert["Subject"], cert["Issuer"], "self-signed");
    assert_eq!(cert["Subject"]["Organization"], "Dell Inc.");
    assert_eq!(cert["Subject"]["Country"], "US");
    // What the document says is in the certificate the TLS handshake presents.
    let served = der(fleet.certificate_pem().unwrap());
    let serial = cert["SerialNumber"].as_str().unwrap();
    assert_eq!(serial.len(), 40, "{serial}");
    let bytes: Vec<u8> = (0..serial.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&serial[i..i + 2], 16).unwrap())
        .collect();
    assert!(
        contains(&served, &bytes),
        "the serial {serial} is the served certificate's"
    );
    assert!(contains(&served, b"idrac-SIM") && contains(&served, b"Round Rock"));
    let (before, after) = (
        cert["ValidNotBefore"].as_str().unwrap(),
        cert["ValidNotAfter"].as_str().unwrap(),
    );
    let year = |t: &str| t[..4].parse::<i32>().unwrap();
    assert_eq!(year(after) - year(before), 10, "{before} .. {after}");
    // A UTCTime validity: YYMMDD000000Z of both dates.
    let utc = |t: &str| format!("{}{}{}000000Z", &t[2..4], &t[5..7], &t[8..10]);
    assert!(contains(&served, utc(before).as_bytes()), "{before}");
    assert!(contains(&served, utc(after).as_bytes()), "{after}");
}

#[tokio::test]
async fn a_6x_tree_names_the_certificate_as_idrac_6_00_does() {
    let fleet = start(tls("r7525")).await;
    let url = &fleet.hosts()[0].url;
    let (_, members) = https(
        url,
        "GET",
        "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol/HTTPS/Certificates",
        None,
    )
    .await;
    let path = members["Members"][0]["@odata.id"].as_str().unwrap().to_owned();
    assert!(path.ends_with("/SecurityCertificate.2"), "{path}");
    let (_, cert) = https(url, "GET", &path, None).await;
    assert_eq!(cert["@odata.type"], "#Certificate.v1_3_0.Certificate");
    assert!(cert.get("SerialNumber").is_none() && cert.get("CertificateUsageTypes").is_none());
    let (_, service) = https(url, "GET", "/redfish/v1/CertificateService", None).await;
    assert!(
        service["Actions"]["Oem"]["DellCertificateService.v1_0_0#DellCertificateService.GetLastGeneratedCSR"]
            .is_object(),
        "{service}"
    );
}

#[tokio::test]
async fn generate_csr_answers_as_dells_script_reads_it_and_is_kept_as_the_last() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let action = "/redfish/v1/CertificateService/Actions/CertificateService.GenerateCSR";
    let last = "/redfish/v1/CertificateService/Actions/Oem/DellCertificateService.GetLastGeneratedCSR";
    let (status, none) = super::post(url, last, json!({})).await;
    assert_eq!(status, 400, "no CSR yet: {none}");
    // GenerateCsrREDFISH.py's body on iDRAC 5.00 and later (a link), and before (a path).
    let collection = "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol/HTTPS/Certificates";
    for form in [json!({"@odata.id": collection}), json!(collection)] {
        let body = json!({
            "CertificateCollection": form,
            "City": "Austin", "CommonName": "idrac-lab1.example.test", "Country": "US",
            "Organization": "Lab", "OrganizationalUnit": "Ops", "State": "Texas",
            "AlternativeNames": ["idrac-lab1"],
        });
        let (status, answer) = super::post(url, action, body).await;
        assert_eq!(status, 200, "{answer}");
        let csr = answer["CSRString"].as_str().unwrap();
        assert!(csr.starts_with("-----BEGIN CERTIFICATE REQUEST-----"), "{csr}");
        let request = der(csr);
        assert!(contains(&request, b"idrac-lab1.example.test") && contains(&request, b"Austin"));
        let (status, kept) = super::post(url, last, json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(kept["CSRString"], answer["CSRString"]);
    }
    // What the action needs, and what it refuses.
    let (status, missing) = super::post(url, action, json!({"CommonName": "x", "Country": "US"})).await;
    assert_eq!(status, 400);
    assert!(missing.to_string().contains("ActionParameterMissing"), "{missing}");
    let elsewhere = json!({"CertificateCollection": {"@odata.id": "/redfish/v1/AccountService/LDAP/Certificates"},
                           "CommonName": "x", "Country": "US"});
    let (status, _) = super::post(url, action, elsewhere).await;
    assert_eq!(status, 400, "only the web server's collection is modelled");
    let replace = "/redfish/v1/CertificateService/Actions/CertificateService.ReplaceCertificate";
    let (status, refused) = super::post(
        url,
        replace,
        json!({"CertificateString": "-", "CertificateType": "PEM"}),
    )
    .await;
    assert_eq!(status, 501, "{refused}");
}
