#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rftune developers
# Apache License 2.0 (see the LICENSE of the rftune repository)
"""rftune_facts: a BMC's inventory (identity, firmware, CPUs, DIMMs, pending values, open jobs) as facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rftune_facts
short_description: Read a server's inventory from its BMC with rftune
description:
  - Runs C(rftune inventory --bmc URL -o json) and sets the C(rftune.inventory/v1) document as
    the fact C(rftune_inventory), with identity, BIOS and BMC firmware, power state, CPUs, DIMMs,
    BIOS values pending for the next reboot and jobs that have not finished.
  - Read-only.
version_added: 0.1.0
author:
  - rftune developers (!UNKNOWN)
extends_documentation_fragment:
  - rftune.bios.connection
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
  facts:
    support: full
    description: Sets C(rftune_inventory).
"""

EXAMPLES = r"""
- name: Read the server's inventory from its iDRAC
  rftune.bios.rftune_facts:
    bmc: "https://{{ bmc_address }}"
    fingerprint: "{{ bmc_fingerprint }}"
    password: "{{ vault_bmc_password }}"
  delegate_to: localhost

- name: Show the BIOS version
  ansible.builtin.debug:
    msg: "{{ rftune_inventory.model }} {{ rftune_inventory.service_tag }} runs BIOS {{ rftune_inventory.bios_version }}"
"""

RETURN = r"""
ansible_facts:
  description: The facts set.
  returned: success
  type: complex
  contains:
    rftune_inventory:
      description: The C(rftune.inventory/v1) document.
      returned: success
      type: complex
      contains:
        schema:
          description: C(rftune.inventory/v1).
          type: str
          returned: success
        host:
          description: rftune's name for the host (the URL's C(host:port)).
          type: str
          returned: success
        vendor:
          description: C(Vendor) of the Redfish service root.
          type: str
          returned: success
        model:
          description: The system model, for example C(PowerEdge R7625).
          type: str
          returned: success
        service_tag:
          description: Dell service tag.
          type: str
          returned: success
        bios_version:
          description: Running BIOS version.
          type: str
          returned: success
        bmc_firmware:
          description: BMC firmware version.
          type: str
          returned: success
        power_state:
          description: C(On), C(Off), ...
          type: str
          returned: success
        processors:
          description: CPU summary (C(count), C(model), C(cores), C(threads)).
          type: dict
          returned: success
        memory:
          description: C(total_gib) and the installed C(dimms) (C(id), C(capacity_mib), C(speed_mts), C(device_type)).
          type: dict
          returned: success
        pending_bios:
          description: BIOS values staged for the next reboot.
          type: dict
          returned: success
        open_jobs:
          description: Jobs that have not finished (C(id), C(job_type), C(state), C(message_id), C(message)).
          type: list
          elements: dict
          returned: success
        unread:
          description: Optional parts the BMC did not serve (C(what), C(error)); the rest is what could be read.
          type: list
          elements: dict
          returned: when a part could not be read
stderr:
  description: rftune's standard error.
  returned: failure
  type: str
"""

from ansible_collections.rftune.bios.plugins.module_utils.rftune import (
    Rftune,
    rftune_module,
)

SCHEMA = 'rftune.inventory/v1'


def main():
    module = rftune_module()
    rftune = Rftune(module)
    rc, doc, err = rftune.run(['inventory'], SCHEMA)
    if doc is None or rc != 0:
        rftune.fail_without_document('rftune inventory', rc, err)
    module.exit_json(changed=False, ansible_facts=dict(rftune_inventory=doc))


if __name__ == '__main__':
    main()
