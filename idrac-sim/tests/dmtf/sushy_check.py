"""Drives `rftune sim` through OpenStack sushy and sushy-oem-idrac (Ironic's Dell layer) as
Ironic's idrac-redfish driver reads and acts on a BMC; prints one line per step (PASS or FAIL,
the step, a detail) and a closing count. Run by idrac-sim/tests/dmtf/run.sh, inside a network
namespace whose only interface is loopback.

Usage: sushy_check.py URL
"""

import sys

import sushy
import urllib3

SYSTEM = "/redfish/v1/Systems/System.Embedded.1"
CHASSIS = "/redfish/v1/Chassis/System.Embedded.1"
MANAGER = "/redfish/v1/Managers/iDRAC.Embedded.1"


def main(url: str) -> int:
    urllib3.disable_warnings()
    results = []

    def step(name, fn):
        try:
            results.append(("PASS", name, fn()))
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the run
            first = str(e).splitlines()[0][:160] if str(e) else ""
            results.append(("FAIL", name, "%s: %s" % (type(e).__name__, first)))

    root = sushy.Sushy(url, username="root", password="calvin", verify=False)
    step("service root", lambda: root.redfish_version)
    system = root.get_system(SYSTEM)
    step("system power state", lambda: system.power_state)
    step("system boot", lambda: (system.boot.mode, system.boot.enabled))
    step("system processors", lambda: system.processors.summary)
    step("system memory", lambda: system.memory_summary)
    step("system ethernet interfaces", lambda: len(system.ethernet_interfaces.summary))
    step("system storage", lambda: [s.identity for s in system.storage.get_members()])
    step("system simple storage", lambda: [s.identity for s in system.simple_storage.get_members()])
    step("bios attributes", lambda: len(system.bios.attributes))
    step("bios pending", lambda: system.bios.pending_attributes)
    step("boot once from PXE", lambda: system.set_system_boot_options(
        sushy.BootSource.PXE, enabled=sushy.BootSourceOverrideEnabled.ONCE))
    step("chassis", lambda: [c.identity for c in root.get_chassis_collection().get_members()])
    step("chassis power", lambda: root.get_chassis(CHASSIS).power.power_supplies[0].identity)
    step("chassis thermal", lambda: len(root.get_chassis(CHASSIS).thermal.fans))
    manager = root.get_manager(MANAGER)
    step("manager", lambda: (manager.firmware_version, manager.manager_type))
    step("manager ethernet interfaces", lambda: len(manager.ethernet_interfaces.summary))
    step("session service", lambda: root.get_session_service().session_timeout)
    step("event service", lambda: root.get_event_service().service_enabled)
    step("update service", lambda: root.get_update_service().software_inventory is not None)
    oem = manager.get_oem_extension("Dell")
    step("dell: lifecycle controller ready", lambda: oem.lifecycle_service.is_idrac_ready())
    step("dell: unfinished jobs", lambda: oem.job_collection.get_unfinished_jobs())
    step("dell: job service", lambda: oem.job_service.path)
    step("dell: iDRAC reset types", lambda: sorted(
        v.value for v in oem.idrac_card_service.get_allowed_reset_idrac_values()))
    step("dell: export targets", lambda: sorted(v.value for v in oem.get_allowed_export_target_values()))
    step("dell: iDRAC attributes", lambda: len(list(oem.attributes)))
    step("dell: reset the iDRAC", lambda: oem.reset_idrac(wait=False))
    for r in results:
        print("%s\t%s\t%s" % r)
    fails = sum(1 for r in results if r[0] == "FAIL")
    print("sushy steps: passed %d, failed %d" % (len(results) - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
