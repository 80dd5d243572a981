"""OpenStack sushy's generic BIOS interface against an emulated iLO, as Ironic's redfish driver
(its route to iLO 5 and later) uses it: read the attributes, set one for the next reset, reset
the system, wait for POST, and read the outcome. Prints one `step: value` line per step.

Usage: python sushy_bios.py BASE_URL ATTRIBUTE VALUE (credentials in RFTUNE_SIM_USER and
RFTUNE_SIM_PASSWORD).
"""

import os
import sys
import time

import sushy

url, name, value = sys.argv[1:4]
root = sushy.Sushy(url + "/redfish/v1", username=os.environ["RFTUNE_SIM_USER"],
                   password=os.environ["RFTUNE_SIM_PASSWORD"], verify=False)
system = root.get_system_collection().get_members()[0]
bios = system.bios
print("registry:", bios._attribute_registry)
print("attributes:", len(bios.attributes))
print("before:", bios.attributes[name])
bios.set_attribute(name, value)
bios.refresh(force=True)
print("pending:", bios.pending_attributes.get(name))
print("current after set:", bios.attributes[name])
system.reset_system(sushy.RESET_FORCE_RESTART)
deadline = time.time() + 60
while time.time() < deadline:
    time.sleep(0.2)
    try:
        state = root._conn.get(system.path).json().get("Oem", {}).get("Hpe", {}).get("PostState")
    except Exception:  # the host is rebooting
        continue
    if state == "FinishedPost":
        break
bios.refresh(force=True)
print("after reset:", bios.attributes[name])
status = bios.update_status
print("update status:", status.status)
print("messages:", ",".join(m.message_id for m in (status.messages or [])))
