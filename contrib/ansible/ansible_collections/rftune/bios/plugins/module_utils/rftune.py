# -*- coding: utf-8 -*-
# Copyright: rftune developers
# Apache License 2.0 (see the LICENSE of the rftune repository)
"""Runs the rftune binary for the modules: the shared options, the password on standard input,
and the JSON document rftune prints with C(-o json)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.basic import AnsibleModule

# The aliases are the names Dell's own collection (dellemc.openmanage) gives the same options, so
# its users' variables and habits carry over.
CONNECTION_SPEC = dict(
    bmc=dict(type='str', required=True, aliases=['idrac_ip']),
    username=dict(type='str', aliases=['idrac_user']),
    password=dict(type='str', no_log=True, aliases=['idrac_password', 'idrac_pwd']),
    credentials_file=dict(type='path'),
    fingerprint=dict(type='str'),
    ca_cert=dict(type='path', aliases=['ca_path']),
    insecure=dict(type='bool', default=False),
    validate_certs=dict(type='bool'),
    trust_on_first_use=dict(type='bool', default=False),
    timeout=dict(type='str'),
    retry_for=dict(type='str'),
    state_dir=dict(type='path'),
    rftune_path=dict(type='path'),
)

MUTUALLY_EXCLUSIVE = [
    ['password', 'credentials_file'],
    ['fingerprint', 'ca_cert'],
]

# The documents of C(rftune diff -o json).
DIFF_SCHEMA = 'rftune.diff/v1'

# Per-attribute statuses of a diff that need nothing more (bios-profiles' Status::is_clean).
CLEAN_STATUSES = ('in_sync', 'not_applicable')


def argument_spec(**extra):
    """The shared connection options plus a module's own."""
    spec = dict(CONNECTION_SPEC)
    spec.update(extra)
    return spec


def rftune_module(**options):
    """The AnsibleModule of one of this collection's modules: the connection options plus the
    module's own C(options), check mode supported."""
    return AnsibleModule(
        argument_spec=argument_spec(**options),
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
        supports_check_mode=True,
    )


def bmc_url(address):
    """The BMC's URL: C(address) as given when it has a scheme, else C(https://address), so that
    an C(idrac_ip) as Dell's collection takes it (a name or an address, IPv6 too) works."""
    if '://' in address:
        return address
    if address.count(':') > 1 and not address.startswith('['):
        address = '[%s]' % address
    return 'https://%s' % address


class Rftune(object):
    """One module's use of the rftune binary against one BMC."""

    def __init__(self, module):
        self.module = module
        params = module.params
        if params['validate_certs'] is True and params['insecure']:
            module.fail_json(msg='validate_certs: true contradicts insecure: true')
        # Dell's collection spells "do not verify" validate_certs: false.
        self.insecure = params['insecure'] or params['validate_certs'] is False
        if self.insecure and (params['fingerprint'] or params['ca_cert']):
            module.fail_json(msg='insecure (or validate_certs: false) cannot be combined with fingerprint or ca_cert')
        self.bmc = bmc_url(params['bmc'])
        if params['password'] == '':
            # rftune reads the password from standard input, and an empty one reaches it as no
            # input at all: say what is wrong instead of rftune's "standard input is empty".
            module.fail_json(
                msg='%s: password is empty; give the BMC password, or leave password unset to use '
                    'credentials_file or RFTUNE_PASSWORD / RFTUNE_CREDENTIALS' % self.bmc
            )
        self.binary = params['rftune_path'] or module.get_bin_path('rftune', required=True)

    def argv(self, subcommand):
        """The command line for C(rftune SUBCOMMAND... --bmc URL -o json), without secrets."""
        params = self.module.params
        argv = [self.binary] + list(subcommand) + ['--bmc', self.bmc, '--output', 'json', '--quiet']
        if params['state_dir']:
            argv += ['--state-dir', params['state_dir']]
        if params['username']:
            argv += ['--username', params['username']]
        if params['credentials_file']:
            argv += ['--credentials', params['credentials_file']]
        if params['password'] is not None:
            argv.append('--password-stdin')
        if params['fingerprint']:
            argv += ['--fingerprint', params['fingerprint']]
        if params['ca_cert']:
            argv += ['--ca-cert', params['ca_cert']]
        if self.insecure:
            argv.append('--insecure')
        if params['trust_on_first_use']:
            argv.append('--trust-on-first-use')
        if params['timeout']:
            argv += ['--timeout', params['timeout']]
        if params['retry_for']:
            argv += ['--retry-for', params['retry_for']]
        return argv

    def run(self, subcommand, schema):
        """Runs rftune; returns (exit code, the JSON document or None, stderr).

        The password, when given, is the first line of standard input. A document is returned
        only when stdout parses as JSON carrying C(schema)."""
        password = self.module.params['password']
        rc, out, err = self.module.run_command(self.argv(subcommand), data=password)
        try:
            doc = json.loads(out) if out.strip() else None
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or doc.get('schema') != schema:
            doc = None
        if rc not in (0, 1, 2):
            # Not one of rftune's outcomes (0 done / in sync, 2 drift or not converged, 1 error):
            # stopped by a signal (130 SIGINT, 143 SIGTERM) or killed.
            self.fail_without_document('rftune %s exited %d' % (subcommand[0], rc), rc, err, document=doc)
        return rc, doc, err

    def host_entry(self, subcommand, schema, what=None):
        """Runs rftune; returns (its document, the document's one host entry). Fails the task
        when rftune printed no document (C(what) names the command in the message)."""
        rc, doc, err = self.run(subcommand, schema)
        if doc is None:
            self.fail_without_document(what or 'rftune %s' % subcommand[0], rc, err)
        return doc, self.single_host(doc)

    def diff_entry(self, profile, strict, what='rftune diff'):
        """C(rftune diff --profile PROFILE): (the document, the host's entry). Fails the task when
        the host could not be compared, with rftune's reason and the profile's violations."""
        subcommand = ['diff', '--profile', profile] + (['--strict'] if strict else [])
        doc, entry = self.host_entry(subcommand, DIFF_SCHEMA, what)
        if entry.get('status') == 'error' or entry.get('error'):
            result = dict(entry)
            result.update(schema=doc['schema'], profile=doc.get('profile'), changed=False)
            reasons = [entry.get('error') or 'error'] + list(entry.get('violations') or [])
            result['msg'] = host_message(entry, '; '.join(reasons))
            self.fail_host(result)
        return doc, entry

    def fail_host(self, result):
        """Ends the task of a host rftune could not work on, by its C(error_kind): a BMC that
        could not be reached (C(unreachable)) makes the host unreachable, as Ansible counts a
        host it cannot connect to (the play goes on without it, C(ignore_unreachable) applies);
        every other kind fails the task."""
        if result.get('error_kind') == 'unreachable':
            result['changed'] = False
            self.module.exit_json(unreachable=True, **result)
        self.module.fail_json(**result)

    def fail_without_document(self, what, rc, err, **extra):
        """Fails the task when rftune printed no document (bad options, no password, a single
        host it could not read): rftune's own message, which names the BMC and the cause."""
        reason = error_text(err) or 'rftune exited %d without output' % rc
        if self.names_host(reason):
            msg = '%s: %s' % (what, reason)
        else:
            msg = '%s: %s: %s' % (self.bmc, what, reason)
        self.module.fail_json(msg=msg, host=self.bmc, rc=rc, stderr=err, **extra)

    def names_host(self, text):
        """Whether C(text) names this BMC already (its URL, or the C(host:port) rftune uses)."""
        if self.bmc in text:
            return True
        netloc = self.bmc.split('://', 1)[-1].split('/', 1)[0]
        return bool(netloc) and netloc in text

    def single_host(self, doc):
        """The one entry of a fleet document's C(hosts)."""
        hosts = doc.get('hosts') or []
        if len(hosts) != 1 or not isinstance(hosts[0], dict):
            self.module.fail_json(
                msg='%s: rftune answered for %d hosts, expected 1' % (self.bmc, len(hosts)),
                document=doc,
            )
        return hosts[0]


def error_text(err):
    """The reason in rftune's standard error: its C(error: ) line (with the lines that continue
    it, up to a blank line) and its C(hint: ) lines, prefixes stripped; else the last line."""
    lines = err.splitlines()
    reason = []
    hints = []
    in_error = False
    for line in lines:
        if line.startswith('error: '):
            reason.append(line[len('error: '):].strip())
            in_error = True
        elif line.startswith('hint: '):
            hints.append(line[len('hint: '):].strip())
            in_error = False
        elif in_error and line.strip():
            reason.append(line.strip())
        else:
            in_error = False
    if not reason and not hints:
        rest = [line.strip() for line in lines if line.strip()]
        return rest[-1] if rest else ''
    return ' '.join(reason + ['(hint: %s)' % h for h in hints])


def host_message(entry, text):
    """C(host: text), unless rftune's text already starts with the host's name."""
    host = entry.get('host') or ''
    text = text or ''
    if host and not text.startswith(host + ':'):
        return '%s: %s' % (host, text)
    return text


def attribute_key(change):
    """C(BIOS.Name) or C(iDRAC.Group.Name) for a change of a diff document."""
    if change.get('target') == 'idrac':
        return 'iDRAC.%s.%s' % (change.get('group'), change.get('attribute'))
    return 'BIOS.%s' % change.get('attribute')


def diff_of(changes):
    """Ansible's diff (before = current, after = desired) over the attributes not in sync."""
    before = {}
    after = {}
    for change in changes:
        if change.get('status') in CLEAN_STATUSES:
            continue
        key = attribute_key(change)
        before[key] = change.get('current')
        after[key] = change.get('desired')
    return dict(before=before, after=after)
