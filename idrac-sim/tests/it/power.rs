//! Power readings follow state, load and settings.

use super::{client, config, eventually, raw, start};
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::bios::Attributes;
use redfish_client::resources::computer_system::ResetType;

async fn load(url: &str, utilization: f64) {
    let r = raw()
        .post(format!("{url}/_sim/load"))
        .json(&serde_json::json!({"utilization": utilization}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
}

#[tokio::test]
async fn readings_follow_load_cap_and_power_state() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let c = client(&fleet, 0);
    let chassis = ODataId::new(dell::CHASSIS);
    let idle = c.power(&chassis).await.unwrap().consumed_watts().unwrap();
    load(url, 1.0).await;
    let busy = c.power(&chassis).await.unwrap().consumed_watts().unwrap();
    assert!(busy > idle * 1.5, "idle {idle} W, busy {busy} W");
    let env = c
        .environment_metrics(&chassis)
        .await
        .unwrap()
        .power_watts
        .unwrap()
        .reading
        .unwrap();
    assert!((env - busy).abs() < busy * 0.05, "both sources agree: {env} vs {busy}");
    let cap: Attributes = [
        ("ServerPwr.1.PowerCapSetting".to_owned(), "Enabled".into()),
        ("ServerPwr.1.PowerCapValue".to_owned(), 600.into()),
    ]
    .into_iter()
    .collect();
    c.dell().set_attributes(AttributeGroup::System, &cap).await.unwrap();
    let capped = c.power(&chassis).await.unwrap().consumed_watts().unwrap();
    assert!(capped <= 600.0, "{capped}");
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceOff).await.unwrap();
    let off = c.power(&chassis).await.unwrap().consumed_watts().unwrap();
    assert!(off < 20.0, "{off}");
    assert_eq!(
        raw()
            .post(format!("{url}/_sim/load"))
            .json(&serde_json::json!({"utilization": 2}))
            .send()
            .await
            .unwrap()
            .status(),
        400
    );
    c.reset(&system, ResetType::On).await.unwrap();
    eventually("power back", || async {
        let w = c.power(&chassis).await.ok()?.consumed_watts()?;
        (w > 100.0).then_some(w)
    })
    .await;
}

#[tokio::test]
async fn same_seed_same_readings() {
    let a = start(config()).await;
    let b = start(config()).await;
    let ca = client(&a, 0);
    let cb = client(&b, 0);
    let chassis = ODataId::new(dell::CHASSIS);
    for _ in 0..5 {
        let x = ca.power(&chassis).await.unwrap().consumed_watts();
        let y = cb.power(&chassis).await.unwrap().consumed_watts();
        assert_eq!(x, y);
    }
}
