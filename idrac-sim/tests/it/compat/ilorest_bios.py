"""HPE's own Redfish library (PyPI's python-ilorest-library, the `redfish` module under HPE's
iLOrest tool) against an emulated iLO, as HPE's documentation drives a BIOS change with it: log
in with a session, tell the iLO generation from the service root, follow the links from the
systems collection to the BIOS and its settings object, PATCH one attribute there, reset the
system, wait for POST to finish, read the value back with the BIOS's account of the POST, and
log out. Prints one `step: value` line per step.

The library builds the logout's URL from the session's `Location` and the base URL, inserting
the port it connected to, and doubles the port on any port but 443 (python-ilorest-library
7.4.0.0, `RestClient.session_location`); the emulator listens on a free port, so the session
is deleted at the path of its `Location`, with the library's own `delete`.

Usage: python ilorest_bios.py BASE_URL ATTRIBUTE VALUE (credentials in RFTUNE_SIM_USER and
RFTUNE_SIM_PASSWORD).
"""

import os
import sys
import time
from urllib.parse import urlparse

import redfish

url, name, value = sys.argv[1:4]
client = redfish.RedfishClient(base_url=url, username=os.environ["RFTUNE_SIM_USER"],
                               password=os.environ["RFTUNE_SIM_PASSWORD"])
client.login(auth="session")
try:
    print("generation:", client.get_gen()[0])
    members = client.get("/redfish/v1/systems/").dict["Members"]
    system = client.get(members[0]["@odata.id"]).dict
    bios_path = system["Bios"]["@odata.id"]
    bios = client.get(bios_path).dict
    print("before:", bios["Attributes"][name])
    settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
    answer = client.patch(settings, {"Attributes": {name: value}})
    print("patch status:", answer.status)
    print("patch message:", answer.dict["error"]["@Message.ExtendedInfo"][0]["MessageId"])
    print("pending:", client.get(settings).dict["Attributes"][name])
    reset = system["Actions"]["#ComputerSystem.Reset"]["target"]
    print("reset status:", client.post(reset, {"ResetType": "ForceRestart"}).status)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.2)
        state = client.get(members[0]["@odata.id"]).dict.get("Oem", {}).get("Hpe", {}).get("PostState")
        if state == "FinishedPost":
            break
    bios = client.get(bios_path).dict
    print("after reset:", bios["Attributes"][name])
    messages = bios["@Redfish.Settings"].get("Messages", [])
    print("messages:", ",".join(m["MessageId"] for m in messages))
finally:
    location = client._session_location
    if location:
        print("logout status:", client.delete(urlparse(location).path).status)
        client._session_location = None
