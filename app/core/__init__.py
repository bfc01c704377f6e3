"""The Qt-free heart of Autograd Lens: scenarios, the language, capture and recording."""

from .devices import DeviceInfo, list_devices, resolve_device
from .errors import RecordingTimeout, ScenarioError
from .expr import Limits
from .graph import Edge, Graph, GraphNode, SavedSlot, trace
from .recorder import CallInfo, Recording, probe_slot, record
from .scenario import Call, Scenario, builtin_names, load_builtin, load_scenario, parse_scenario
from .seed import two_losses
from .timeline import Step, StepState, Timeline

__all__ = [
    "Call",
    "CallInfo",
    "DeviceInfo",
    "Edge",
    "Graph",
    "GraphNode",
    "Limits",
    "Recording",
    "RecordingTimeout",
    "SavedSlot",
    "Scenario",
    "ScenarioError",
    "Step",
    "StepState",
    "Timeline",
    "builtin_names",
    "list_devices",
    "load_builtin",
    "load_scenario",
    "parse_scenario",
    "probe_slot",
    "record",
    "resolve_device",
    "trace",
    "two_losses",
]
