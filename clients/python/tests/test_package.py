"""The package under test is the installed one: its files, its version, its generated stubs and proto."""

import importlib.metadata
import re
import sys
from pathlib import Path

import denoc
import denoc.v1.dynamics_pb2 as pb
import denoc.v1.dynamics_pb2_grpc as pb_grpc

from conftest import PACKAGE_ROOT, REPO


def test_imported_from_the_installation_not_the_source_tree():
    installed = Path(denoc.__file__).resolve()
    assert PACKAGE_ROOT not in installed.parents, installed
    assert Path(sys.prefix) in installed.parents, (installed, sys.prefix)
    assert Path(pb.__file__).resolve().parent == installed.parent / "v1"


def test_version_is_the_distributions_and_the_projects():
    assert denoc.__version__ == importlib.metadata.version("denoc")
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert denoc.__version__ == re.search(r"project\(denoc VERSION ([0-9.]+)", cmake).group(1)
    assert importlib.metadata.metadata("denoc")["License"] == "Apache-2.0"


def test_the_stubs_and_the_proto_are_shipped_and_are_the_repositorys():
    assert hasattr(pb_grpc, "DynamicsStub") and pb.DESCRIPTOR.package == "denoc.v1"
    shipped = Path(denoc.__file__).parent / "proto" / "denoc" / "v1" / "dynamics.proto"
    assert shipped.read_bytes() == (REPO / "proto" / "denoc" / "v1" / "dynamics.proto").read_bytes()
    stubs = Path(pb.__file__).parent
    assert (stubs / "dynamics_pb2.pyi").is_file()
