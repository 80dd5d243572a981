#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rftune developers
# Apache License 2.0 (see the LICENSE of the rftune repository)
"""rftune_apply: converge a BMC's BIOS and iDRAC settings on an rftune profile."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rftune_apply
short_description: Converge a server's BIOS and iDRAC settings on an rftune profile
description:
  - Runs C(rftune apply --bmc URL --profile NAME -o json) and returns the host's entry of the
    C(rftune.apply/v1) document.
  - rftune plans the writes, saves a snapshot, stages every BIOS change in one PATCH, creates
    one BIOS job, reboots once (per I(reboot)), waits for the job and the host, and re-reads
    and diffs. A host already in sync is left alone, with no PATCH and no reboot.
  - C(changed) is true when this run wrote to the BMC (staged BIOS values, set iDRAC values,
    discarded pending work, or rebooted) or converged the host; in check mode, when it would.
    Values an earlier run staged and this run only adopts (I(reboot=none) run again) are not
    a change. A failed run is a change when rftune says it wrote before failing (C(written)),
    e.g. values staged before a BIOS job that never ran.
  - In check mode the module runs C(rftune apply --dry-run); it reports the plan and whether
    the host would change, and writes nothing.
  - With C(--diff) the module first runs C(rftune diff) and shows the desired against the
    current value of every attribute that is not in sync.
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
  reboot:
    description:
      - How to reboot into the BIOS job. C(graceful) asks the OS to shut down and forces the
        power off after I(graceful_timeout); C(none) leaves the job scheduled for the host's
        next reboot, so the host is staged but not converged (not a failure).
    type: str
    choices: [graceful, force, none]
    default: graceful
  graceful_timeout:
    description:
      - How long the OS gets to shut down before power is forced off (rftune default C(10m)).
    type: str
  job_timeout:
    description:
      - How long the BIOS job may take once the host reboots (rftune default C(30m)).
    type: str
  boot_timeout:
    description:
      - How long the host may take to come back after the job (rftune default C(20m)).
    type: str
  replace_pending:
    description:
      - Discard pending BIOS values and delete scheduled BIOS jobs that are in the way. Without
        it, pending work rftune did not stage fails the task.
    type: bool
    default: false
  strict:
    description:
      - Treat attributes the host's BIOS lacks as errors instead of not applicable.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Runs C(rftune apply --dry-run), which plans and writes nothing.
  diff_mode:
    support: full
    description: Shows desired against current values of the attributes not in sync, read before the apply.
"""

EXAMPLES = r"""
- name: Converge a server on the performance profile, rebooting it once if needed
  rftune.bios.rftune_apply:
    bmc: "https://{{ bmc_address }}"
    fingerprint: "{{ bmc_fingerprint }}"
    password: "{{ vault_bmc_password }}"
    profile: performance
  delegate_to: localhost

- name: Stage the hpc profile for the next maintenance reboot
  rftune.bios.rftune_apply:
    bmc: "https://{{ bmc_address }}"
    credentials_file: /etc/rftune/credentials.toml
    trust_on_first_use: true
    profile: hpc
    reboot: none
  delegate_to: localhost
"""

RETURN = r"""
schema:
  description: The document's schema, C(rftune.apply/v1).
  returned: when rftune printed a document
  type: str
  sample: rftune.apply/v1
profile:
  description: The profile applied.
  returned: when rftune printed a document
  type: str
dry_run:
  description: Whether this was a dry run (check mode).
  returned: when rftune printed a document
  type: bool
audit_log:
  description: The audit log of this run, where every step is recorded.
  returned: when rftune printed a document
  type: str
host:
  description: rftune's name for the host (the URL's C(host:port)).
  returned: always
  type: str
outcome:
  description: C(in_sync), C(converged), C(not_converged), C(planned) (check mode), C(error), C(stale) or C(not_started).
  returned: when rftune printed a document
  type: str
  sample: converged
service_tag:
  description: Dell service tag.
  returned: success
  type: str
bios:
  description: BIOS attributes written (or, in check mode, that would be written), unlocks included.
  returned: success
  type: dict
  sample: {"NumaNodesPerSocket": "4", "SysProfile": "Custom"}
idrac:
  description: iDRAC attributes written, by group.
  returned: success
  type: dict
unlocks:
  description: Attributes the plan added so that the others can be written, one line each.
  returned: success
  type: list
  elements: str
choices:
  description: How values were chosen for settings the host's registry decides, by attribute.
  returned: when there are any
  type: dict
adopted:
  description: Pending values staged by an earlier rftune run were adopted instead of staged again.
  returned: success
  type: bool
replaced:
  description: Pending work that was discarded (I(replace_pending)).
  returned: success
  type: str
snapshot:
  description: The snapshot of every BIOS value taken before any change.
  returned: success
  type: str
job:
  description: The BIOS job.
  returned: success
  type: str
rebooted:
  description: Whether rftune rebooted the host.
  returned: success
  type: bool
verify:
  description: >-
    Attributes per status in the diff after the change; for a host that had nothing to change,
    in the diff that found so. Its C(unverified) counts the settings rftune did not check for
    lack of evidence for the host's CPU generation (a Turin host's): C(in_sync) with
    C(unverified) above 0 is not proven in sync.
  returned: success
  type: dict
summary:
  description: rftune's sentence for people.
  returned: success
  type: str
  sample: "3 BIOS values staged in one PATCH; rebooted once (graceful); verified in sync"
error:
  description: Why the host failed, with the URL and the iDRAC MessageId and resolution where there is one.
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
written:
  description: >-
    Whether rftune wrote to the BMC before the host failed (staged BIOS values, set iDRAC
    values, deleted pending work, created a job or rebooted), or sent a write whose effect is
    unknown; C(changed) follows it.
  returned: failure, when rftune printed a document
  type: bool
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

SCHEMA = 'rftune.apply/v1'


def wrote(entry, reboot):
    """Whether the run wrote to the BMC (or, planned, would): C(converged) always did; otherwise
    staging BIOS values rftune did not adopt from an earlier run, any iDRAC value, discarded
    pending work, or a reboot (done, or planned with I(reboot) other than C(none))."""
    outcome = entry.get('outcome')
    if outcome == 'converged':
        return True
    if outcome in ('error', 'not_started', 'stale'):
        # rftune says whether it wrote before the failure (a staged PATCH, a reboot, ...).
        return bool(entry.get('written'))
    if outcome not in ('in_sync', 'not_converged', 'planned'):
        return False
    adopted = bool(entry.get('adopted'))
    bios = bool(entry.get('bios'))
    idrac = any((entry.get('idrac') or {}).values())
    would_reboot = outcome == 'planned' and reboot != 'none' and (bios or adopted)
    return bool(
        (bios and not adopted) or idrac or entry.get('replaced') or entry.get('rebooted') or would_reboot
    )


def main():
    module = rftune_module(
        profile=dict(type='str', required=True),
        reboot=dict(type='str', default='graceful', choices=['graceful', 'force', 'none']),
        graceful_timeout=dict(type='str'),
        job_timeout=dict(type='str'),
        boot_timeout=dict(type='str'),
        replace_pending=dict(type='bool', default=False),
        strict=dict(type='bool', default=False),
    )
    params = module.params
    rftune = Rftune(module)
    diff = None
    if module._diff:
        # Desired against current, from rftune diff, before anything is written.
        entry = rftune.diff_entry(params['profile'], params['strict'], 'rftune diff (for diff mode)')[1]
        diff = diff_of(entry.get('changes') or [])

    subcommand = ['apply', '--profile', params['profile'], '--reboot', params['reboot']]
    for option in ('graceful_timeout', 'job_timeout', 'boot_timeout'):
        if params[option]:
            subcommand += ['--' + option.replace('_', '-'), params[option]]
    if params['replace_pending']:
        subcommand.append('--replace-pending')
    if params['strict']:
        subcommand.append('--strict')
    if module.check_mode:
        subcommand.append('--dry-run')
    doc, entry = rftune.host_entry(subcommand, SCHEMA)

    result = dict(entry)
    result.update(
        schema=doc['schema'],
        profile=doc.get('profile'),
        dry_run=doc.get('dry_run'),
        audit_log=doc.get('audit_log'),
    )
    if diff is not None:
        result['diff'] = diff
    outcome = entry.get('outcome')
    result['changed'] = wrote(entry, params['reboot'])
    if outcome in ('error', 'not_started', 'stale'):
        result['msg'] = '%s (every step is in %s)' % (host_message(entry, entry.get('error')), doc.get('audit_log'))
        rftune.fail_host(result)
    if outcome == 'not_converged' and params['reboot'] != 'none':
        result['msg'] = host_message(entry, 'not converged: %s' % entry.get('summary'))
        module.fail_json(**result)
    if outcome not in ('in_sync', 'converged', 'not_converged', 'planned'):
        result['msg'] = host_message(entry, 'rftune reported outcome %r, which this module does not know' % outcome)
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
