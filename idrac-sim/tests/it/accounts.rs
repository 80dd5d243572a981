//! User accounts as Dell's user scripts and DMTF's tools drive them: 16 slots, slot 1
//! reserved, creation by PATCHing an empty slot, modify, disable, delete by clearing, password
//! changes and policy, roles and what they allow, and the Lifecycle log naming who did it.

use super::{call, config, get, raw, start};
use idrac_sim::SimConfig;
use serde_json::{Value, json};

const ACCOUNTS: &str = "/redfish/v1/AccountService/Accounts";

fn ids(body: &Value) -> Vec<String> {
    let list = body["error"]["@Message.ExtendedInfo"]
        .as_array()
        .or_else(|| body["@Message.ExtendedInfo"].as_array());
    list.map(|a| {
        a.iter()
            .filter_map(|m| m["MessageId"].as_str().map(str::to_owned))
            .collect()
    })
    .unwrap_or_default()
}

async fn as_user(url: &str, user: &str, password: &str, method: &str, path: &str, body: Option<Value>) -> u16 {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = raw()
        .request(method, format!("{url}{path}"))
        .basic_auth(user, Some(password));
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn sixteen_slots_are_listed_with_root_in_slot_two_and_the_four_roles() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, list) = get(url, ACCOUNTS).await;
    assert_eq!(list["Members@odata.count"], 16);
    let (_, root) = get(url, &format!("{ACCOUNTS}/2")).await;
    assert_eq!(
        (root["UserName"].as_str(), root["RoleId"].as_str()),
        (Some("root"), Some("Administrator"))
    );
    assert_eq!(root["Password"], Value::Null, "a password is never shown");
    assert_eq!(
        root["Links"]["Role"]["@odata.id"],
        "/redfish/v1/AccountService/Roles/Administrator"
    );
    let (_, service) = get(url, "/redfish/v1/AccountService").await;
    assert_eq!(service["Roles"]["@odata.id"], "/redfish/v1/AccountService/Roles");
    let (_, roles) = get(url, "/redfish/v1/AccountService/Roles?$expand=*($levels=1)").await;
    let names: Vec<&str> = roles["Members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["RoleId"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Administrator", "Operator", "ReadOnly", "None"]);
    assert_eq!(
        roles["Members"][2]["AssignedPrivileges"],
        json!(["Login", "ConfigureSelf"])
    );
    let (status, _) = get(url, &format!("{ACCOUNTS}/17")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_account_is_created_in_an_empty_slot_used_and_cleared_again() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    // Dell's CreateDeleteIdracUsersREDFISH.py (iDRAC 9): one PATCH at the Manager's path.
    let create = json!({"UserName": "operator7", "Password": "Str0ng.pass", "RoleId": "Operator", "Enabled": true});
    let (status, body) = call(
        url,
        "PATCH",
        "/redfish/v1/Managers/iDRAC.Embedded.1/Accounts/3",
        Some(create),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, three) = get(url, &format!("{ACCOUNTS}/3")).await;
    assert_eq!(
        (
            three["UserName"].as_str(),
            three["RoleId"].as_str(),
            three["Enabled"].as_bool()
        ),
        (Some("operator7"), Some("Operator"), Some(true))
    );
    // The same account in the iDRAC attributes, as Dell's iDRAC 9 scripts read it.
    let (_, attrs) = get(
        url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
    )
    .await;
    assert_eq!(attrs["Attributes"]["Users.2.UserName"], "root");
    // The new user logs in and reads, but an Operator may not manage users.
    assert_eq!(
        as_user(
            url,
            "operator7",
            "Str0ng.pass",
            "GET",
            "/redfish/v1/Systems/System.Embedded.1",
            None
        )
        .await,
        200
    );
    let other = json!({"UserName": "intruder"});
    assert_eq!(
        as_user(
            url,
            "operator7",
            "Str0ng.pass",
            "PATCH",
            &format!("{ACCOUNTS}/4"),
            Some(other)
        )
        .await,
        403
    );
    // Disabled: no more logins.
    assert_eq!(
        call(url, "PATCH", &format!("{ACCOUNTS}/3"), Some(json!({"Enabled": false})))
            .await
            .0,
        200
    );
    assert_eq!(
        as_user(url, "operator7", "Str0ng.pass", "GET", "/redfish/v1/Systems", None).await,
        401
    );
    // DELETE is not how an iDRAC 9 deletes: 405, and clearing the name empties the slot.
    assert_eq!(call(url, "DELETE", &format!("{ACCOUNTS}/3"), None).await.0, 405);
    assert_eq!(
        call(
            url,
            "PATCH",
            &format!("{ACCOUNTS}/3"),
            Some(json!({"UserName": "", "Enabled": false}))
        )
        .await
        .0,
        200
    );
    let (_, cleared) = get(url, &format!("{ACCOUNTS}/3")).await;
    assert_eq!(
        (
            cleared["UserName"].as_str(),
            cleared["RoleId"].as_str(),
            cleared["Enabled"].as_bool()
        ),
        (Some(""), Some("None"), Some(false))
    );
}

#[tokio::test]
async fn the_idracs_ordering_and_policy_rules_refuse_what_a_real_one_refuses() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    // A password before a user name: RAC022; enabling without a password: RAC023.
    let (status, body) = call(
        url,
        "PATCH",
        &format!("{ACCOUNTS}/5"),
        Some(json!({"Password": "Abcdef1!"})),
    )
    .await;
    assert_eq!((status, ids(&body)), (400, vec!["IDRAC.2.9.RAC022".to_owned()]));
    assert_eq!(
        call(url, "PATCH", &format!("{ACCOUNTS}/5"), Some(json!({"UserName": "u5"})))
            .await
            .0,
        200
    );
    let (status, body) = call(url, "PATCH", &format!("{ACCOUNTS}/5"), Some(json!({"Enabled": true}))).await;
    assert_eq!((status, ids(&body)), (400, vec!["IDRAC.2.9.RAC023".to_owned()]));
    // Slot 1 is reserved.
    let (status, _) = call(
        url,
        "PATCH",
        &format!("{ACCOUNTS}/1"),
        Some(json!({"UserName": "anon"})),
    )
    .await;
    assert_eq!(status, 400);
    // A name another slot has.
    let (status, body) = call(
        url,
        "PATCH",
        &format!("{ACCOUNTS}/6"),
        Some(json!({"UserName": "root"})),
    )
    .await;
    assert_eq!(
        (status, ids(&body)),
        (400, vec!["Base.1.12.ResourceAlreadyExists".to_owned()])
    );
    // Over MaxPasswordLength: RAC1276.
    let long = "x".repeat(200);
    let (status, body) = call(url, "PATCH", &format!("{ACCOUNTS}/5"), Some(json!({"Password": long}))).await;
    assert_eq!((status, ids(&body)), (400, vec!["IDRAC.2.9.RAC1276".to_owned()]));
    // Some properties applied, one refused: 200 listing the refused one (DSP0266).
    let (status, body) = call(
        url,
        "PATCH",
        &format!("{ACCOUNTS}/5"),
        Some(json!({"Password": "Good.pass1", "BogusProp": 1})),
    )
    .await;
    assert_eq!(status, 200);
    assert!(ids(&body).contains(&"Base.1.12.PropertyUnknown".to_owned()), "{body}");
    assert_eq!(body["UserName"], "u5", "the answer is the account, with the messages");
    // Only annotations: NoOperation.
    let (status, body) = call(url, "PATCH", &format!("{ACCOUNTS}/5"), Some(json!({"@odata.id": "x"}))).await;
    assert_eq!((status, ids(&body)), (400, vec!["Base.1.12.NoOperation".to_owned()]));
}

#[tokio::test]
async fn a_read_only_user_may_read_and_change_only_its_own_password() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let create = json!({"UserName": "viewer", "Password": "View.er123", "RoleId": "ReadOnly", "Enabled": true});
    assert_eq!(call(url, "PATCH", &format!("{ACCOUNTS}/4"), Some(create)).await.0, 200);
    assert_eq!(
        as_user(
            url,
            "viewer",
            "View.er123",
            "GET",
            "/redfish/v1/Systems/System.Embedded.1/Bios",
            None
        )
        .await,
        200
    );
    let bios = json!({"Attributes": {"LogicalProc": "Disabled"}});
    assert_eq!(
        as_user(
            url,
            "viewer",
            "View.er123",
            "PATCH",
            "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            Some(bios)
        )
        .await,
        403
    );
    let own = json!({"Password": "New.pass456"});
    assert_eq!(
        as_user(
            url,
            "viewer",
            "View.er123",
            "PATCH",
            &format!("{ACCOUNTS}/4"),
            Some(own)
        )
        .await,
        200
    );
    assert_eq!(
        as_user(url, "viewer", "New.pass456", "GET", "/redfish/v1", None).await,
        200
    );
    assert_eq!(
        as_user(url, "viewer", "View.er123", "GET", "/redfish/v1/Systems", None).await,
        401,
        "the old password is gone"
    );
    // Sessions log in with the new account too.
    let r = raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions"))
        .json(&json!({"UserName": "viewer", "Password": "New.pass456"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
}

#[tokio::test]
async fn dells_idrac9_delete_through_the_users_attributes_clears_the_account() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let create = json!({"UserName": "tmp", "Password": "Tmp.pass123", "RoleId": "Administrator", "Enabled": true});
    assert_eq!(call(url, "PATCH", &format!("{ACCOUNTS}/7"), Some(create)).await.0, 200);
    // CreateDeleteIdracUsersREDFISH.py --delete on iDRAC 9.
    let delete = json!({"Attributes": {"Users.7.UserName": "", "Users.7.Privilege": 0, "Users.7.Enable": "Disabled",
                                       "Users.7.IPMIKey": "", "Users.7.MD5v3Key": "", "Users.7.SHA1v3Key": "",
                                       "Users.7.SHA256PasswordSalt": ""}});
    let (status, body) = call(
        url,
        "PATCH",
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
        Some(delete),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, seven) = get(url, &format!("{ACCOUNTS}/7")).await;
    assert_eq!(seven["UserName"], "");
}

#[tokio::test]
async fn the_lifecycle_log_records_who_changed_what_newest_first() {
    let fleet = start(SimConfig { ..config() }).await;
    let url = &fleet.hosts()[0].url;
    let host = &fleet.hosts()[0].host;
    let create = json!({"UserName": "auditor", "Password": "Aud.itor123", "RoleId": "ReadOnly", "Enabled": true});
    assert_eq!(call(url, "PATCH", &format!("{ACCOUNTS}/8"), Some(create)).await.0, 200);
    let staged = json!({"Attributes": {"LogicalProc": "Disabled"}});
    assert_eq!(
        call(
            url,
            "PATCH",
            "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            Some(staged)
        )
        .await
        .0,
        200
    );
    let log = host.lifecycle_log();
    let first: Vec<&str> = log.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(first[0], "IDRAC.2.9.RAC1195", "newest first: {first:?}");
    assert_eq!(log[0].1, ["root", "127.0.0.1", "BIOS.Setup.1-1#LogicalProc", "REDFISH"]);
    assert!(
        log.iter()
            .any(|(id, args)| id == "IDRAC.2.9.RAC1195" && args[2] == "iDRAC.Embedded.1#Users.8#UserName")
    );
    // Served as real iDRACs serve it: entries inline, newest first, with the fields of the
    // R750 captures.
    let (_, entries) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries").await;
    let newest = &entries["Members"][0];
    assert_eq!(newest["MessageId"], "IDRAC.2.9.RAC1195");
    assert_eq!(
        newest["Message"],
        "User root via IP 127.0.0.1 requested state / configuration change to BIOS.Setup.1-1#LogicalProc using REDFISH."
    );
    assert_eq!(newest["EntryType"], "Oem");
    assert_eq!(
        newest["@odata.type"], "#LogEntry.v1_15_0.LogEntry",
        "the 7.x tree's generation"
    );
    assert_eq!(newest["OemRecordFormat"], "Dell");
    assert_eq!(
        newest["Oem"]["Dell"]["@odata.type"],
        "#DellLCLogEntry.v1_1_0.DellLCLogEntry"
    );
    assert!(newest["Created"].as_str().unwrap().ends_with("+00:00"));
    let id = newest["Id"].as_str().unwrap();
    let (status, one) = get(
        url,
        &format!("/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries/{id}"),
    )
    .await;
    assert_eq!((status, &one["Message"]), (200, &newest["Message"]));
    // Filter by message, as a client looking for foreign changes would.
    let (_, changes) = get(
        url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries?$filter=MessageId eq 'IDRAC.2.9.RAC1195'",
    )
    .await;
    assert!(changes["Members@odata.count"].as_u64().unwrap() >= 4);
    // A failed login is recorded as well, under the name it tried.
    let r = raw()
        .get(format!("{url}/redfish/v1/Systems"))
        .basic_auth("auditor", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(host.lifecycle_log()[0].0, "IDRAC.2.9.USR0031");
}

#[tokio::test]
async fn the_lifecycle_log_pages_fifty_entries_as_dells_script_reads_it() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    for i in 0..60 {
        let body = json!({"Attributes": {"ServerTopology.1.RackSlot": i % 40 + 1}});
        let (status, b) = call(
            url,
            "PATCH",
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/System.Embedded.1",
            Some(body),
        )
        .await;
        assert_eq!(status, 200, "{b}");
    }
    // Dell's GetIdracLcLogsREDFISH.py: the log at its iDRAC 9 path, then $skip=50, 100, ...
    let (_, first) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/Logs/Lclog").await;
    assert_eq!(first["Members"].as_array().unwrap().len(), 50);
    assert_eq!(first["Members@odata.count"], 60);
    assert!(first["Members@odata.nextLink"].as_str().unwrap().ends_with("?$skip=50"));
    let (_, second) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/Logs/Lclog?$skip=50").await;
    assert_eq!(second["Members"].as_array().unwrap().len(), 10);
    let (status, past) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/Logs/Lclog?$skip=100").await;
    assert_eq!(status, 400);
    let text = past["error"]["@Message.ExtendedInfo"][0]["Message"].as_str().unwrap();
    assert!(text.contains("query parameter $skip is out of range"), "{text}");
}
