"""The co-simulated RTL is a training device (golden/device.py Device): mypy checks RtlDevice against the protocol
(`_as_device`), and a run's check accepts it. Building one needs no simulator: the host and the backdoor are used
only once it runs."""

from golden import program as P
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.device import Device, check_device
from golden.machine import Machine
from verif.rtl_device import RtlDevice


def _as_device(dev: RtlDevice) -> Device:
    return dev


def test_the_rtl_device_is_a_device():
    golden = Machine(compile_network(load_config("tiny")), 1)
    dev = RtlDevice(None, None, P.params_for(golden.comp), golden)  # no simulator: no host, no backdoor
    assert check_device(_as_device(dev)) is dev
    assert dev.params is not None and dev.sim_cycles == 0
