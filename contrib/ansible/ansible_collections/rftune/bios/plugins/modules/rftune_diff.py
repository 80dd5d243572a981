#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rftune developers
# Apache License 2.0 (see the LICENSE of the rftune repository)
"""rftune_diff: compare a BMC's BIOS and iDRAC settings with an rftune profile (read-only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rftune_diff
short_description: Compare a server's BIOS and iDRAC settings with an rftune profile
description:
  - Runs C(rftune diff --bmc URL --profile NAME -o json) and returns the host's entry of the
    C(rftune.diff/v1) document, attribute by attribute (desired, current, pending, status).
  - Read-only; the task never reports C(changed). With C(--diff) it shows the desired against
    the current value of every attribute that is not in sync.
version_added: 0.1.0
author:
  - rftune developers (!UNKNOWN)
extends_documentation_fragment:
  - rftune.bios.connection
options:
  profile:
    description:
      - A shipped profile name (C(rftune profiles list)) or the path of a profile file.
    type: str
    required: true
  strict:
    description:
      - Treat attributes the host's BIOS lacks as errors instead of C(not_applicable).
    type: bool
    default: false
  fail_on_drift:
    description:
      - Fail the task when the host is not in sync, as C(rftune diff) exits 2 on drift or when
        the host is C(unverified).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The module only reads, so check mode changes nothing either.
  diff_mode:
    support: full
    description: Shows desired against current values of the attributes not in sync.
"""

EXAMPLES = r"""
- name: Check a server against the performance profile
  rftune.bios.rftune_diff:
    bmc: "https://{{ bmc_address }}"
    fingerprint: "{{ bmc_fingerprint }}"
    password: "{{ vault_bmc_password }}"
    profile: performance
  delegate_to: localhost
  register: drift

- name: Fail when a server drifted from the hpc profile
  rftune.bios.rftune_diff:
    bmc: "https://{{ bmc_address }}"
    credentials_file: /etc/rftune/credentials.toml
    trust_on_first_use: true
    profile: hpc
    fail_on_drift: true
  delegate_to: localhost
"""

RETURN = r"""
schema:
  description: The document's schema, C(rftune.diff/v1).
  returned: success
  type: str
  sample: rftune.diff/v1
profile:
  description: The profile compared against.
  returned: success
  type: str
  sample: performance
host:
  description: rftune's name for the host (the URL's C(host:port)).
  returned: always
  type: str
  sample: 127.0.0.1:9001
status:
  description: >-
    C(in_sync), C(unverified) (nothing checked differs, but some settings have no evidence for
    the host's CPU generation and were not checked: not proven in sync) or C(drift).
  returned: success
  type: str
  sample: drift
drift:
  description: Whether the host differs from the profile (C(status) is C(drift)).
  returned: success
  type: bool
unverified:
  description: Whether the host is not proven in sync (C(status) is C(unverified)).
  returned: success
  type: bool
service_tag:
  description: Dell service tag.
  returned: when the BMC reports it
  type: str
model:
  description: The system model, for example C(PowerEdge R7625).
  returned: when the BMC reports it
  type: str
bios_version:
  description: Running BIOS version.
  returned: when the BMC reports it
  type: str
changes:
  description: One entry per attribute of the profile, in stable order.
  returned: success
  type: list
  elements: dict
  contains:
    target:
      description: C(bios) or C(idrac).
      type: str
    group:
      description: The iDRAC attribute group (C(iDRAC), C(System), C(LifecycleController)) of an C(idrac) target.
      type: str
      returned: for iDRAC attributes
    attribute:
      description: The attribute name.
      type: str
    desired:
      description: The profile's value.
      type: raw
    current:
      description: The host's value; null when the host has no such attribute.
      type: raw
    pending:
      description: The value staged for the next reboot, if any.
      type: raw
    status:
      description: C(in_sync), C(drift), C(pending), C(pending_conflict), C(not_applicable) or C(forced).
      type: str
    why:
      description: Why the profile wants the value.
      type: str
    source:
      description: The source backing it.
      type: str
    confidence:
      description: How sure the profile is.
      type: str
    note:
      description: What forces the value, why it does not apply or why it cannot be written.
      type: str
    not_applicable:
      description: >-
        For a C(not_applicable) setting, why: C(no_evidence) (no evidence for the host's CPU
        generation; makes the host C(unverified)), C(not_on_host) (the host's registry lacks
        it) or C(excluded) (a generation or host rule leaves it out on purpose).
      type: str
      returned: for not_applicable settings
    choice:
      description: For a value the host decides, what was asked, what was picked and why.
      type: dict
      returned: for settings the host's registry decides
counts:
  description: Attributes per status.
  returned: success
  type: dict
  sample: {"in_sync": 20, "drift": 3, "pending": 0, "pending_conflict": 0, "not_applicable": 1, "forced": 0, "unverified": 0}
lockdown:
  description: System Lockdown is on; the host cannot be changed until it is turned off.
  returned: when true
  type: bool
violations:
  description: Validation findings of the profile against the host's registry, one line each.
  returned: when there are any
  type: list
  elements: str
error:
  description: rftune's reason the host could not be compared, with the URL and the iDRAC MessageId and resolution where there is one.
  returned: failure
  type: str
error_kind:
  description: >-
    What kind of failure C(error) is, for C(when:) conditions: C(unreachable) (the task then
    reports the host unreachable instead of failed), C(credentials), C(tls), C(redfish),
    C(pending_work), C(lockdown), C(profile_not_applicable), C(job_failed), C(timeout),
    C(outcome_unknown), C(unsupported), C(not_started), C(stale), C(locked), C(hook_failed),
    C(not_converged), C(interrupted) or C(other); rftune's README describes each.
  returned: failure, when rftune printed a document
  type: str
  sample: credentials
message_ids:
  description: The MessageIds the BMC answered the failed request with.
  returned: failure, when the BMC gave some
  type: list
  elements: str
  sample: [IDRAC.2.9.SYS415]
stderr:
  description: rftune's standard error, when it printed no document.
  returned: failure
  type: str
"""

from ansible_collections.rftune.bios.plugins.module_utils.rftune import (
    Rftune,
    diff_of,
    host_message,
    rftune_module,
)


def main():
    module = rftune_module(
        profile=dict(type='str', required=True),
        strict=dict(type='bool', default=False),
        fail_on_drift=dict(type='bool', default=False),
    )
    rftune = Rftune(module)
    doc, entry = rftune.diff_entry(module.params['profile'], module.params['strict'])
    result = dict(entry)
    result.update(schema=doc['schema'], profile=doc.get('profile'), changed=False)
    result['drift'] = entry.get('status') == 'drift'
    result['unverified'] = entry.get('status') == 'unverified'
    if module._diff:
        result['diff'] = diff_of(entry.get('changes') or [])
    if (result['drift'] or result['unverified']) and module.params['fail_on_drift']:
        counts = entry.get('counts') or {}
        result['msg'] = host_message(entry, 'not in sync with profile %s (%s)' % (
            doc.get('profile'),
            ', '.join('%s %s' % (n, s) for s, n in sorted(counts.items()) if n and s != 'in_sync'),
        ))
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
