"""Stands in for the get-pip.py that ansible-test downloads to bootstrap pip into its sanity
venvs, from a host CI cannot reach: installs pip from the interpreter's bundled ensurepip wheel,
then runs `pip install --upgrade ARGS` against PyPI (without get-pip's own --no-setuptools and
--no-wheel). .ci/run copies it to where ansible-test caches the download."""
import ensurepip
import os
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
# ensurepip sets these for its own pip run; the next pip must read the configuration again.
os.environ.pop('PIP_CONFIG_FILE', None)
os.environ.pop('ENSUREPIP_OPTIONS', None)
args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install', '--quiet', '--upgrade'] + args))
