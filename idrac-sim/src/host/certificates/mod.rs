//! The iDRAC's certificates as Redfish shows them: `CertificateService` (with
//! `CertificateService.GenerateCSR` and Dell's `GetLastGeneratedCSR`), its
//! `CertificateLocations`, and the web server certificate under the Manager's
//! `NetworkProtocol/HTTPS/Certificates`, describing the certificate the emulator really serves
//! (its subject, validity and serial). Shapes are the R750 captures': iDRAC 6.00 calls the web
//! certificate `SecurityCertificate.2` (`Certificate.v1_3_0`, no serial or usage), 7.10
//! `SecurityCertificate.1` (`Certificate.v1_7_0`, with `SerialNumber` and `CertificateUsageTypes`
//! `["Web"]`); neither serves `CertificateString` or an `ActionInfo`, so the emulator does not
//! either. `GenerateCSR` takes the body Dell's GenerateCsrREDFISH.py sends (`CertificateCollection`
//! as a link, or as a bare path before iDRAC 5.00) and answers 200 with `CSRString` as the script
//! reads it; the request is signed with a fresh key. Not modelled: replacing the certificate
//! (`ReplaceCertificate`, `GenerateCSRAndImport`: 501), the Secure Boot database certificates
//! the real locations also list, and the Active Directory and LDAP certificate collections.

pub(crate) mod state;

use super::core::Host;
use super::reply::Reply;
use crate::messages;
use crate::route::{Route, exact, member, not_found, unrecorded};
use crate::synth::{CERTIFICATE_LOCATIONS, CERTIFICATE_SERVICE, HTTPS_CERTIFICATES};
use crate::tls::SUBJECT;
use serde_json::{Value, json};

/// The fields of a CSR request that name its subject, as `GenerateCSR` takes them.
const SUBJECT_FIELDS: [&str; 6] = [
    "CommonName",
    "Organization",
    "OrganizationalUnit",
    "City",
    "State",
    "Country",
];

/// The certificate service, its locations, the web server certificate (rendered where the tree
/// records none), and the certificate actions.
pub(crate) fn routes() -> Vec<Route> {
    let action = |name: &str| exact(format!("{CERTIFICATE_SERVICE}/Actions/{name}"));
    let not_replaced: crate::route::Handler = |h, r| h.certificate_not_replaced(r.id());
    vec![
        Route::get(exact(CERTIFICATE_SERVICE), |h, _| Reply::ok(h.certificate_service())).when(unrecorded),
        Route::get(exact(CERTIFICATE_LOCATIONS), |h, _| {
            Reply::ok(h.certificate_locations())
        })
        .when(unrecorded),
        Route::get(exact(HTTPS_CERTIFICATES), |h, _| Reply::ok(h.web_certificates())).when(unrecorded),
        Route::get(member(HTTPS_CERTIFICATES), |h, r| {
            h.web_certificate().map_or_else(|| not_found(r.path), Reply::ok)
        })
        .when(|h, r| r.path == h.web_certificate_path() && unrecorded(h, r)),
        Route::post(action("CertificateService.GenerateCSR"), |h, r| {
            r.with_json(|b| h.generate_csr(b))
        }),
        Route::post(action("Oem/DellCertificateService.GetLastGeneratedCSR"), |h, _| {
            h.last_generated_csr()
        }),
        Route::post(action("CertificateService.ReplaceCertificate"), not_replaced),
        Route::post(action("Oem/DellCertificateService.GenerateCSRAndImport"), not_replaced),
    ]
}

impl Host {
    /// The web server certificate's path: `SecurityCertificate.1` on 7.x, `.2` on 6.x.
    pub fn web_certificate_path(&self) -> String {
        let n = if self.is_7x() { 1 } else { 2 };
        format!("{HTTPS_CERTIFICATES}/SecurityCertificate.{n}")
    }

    /// `GET CertificateService`.
    pub fn certificate_service(&self) -> Value {
        let oem = if self.is_7x() {
            json!({
                "#DellCertificateService.GetLastGeneratedCSR": {
                    "target": format!("{CERTIFICATE_SERVICE}/Actions/Oem/DellCertificateService.GetLastGeneratedCSR"),
                },
                "#DellCertificateService.GenerateCSRAndImport": {
                    "target": format!("{CERTIFICATE_SERVICE}/Actions/Oem/DellCertificateService.GenerateCSRAndImport"),
                },
            })
        } else {
            json!({
                "DellCertificateService.v1_0_0#DellCertificateService.GetLastGeneratedCSR": {
                    "target": format!("{CERTIFICATE_SERVICE}/Actions/Oem/DellCertificateService.GetLastGeneratedCSR"),
                },
            })
        };
        json!({
            "@odata.context": "/redfish/v1/$metadata#CertificateService.CertificateService",
            "@odata.id": CERTIFICATE_SERVICE,
            "@odata.type": "#CertificateService.v1_0_4.CertificateService",
            "Actions": {
                "#CertificateService.GenerateCSR": {
                    "target": format!("{CERTIFICATE_SERVICE}/Actions/CertificateService.GenerateCSR"),
                },
                "#CertificateService.ReplaceCertificate": {
                    "target": format!("{CERTIFICATE_SERVICE}/Actions/CertificateService.ReplaceCertificate"),
                },
                "Oem": oem,
            },
            "CertificateLocations": {"@odata.id": CERTIFICATE_LOCATIONS},
            "Description": "Certificate Service",
            "Id": "CertificateService",
            "Name": "Certificate Service",
        })
    }

    /// `GET CertificateService/CertificateLocations`: the web server certificate.
    pub fn certificate_locations(&self) -> Value {
        json!({
            "@odata.context": "/redfish/v1/$metadata#CertificateLocations.CertificateLocations",
            "@odata.id": CERTIFICATE_LOCATIONS,
            "@odata.type": "#CertificateLocations.v1_0_2.CertificateLocations",
            "Description": "The CertificateLocations schema defines a resource that an administrator can use in order to locate all certificates installed on a given service.",
            "Id": "CertificateLocations",
            "Links": {
                "Certificates": [{"@odata.id": self.web_certificate_path()}],
                "Certificates@odata.count": 1,
            },
            "Name": "Certificate Locations",
        })
    }

    /// `GET NetworkProtocol/HTTPS/Certificates`.
    pub fn web_certificates(&self) -> Value {
        json!({
            "@odata.context": "/redfish/v1/$metadata#CertificateCollection.CertificateCollection",
            "@odata.id": HTTPS_CERTIFICATES,
            "@odata.type": "#CertificateCollection.CertificateCollection",
            "Description": "A Collection of Webserver SSL  Certificate resource instances.",
            "Members": [{"@odata.id": self.web_certificate_path()}],
            "Members@odata.count": 1,
            "Name": "Certificate Collection",
        })
    }

    /// `GET NetworkProtocol/HTTPS/Certificates/SecurityCertificate.N`, or `None` when the fleet
    /// gave the host no certificate to describe.
    pub fn web_certificate(&self) -> Option<Value> {
        let cert = self.web_certificate.as_ref()?;
        let name: serde_json::Map<String, Value> = SUBJECT
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .chain([("Email".to_owned(), Value::Null)])
            .collect();
        let path = self.web_certificate_path();
        let id = path.rsplit('/').next().unwrap_or_default().to_owned();
        let mut doc = json!({
            "@odata.context": "/redfish/v1/$metadata#Certificate.Certificate",
            "@odata.id": path,
            "@odata.type": if self.is_7x() { "#Certificate.v1_7_0.Certificate" } else { "#Certificate.v1_3_0.Certificate" },
            "Description": "IDRAC Web server SSL digital certificate",
            "Id": id,
            "Issuer": name.clone(),
            "Name": "Server Certificates",
            "Subject": name,
            "ValidNotAfter": format!("{}T00:00:00+00:00", cert.not_after),
            "ValidNotBefore": format!("{}T00:00:00+00:00", cert.not_before),
        });
        if self.is_7x() {
            doc["SerialNumber"] = json!(cert.serial);
            doc["CertificateUsageTypes"] = json!(["Web"]);
        }
        Some(doc)
    }

    /// `POST CertificateService.GenerateCSR`: a certificate signing request for the web
    /// server, for the subject the body names (`CommonName`, `Country`, ... and
    /// `AlternativeNames`), into the collection it names.
    pub fn generate_csr(&self, body: &Value) -> Reply {
        let action = "GenerateCSR";
        let collection = body
            .get("CertificateCollection")
            .and_then(|c| c.get("@odata.id").or(Some(c)))
            .and_then(Value::as_str);
        let Some(collection) = collection else {
            return Reply::error(400, vec![action_parameter_missing(action, "CertificateCollection")]);
        };
        if collection.trim_end_matches('/') != HTTPS_CERTIFICATES {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    action,
                    "CertificateCollection",
                    Some(collection),
                    &[HTTPS_CERTIFICATES],
                )],
            );
        }
        for required in ["CommonName", "Country"] {
            if !body.get(required).is_some_and(Value::is_string) {
                return Reply::error(400, vec![action_parameter_missing(action, required)]);
            }
        }
        let parts: Vec<(&str, String)> = SUBJECT_FIELDS
            .iter()
            .filter_map(|f| Some((*f, body.get(*f)?.as_str()?.to_owned())))
            .collect();
        let names: Vec<String> = body
            .get("AlternativeNames")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect();
        let csr = (|| {
            let mut params = rcgen::CertificateParams::new(names)?;
            params.distinguished_name = crate::tls::distinguished_name(&parts);
            let key = rcgen::KeyPair::generate()?;
            params.serialize_request(&key)?.pem()
        })();
        let csr = match csr {
            Ok(csr) => csr,
            Err(e) => {
                return Reply::error(
                    400,
                    vec![messages::base(
                        "ActionParameterValueFormatError",
                        &format!("The value of a parameter of the action {action} cannot be used: {e}."),
                        &[action],
                        "Correct the value of the parameter in the request body and resubmit the request if the operation failed.",
                        None,
                    )],
                );
            }
        };
        self.change().certificates.last_csr = Some(csr.clone());
        Reply::ok(json!({
            "CSRString": csr,
            "CertificateCollection": {"@odata.id": HTTPS_CERTIFICATES},
        }))
    }

    /// `POST DellCertificateService.GetLastGeneratedCSR`: the request `GenerateCSR` last made.
    pub fn last_generated_csr(&self) -> Reply {
        match self.lock().certificates.last_csr.clone() {
            Some(csr) => Reply::ok(json!({"CSRString": csr})),
            None => Reply::error(
                400,
                vec![messages::base(
                    "ResourceNotFound",
                    "The requested resource of type CertificateSigningRequest named last was not found.",
                    &["CertificateSigningRequest", "last"],
                    "Generate a certificate signing request with CertificateService.GenerateCSR first.",
                    None,
                )],
            ),
        }
    }

    /// `ReplaceCertificate` and `GenerateCSRAndImport`: the emulator keeps the certificate it
    /// started with.
    pub fn certificate_not_replaced(&self, action: &str) -> Reply {
        Reply::error(
            501,
            vec![messages::base(
                "ActionNotSupported",
                &format!("The action {action} is not supported by the resource."),
                &[action],
                "The emulator serves the certificate it generated at start and does not replace it.",
                None,
            )],
        )
    }
}

/// Base `ActionParameterMissing` for `parameter` of `action`.
fn action_parameter_missing(action: &str, parameter: &str) -> Value {
    messages::base(
        "ActionParameterMissing",
        &format!("The action {action} requires the parameter {parameter} to be present in the request body."),
        &[action, parameter],
        "Supply the action with the required parameter in the request body when the request is resubmitted.",
        None,
    )
}
