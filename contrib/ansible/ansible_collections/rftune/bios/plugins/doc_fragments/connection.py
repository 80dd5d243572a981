# -*- coding: utf-8 -*-
# Copyright: rftune developers
# Apache License 2.0 (see the LICENSE of the rftune repository)
"""The options every rftune module takes: which BMC, how to log in, whether to trust it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  bmc:
    description:
      - URL of the BMC (iDRAC), for example C(https://idrac-r7625.example).
      - A name or address without a scheme, as Dell's collection takes I(idrac_ip), means
        C(https://) it (an IPv6 address in brackets).
      - Passed to rftune as C(--bmc). rftune names the host by the URL's C(host:port).
    type: str
    required: true
    aliases: [idrac_ip]
  username:
    description:
      - Account to log in with. rftune defaults to C(root), the iDRAC factory account.
    type: str
    aliases: [idrac_user]
  password:
    aliases: [idrac_password, idrac_pwd]
    description:
      - Password of I(username).
      - Given to rftune on standard input (C(--password-stdin)), never as an argument.
      - An empty I(password) fails the task (C(password is empty)); it is not read as unset.
      - Without I(password) and I(credentials_file), rftune reads C(RFTUNE_PASSWORD) or
        C(RFTUNE_CREDENTIALS) from the environment the module runs in (the play's or task's
        C(environment)).
    type: str
  credentials_file:
    description:
      - A TOML file with C(username) and C(password), readable only by its owner (mode 0600).
      - Passed to rftune as C(--credentials).
    type: path
  fingerprint:
    description:
      - Trust exactly the BMC certificate with this SHA-256 fingerprint (C(sha256:HEX), colons
        allowed). The usual choice for an iDRAC's self-signed factory certificate.
    type: str
  ca_cert:
    description:
      - Trust only certificates issued by the CA in this PEM file.
    type: path
    aliases: [ca_path]
  insecure:
    description:
      - Do not verify the BMC's certificate at all. Anyone on the path can read and change the
        traffic, credentials included.
    type: bool
    default: false
  validate_certs:
    description:
      - Dell's collection's way to say I(insecure) - C(false) is I(insecure=true); C(true),
        or leaving it unset, verifies as rftune always does.
      - C(true) together with I(insecure=true) fails the task.
    type: bool
  trust_on_first_use:
    description:
      - Record an unknown BMC's certificate fingerprint in rftune's C(known_hosts) on first
        contact and refuse it if it ever changes.
    type: bool
    default: false
  timeout:
    description:
      - Per-request timeout in rftune's duration grammar, for example C(30s) or C(2m).
    type: str
  retry_for:
    description:
      - How long rftune keeps retrying a busy, rebooting or unreachable BMC, for example C(60s);
        C(0s) disables retries.
    type: str
  state_dir:
    description:
      - rftune's directory for snapshots, the audit log, C(known_hosts) and the registry cache,
        instead of C($XDG_STATE_HOME/rftune).
    type: path
  rftune_path:
    description:
      - The rftune executable. By default C(rftune) is looked up on C(PATH).
    type: path
notes:
  - The module runs the rftune binary where the task runs, and rftune reaches the BMC over the
    network; run the task where rftune is installed, usually the controller (delegate it to
    C(localhost)).
requirements:
  - the C(rftune) binary on the host that runs the task
"""
